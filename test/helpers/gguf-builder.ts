/**
 * Builds GGUF files byte by byte, sound or hostile, for tests of the header checks
 * (the layout of ggml/docs/gguf.md: magic, version, counts, key–values, tensor table,
 * aligned data).
 */

export const GGUF_TYPE = { uint8: 0, uint32: 4, float32: 6, string: 8, array: 9, uint64: 10 } as const;

export const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

export const u64 = (n: number | bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

/** A GGUF string: its length as a uint64, then its bytes. */
export const str = (s: string): Buffer => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);

/** Magic, version and the two counts, as claimed (they need not be true). */
export const header = (version: number, tensors: number | bigint, keys: number | bigint): Buffer => Buffer.concat([Buffer.from("GGUF"), u32(version), u64(tensors), u64(keys)]);

export const kvString = (key: string, value: string): Buffer => Buffer.concat([str(key), u32(GGUF_TYPE.string), str(value)]);
export const kvU32 = (key: string, value: number): Buffer => Buffer.concat([str(key), u32(GGUF_TYPE.uint32), u32(value)]);

/** An array key's head: item type and claimed length; the items follow (or do not). */
export const kvArrayHead = (key: string, itemType: number, length: number | bigint): Buffer => Buffer.concat([str(key), u32(GGUF_TYPE.array), u32(itemType), u64(length)]);

/** One tensor table entry. */
export const tensorInfo = (name: string, shape: (number | bigint)[], ggmlType: number, offset: number | bigint): Buffer =>
  Buffer.concat([str(name), u32(shape.length), ...shape.map((d) => u64(d)), u32(ggmlType), u64(offset)]);

/**
 * A small GGUF that passes every structural check: a `llama` architecture and two F32
 * tensors (8 and 4 elements) laid out as llama.cpp expects. `truncate` drops bytes from the end.
 */
export function soundGguf(options: { truncate?: number; secondOffset?: number } = {}): Buffer {
  const head = Buffer.concat([
    header(3, 2, 2),
    kvString("general.architecture", "llama"),
    kvU32("general.alignment", 32),
    tensorInfo("a.weight", [8], 0, 0),
    tensorInfo("b.weight", [4], 0, options.secondOffset ?? 32),
  ]);
  const padded = Buffer.concat([head, Buffer.alloc((32 - (head.length % 32)) % 32)]);
  const data = Buffer.alloc(32 + 16, 1);
  const file = Buffer.concat([padded, data]);
  return file.subarray(0, file.length - (options.truncate ?? 0));
}
