/**
 * Reads a ZIP archive's central directory without inflating anything: names,
 * methods and the sizes the archive declares. Used to recognise DOCX files and
 * to refuse decompression bombs before any library inflates them.
 */

export interface ZipEntry {
  name: string;
  /** 0 = stored, 8 = deflate. */
  method: number;
  compressedSize: number;
  /** As declared by the directory (a hostile archive may lie; see `inflateZipEntry`). */
  uncompressedSize: number;
  localHeaderOffset: number;
}

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
/** Entries beyond this are not a document anyone wrote; reading stops there. */
export const MAX_ZIP_ENTRIES = 20_000;

/** True when the bytes start with a ZIP local file header (`PK\x03\x04`). */
export function hasZipSignature(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && view(bytes).getUint32(0, true) === LOCAL_SIGNATURE;
}

/** Where the central directory is and how many entries it lists, from the end record(s). */
export interface ZipDirectoryInfo {
  count: number;
  /** Offset and size of the central directory. */
  offset: number;
  size: number;
  /** Where the records after the directory start (the ZIP64 end record, else the end record). */
  directoryEnd: number;
}

/**
 * Finds the end record (and the ZIP64 one when the 16/32-bit fields overflow); null when
 * there is none or it points outside the bytes.
 */
export function readZipEnd(bytes: Uint8Array): ZipDirectoryInfo | null {
  const data = view(bytes);
  const eocd = findEndRecord(data);
  if (eocd < 0) return null;
  // Nothing but the comment after the end record, and no record signature inside it that a
  // reader searching from the end could take for the real one.
  const commentStart = eocd + 22;
  if (commentStart + data.getUint16(eocd + 20, true) !== data.byteLength) return null;
  const comment = Buffer.from(bytes.buffer, bytes.byteOffset + commentStart, data.byteLength - commentStart);
  if (comment.includes("PK\x05\x06", 0, "latin1") || comment.includes("PK\x06\x07", 0, "latin1") || comment.includes("PK\x06\x06", 0, "latin1")) return null;
  let count = data.getUint16(eocd + 10, true);
  let size = data.getUint32(eocd + 12, true);
  let offset = data.getUint32(eocd + 16, true);
  let directoryEnd = eocd;
  const disk = data.getUint16(eocd + 4, true);
  const directoryDisk = data.getUint16(eocd + 6, true);
  const countOnDisk = data.getUint16(eocd + 8, true);
  const zip64 = [disk, directoryDisk, countOnDisk, count].includes(0xffff) || offset === 0xffffffff || size === 0xffffffff;
  if (!zip64 && (disk !== 0 || directoryDisk !== 0 || countOnDisk !== count)) return null; // multi-disk archives are not documents
  if (zip64) {
    if (eocd < 20 || data.getUint32(eocd - 20, true) !== ZIP64_LOCATOR_SIGNATURE) return null;
    const record = Number(data.getBigUint64(eocd - 12, true));
    if (record + 56 > data.byteLength || data.getUint32(record, true) !== ZIP64_EOCD_SIGNATURE) return null;
    // Readers (JSZip among them) expect the locator right after the ZIP64 end record.
    if (record + 12 + Number(data.getBigUint64(record + 4, true)) !== eocd - 20) return null;
    count = Number(data.getBigUint64(record + 32, true));
    size = Number(data.getBigUint64(record + 40, true));
    offset = Number(data.getBigUint64(record + 48, true));
    directoryEnd = record;
  }
  if (offset + size > directoryEnd) return null;
  return { count, offset, size, directoryEnd };
}

/**
 * Lists the entries of a ZIP archive from its central directory.
 * Returns null when the bytes are not a well-formed archive (truncated, no end
 * record, directory out of bounds, more than `maxEntries` entries), or when the
 * directory does not end exactly where the end records begin: readers disagree on
 * such archives (JSZip shifts every offset by the gap), so what is checked here must
 * be what a parser later reads.
 * ZIP64 sizes are read from the extra field when the 32-bit fields overflow.
 */
