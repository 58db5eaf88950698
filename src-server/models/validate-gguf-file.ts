/**
 * A bounded, validating walk over a GGUF file's header, run before anything else reads
 * one. node-llama-cpp's reader trusts every count it reads (an array "of 2^40 elements"
 * in a 50-byte file spins for a minute, reading zeros past the end, then aborts the whole
 * process with a fatal V8 error), and accepts files llama.cpp then refuses to load
 * (an 8-byte header, version 99). This walk checks each claimed count and size against
 * the bytes left in the file and against fixed limits before it loops or allocates, and
 * applies llama.cpp's own checks (`gguf_init_from_reader` in ggml/src/gguf.cpp: version,
 * types, names, shapes, tensor offsets and data within the file). It never keeps values
 * beyond the few it needs, and its errors never quote the file's bytes.
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

/** The file is not a GGUF model llama.cpp could load; the message says why, without quoting the file. */
export class InvalidGgufError extends Error {
  override name = "InvalidGgufError";
}

/**
 * Limits far above real models (a 262k-token vocabulary is ~1M array elements and a few
 * MiB of header; the largest tensor tables a few tens of thousands of entries) and far
 * below what would exhaust a reader's memory.
 */
export const GGUF_LIMITS = {
  /** Bytes of metadata and tensor table together (everything before the tensor data). */
  headerBytes: 64 * 1024 * 1024,
  keys: 65_536,
  keyBytes: 65_535,
  stringBytes: 16 * 1024 * 1024,
  /** Elements of one array, and of all arrays together. */
  arrayElements: 16 * 1024 * 1024,
  tensors: 262_144,
  /** llama.cpp's GGML_MAX_NAME (64, with the terminating zero). */
  tensorNameBytes: 63,
  /** llama.cpp's GGML_MAX_DIMS. */
  dimensions: 4,
} as const;

/** Versions llama.cpp reads (1 is no longer supported). */
const VERSIONS = new Set([2, 3]);
const DEFAULT_ALIGNMENT = 32;
const INT64_MAX = (1n << 63n) - 1n;

/** Value types (gguf_type): bytes of one scalar, 0 for strings; 9 (array) is handled apart. */
const VALUE_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 8: 0, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;
const UINT32 = 4;

/**
 * ggml tensor types as [elements per block, bytes per block], from the llama.cpp that
 * node-llama-cpp 3.22 bundles (`type_traits` in ggml.c, block structs in ggml-common.h).
 * Missing ids (4, 5, 31–33, 36–38) were removed from GGUF; llama.cpp refuses them, and
 * anything past 42.
 */
const GGML_TYPES: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  16: [256, 66], 17: [256, 74], 18: [256, 98], 19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82], 23: [256, 136],
  24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 29: [256, 56], 30: [1, 2],
  34: [256, 54], 35: [256, 66], 39: [32, 17], 40: [64, 36], 41: [128, 18], 42: [64, 18],
};

/** What the walk learned about one file. */
export interface GgufHeaderFacts {
  version: number;
  keyCount: number;
  tensorCount: number;
  /** `general.architecture`, when the file has it. */
  architecture: string | null;
  /** Where the tensor data starts. */
  dataOffset: number;
}

export interface ValidateGgufOptions {
  /** Refuse a symbolic link instead of following it (O_NOFOLLOW), for paths a client named. */
  noFollow?: boolean;
}

const READ_CHUNK = 1024 * 1024;

/** Reads forward through the file in chunks; every read is checked against the bytes left first. */
class Cursor {
  private buffer = Buffer.alloc(0);
  private bufferStart = 0;
  offset = 0;

  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  get left(): number {
    return this.size - this.offset;
  }

  /** True when the next `n` bytes are already in memory. */
  has(n: number): boolean {
    return this.offset >= this.bufferStart && this.offset + n <= this.bufferStart + this.buffer.length;
  }

