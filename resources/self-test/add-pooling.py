# Writes a copy of a GGUF with <arch>.pooling_type set (1 = mean), everything else unchanged.
import sys
import gguf
src, dst = sys.argv[1], sys.argv[2]
reader = gguf.GGUFReader(src)
arch = bytes(reader.fields["general.architecture"].parts[-1]).decode()
writer = gguf.GGUFWriter(dst, arch)
for name, field in reader.fields.items():
    if name.startswith("GGUF.") or name == "general.architecture":
        continue
    vtype = field.types[0]
    if vtype == gguf.GGUFValueType.STRING:
        writer.add_string(name, bytes(field.parts[-1]).decode())
    elif vtype == gguf.GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == gguf.GGUFValueType.STRING:
            writer.add_array(name, [bytes(field.parts[i]).decode(errors="surrogateescape") for i in field.data])
        else:
            writer.add_array(name, [field.parts[i].tolist()[0] for i in field.data])
    else:
        writer.add_key_value(name, field.parts[-1].tolist()[0], vtype)
writer.add_uint32(f"{arch}.pooling_type", 1)
for t in reader.tensors:
    writer.add_tensor(t.name, t.data, raw_shape=list(reversed([int(x) for x in t.shape])), raw_dtype=t.tensor_type)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