export function readZipDirectory(bytes: Uint8Array, maxEntries = MAX_ZIP_ENTRIES): ZipEntry[] | null {
  const data = view(bytes);
  const end = readZipEnd(bytes);
  if (end === null || end.count > maxEntries || end.offset + end.size !== end.directoryEnd) return null;
  let offset = end.offset;
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder("utf-8");
  for (let i = 0; i < end.count; i++) {
    if (offset + 46 > data.byteLength || data.getUint32(offset, true) !== CENTRAL_SIGNATURE) return null;
    const nameLength = data.getUint16(offset + 28, true);
    const extraLength = data.getUint16(offset + 30, true);
    const commentLength = data.getUint16(offset + 32, true);
    const next = offset + 46 + nameLength + extraLength + commentLength;
    if (next > data.byteLength) return null;
    const entry: ZipEntry = {
      name: decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength)),
      method: data.getUint16(offset + 10, true),
      compressedSize: data.getUint32(offset + 20, true),
      uncompressedSize: data.getUint32(offset + 24, true),
      localHeaderOffset: data.getUint32(offset + 42, true),
    };
    readZip64Extra(data, offset + 46 + nameLength, extraLength, entry);
    entries.push(entry);
    offset = next;
  }
  // Entries the count leaves out would still be read by parsers that walk the whole directory.
  return offset === end.directoryEnd ? entries : null;
}

/**
 * Where an entry's compressed data starts, from its local header; null when the
 * header is missing or the data runs past the end of the archive.
 */
export function entryDataOffset(bytes: Uint8Array, entry: ZipEntry): number | null {
  const data = view(bytes);
  const at = entry.localHeaderOffset;
  if (at + 30 > data.byteLength || data.getUint32(at, true) !== LOCAL_SIGNATURE) return null;
  const start = at + 30 + data.getUint16(at + 26, true) + data.getUint16(at + 28, true);
  return start + entry.compressedSize <= data.byteLength ? start : null;
}

/**
 * Names from the local file headers found in `bytes`, for when only the start of an
 * archive is at hand (the directory is at the end). Scans for the header signature,
 * so entries written with data descriptors are found too.
 */
export function localEntryNames(bytes: Uint8Array, max = 64): string[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const names: string[] = [];
  for (let at = buffer.indexOf("PK\x03\x04", 0, "latin1"); at !== -1 && at + 30 <= buffer.length && names.length < max; at = buffer.indexOf("PK\x03\x04", at + 4, "latin1")) {
    const length = buffer.readUInt16LE(at + 26);
    if (at + 30 + length <= buffer.length) names.push(buffer.toString("utf8", at + 30, at + 30 + length));
  }
  return names;
}

function findEndRecord(data: DataView): number {
  // The end record is 22 bytes plus a comment of at most 65535 bytes.
  const last = data.byteLength - 22;
  const first = Math.max(0, last - 0xffff);
  for (let at = last; at >= first; at--) {
    if (data.getUint32(at, true) === EOCD_SIGNATURE) return at;
  }
  return -1;
}

/** ZIP64 extended information (header id 1): the 64-bit values, in the order the 32-bit fields overflowed. */
function readZip64Extra(data: DataView, start: number, length: number, entry: ZipEntry): void {
  if (entry.uncompressedSize !== 0xffffffff && entry.compressedSize !== 0xffffffff && entry.localHeaderOffset !== 0xffffffff) return;
  for (let at = start; at + 4 <= start + length; ) {
    const id = data.getUint16(at, true);
    const size = data.getUint16(at + 2, true);
    if (id === 1) {
      let field = at + 4;
      const next = (): number => {
        if (field + 8 > at + 4 + size) return Number.MAX_SAFE_INTEGER;
        const value = Number(data.getBigUint64(field, true));
        field += 8;
        return value;
      };
      if (entry.uncompressedSize === 0xffffffff) entry.uncompressedSize = next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next();
      return;
    }
    at += 4 + size;
  }
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