  /** Brings the next `n` bytes into memory; throws when the file or the header limit ends first. */
  async need(n: number, what: string): Promise<void> {
    if (n > this.left) throw new InvalidGgufError(`the file ends inside ${what} (${n} bytes needed at offset ${this.offset}, ${Math.max(0, this.left)} left)`);
    if (this.offset + n > GGUF_LIMITS.headerBytes) throw new InvalidGgufError(`the header is larger than ${GGUF_LIMITS.headerBytes} bytes`);
    if (this.has(n)) return;
    const length = Math.min(Math.max(n, READ_CHUNK), this.left);
    const buffer = Buffer.allocUnsafe(length);
    for (let filled = 0; filled < length; ) {
      const { bytesRead } = await this.handle.read(buffer, filled, length - filled, this.offset + filled);
      if (bytesRead === 0) throw new InvalidGgufError(`the file ends early (it shrank while being read)`);
      filled += bytesRead;
    }
    this.buffer = buffer;
    this.bufferStart = this.offset;
  }

  async u32(what: string): Promise<number> {
    if (!this.has(4)) await this.need(4, what);
    const value = this.buffer.readUInt32LE(this.offset - this.bufferStart);
    this.offset += 4;
    return value;
  }

  async u64(what: string): Promise<bigint> {
    if (!this.has(8)) await this.need(8, what);
    const value = this.buffer.readBigUInt64LE(this.offset - this.bufferStart);
    this.offset += 8;
    return value;
  }

  async bytes(n: number, what: string): Promise<Buffer> {
    if (!this.has(n)) await this.need(n, what);
    const start = this.offset - this.bufferStart;
    this.offset += n;
    return this.buffer.subarray(start, start + n);
  }

  /** Moves past `n` bytes without reading them. */
  skip(n: number, what: string): void {
    if (n > this.left) throw new InvalidGgufError(`the file ends inside ${what} (${n} bytes claimed at offset ${this.offset}, ${this.left} left)`);
    this.offset += n;
    if (this.offset > GGUF_LIMITS.headerBytes) throw new InvalidGgufError(`the header is larger than ${GGUF_LIMITS.headerBytes} bytes`);
  }

  /** A claimed count or length as a number, refused above `limit` or when `each` bytes apiece cannot fit in what is left. */
  count(claimed: bigint, limit: number, each: number, what: string): number {
    if (claimed > BigInt(limit)) throw new InvalidGgufError(`${what} claims ${claimed}, more than the limit of ${limit}`);
    const n = Number(claimed);
    if (n * each > this.left) throw new InvalidGgufError(`${what} claims ${n} (at least ${n * each} bytes), but only ${this.left} bytes are left in the file`);
    return n;
  }

  /** Skips `count` strings; synchronous while they are in memory, since vocabularies hold hundreds of thousands. */
  async skipStrings(count: number, what: string): Promise<void> {
    for (let i = 0; i < count; i++) {
      if (!this.has(8)) await this.need(8, `item ${i} of ${what}`);
      const at = this.offset - this.bufferStart;
      const low = this.buffer.readUInt32LE(at);
      const high = this.buffer.readUInt32LE(at + 4);
      this.offset += 8;
      if (high !== 0 || low > GGUF_LIMITS.stringBytes) throw new InvalidGgufError(`item ${i} of ${what} claims a string longer than the limit of ${GGUF_LIMITS.stringBytes} bytes`);
      this.skip(low, `item ${i} of ${what}`);
    }
  }

  /** A string's length, checked, then its bytes skipped (or returned when `keep`). */
  async string(what: string, limit: number, keep: true): Promise<Buffer>;
  async string(what: string, limit: number, keep?: false): Promise<null>;
  async string(what: string, limit: number, keep = false): Promise<Buffer | null> {
    const length = this.count(await this.u64(`the length of ${what}`), limit, 1, `the length of ${what}`);
    if (keep) return this.bytes(length, what);
    this.skip(length, what);
    return null;
  }
}

/**
 * Walks one GGUF file's header and checks its tensor table against the file's size.
 * Throws `InvalidGgufError` for anything llama.cpp would refuse, any claim the file
 * cannot hold, or a path that is not a regular file (missing, a directory, a device or
 * pipe, a symbolic link with `noFollow`).
 */
export async function validateGgufFile(file: string, options: ValidateGgufOptions = {}): Promise<GgufHeaderFacts> {
  // O_NONBLOCK: opening a named pipe must not wait for a writer.
  const flags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (options.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0);
  let handle: FileHandle;
  try {
    handle = await open(file, flags);
  } catch (error) {
    throw new InvalidGgufError(`cannot open the file (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new InvalidGgufError("not a regular file");
    return await walk(new Cursor(handle, stats.size));
  } finally {
    await handle.close();
  }
}

async function walk(c: Cursor): Promise<GgufHeaderFacts> {
  if (c.size < 4 || !(await c.bytes(4, "the magic")).equals(Buffer.from("GGUF"))) throw new InvalidGgufError("not a GGUF file (no GGUF magic)");
  const version = await c.u32("the version");
  if (!VERSIONS.has(version)) throw new InvalidGgufError(version === 1 ? "GGUF version 1 is no longer supported" : `unsupported GGUF version ${version}`);
  const tensorClaim = await c.u64("the tensor count");
  const keyClaim = await c.u64("the key count");
  // A key takes at least 13 bytes (length, one character, type, a one-byte value); a tensor 24.
  const keyCount = c.count(keyClaim, GGUF_LIMITS.keys, 13, "the key count");
  const tensorCount = c.count(tensorClaim, GGUF_LIMITS.tensors, 24, "the tensor count");

  const keys = new Set<string>();
  let alignment = DEFAULT_ALIGNMENT;
  let architecture: string | null = null;
  let arrayElements = 0;
  for (let i = 0; i < keyCount; i++) {
    // Keys and tensors are named by position in errors: the file's own text is never quoted.
    const where = `metadata entry ${i}`;
    const key = (await c.string(`the key of ${where}`, GGUF_LIMITS.keyBytes, true)).toString("utf8");
    if (key.length === 0) throw new InvalidGgufError(`${where} has an empty key`);
    if (keys.has(key)) throw new InvalidGgufError(`${where} repeats an earlier key`);
    keys.add(key);
    const type = await c.u32(`the type of ${where}`);
    if (type === ARRAY) {
      const itemType = await c.u32(`the item type of ${where}`);
      if (VALUE_BYTES[itemType] === undefined) throw new InvalidGgufError(`${where} is an array with an invalid item type ${itemType}`);
      const itemBytes = VALUE_BYTES[itemType];
      const length = c.count(await c.u64(`the length of ${where}`), GGUF_LIMITS.arrayElements, itemType === STRING ? 8 : itemBytes, `the array length of ${where}`);
      arrayElements += length;
      if (arrayElements > GGUF_LIMITS.arrayElements) throw new InvalidGgufError(`the arrays hold more than ${GGUF_LIMITS.arrayElements} elements together`);
      if (itemType !== STRING) c.skip(length * itemBytes, `the array of ${where}`);
      else await c.skipStrings(length, `the array of ${where}`);
    } else if (type === STRING) {
      const value = await c.string(`the value of ${where}`, GGUF_LIMITS.stringBytes, true);
      if (key === "general.architecture") architecture = value.toString("utf8");
    } else if (VALUE_BYTES[type] !== undefined) {
      if (key === "general.alignment" && type === UINT32) alignment = await c.u32("general.alignment");
      else c.skip(VALUE_BYTES[type], `the value of ${where}`);
    } else {
      throw new InvalidGgufError(`${where} has an invalid type ${type}`);
    }
    if (key === "general.alignment" && type !== UINT32) throw new InvalidGgufError("general.alignment must be a uint32");
  }
  if (alignment === 0 || (alignment & (alignment - 1)) !== 0) throw new InvalidGgufError(`the alignment ${alignment} is not a power of 2`);

  const names = new Set<string>();
  const tensors: { where: string; offset: bigint; bytes: bigint }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const where = `tensor ${i}`;
    const name = (await c.string(`the name of ${where}`, GGUF_LIMITS.tensorNameBytes, true)).toString("latin1");
    if (names.has(name)) throw new InvalidGgufError(`${where} repeats an earlier tensor's name`);
    names.add(name);
    const dimensionCount = await c.u32(`the dimension count of ${where}`);
    if (dimensionCount > GGUF_LIMITS.dimensions) throw new InvalidGgufError(`${where} claims ${dimensionCount} dimensions (at most ${GGUF_LIMITS.dimensions})`);
    const shape = [1n, 1n, 1n, 1n];
    for (let d = 0; d < dimensionCount; d++) {
      shape[d] = await c.u64(`the shape of ${where}`);
      if (shape[d]! > INT64_MAX) throw new InvalidGgufError(`${where} has a negative dimension`);
    }
    const elements = shape.reduce((a, b) => a * b, 1n);
    if (elements >= INT64_MAX) throw new InvalidGgufError(`${where} has too many elements`);
    const ggmlType = await c.u32(`the type of ${where}`);
    const traits = GGML_TYPES[ggmlType];
    if (!traits) throw new InvalidGgufError(`${where} has an invalid ggml type ${ggmlType}`);
    const [block, blockBytes] = traits;
    if (shape[0]! % BigInt(block) !== 0n) throw new InvalidGgufError(`${where} has rows that are not whole blocks of its type`);
    tensors.push({ where, offset: await c.u64(`the offset of ${where}`), bytes: (elements / BigInt(block)) * BigInt(blockBytes) });
  }

  // llama.cpp lays tensors out in order, each padded to the alignment, from the aligned end of the header.
  const dataOffset = tensorCount > 0 ? Math.ceil(c.offset / alignment) * alignment : c.offset;
  const room = BigInt(c.size) - BigInt(dataOffset);
  let expected = 0n;
  for (const tensor of tensors) {
    if (tensor.offset !== expected) throw new InvalidGgufError(`${tensor.where} is at data offset ${tensor.offset}, expected ${expected}`);
    if (tensor.offset + tensor.bytes > room) throw new InvalidGgufError(`the data of ${tensor.where} lies beyond the end of the file (the file is truncated)`);
    const a = BigInt(alignment);
    expected += ((tensor.bytes + a - 1n) / a) * a;
  }
  return { version, keyCount, tensorCount, architecture, dataOffset };
}

/** Mirrors node-llama-cpp's `resolveSplitGgufParts`: `x-00002-of-00003.gguf` is read with its sibling parts. */
const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/;

/** The files node-llama-cpp (and llama.cpp) read for `file`: itself, or every part of a split model. */
export function ggufParts(file: string): string[] {
  const match = SPLIT_PART.exec(file);
  if (!match) return [file];
  const part = Number(match[1]);
  const parts = Number(match[2]);
  if (part === 0 || parts === 0 || part > parts) return [file];
  const stem = file.slice(0, file.length - match[0].length);
  return Array.from({ length: parts }, (_, i) => `${stem}-${String(i + 1).padStart(5, "0")}-of-${String(parts).padStart(5, "0")}.gguf`);
}

/**
 * Validates every file of a model (each part of a split one) and that together they are a
 * model: an architecture in the first, at least one tensor. Throws `InvalidGgufError`.
 */
export async function validateGgufModel(file: string, options: ValidateGgufOptions = {}): Promise<GgufHeaderFacts[]> {
  const facts: GgufHeaderFacts[] = [];
  const parts = ggufParts(file);
  for (const [i, part] of parts.entries()) {
    try {
      facts.push(await validateGgufFile(part, options));
    } catch (error) {
      if (error instanceof InvalidGgufError && parts.length > 1) throw new InvalidGgufError(`part ${i + 1} of ${parts.length}: ${error.message}`);
      throw error;
    }
  }
  if (!facts[0]!.architecture) throw new InvalidGgufError("no general.architecture: not a model llama.cpp can load");
  if (facts.every((f) => f.tensorCount === 0)) throw new InvalidGgufError("no tensors: not a model llama.cpp can load");
  return facts;
}
