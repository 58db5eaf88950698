/**
 * Vets a compound file ([MS-CFB], the container of Outlook MSG and the legacy Office
 * formats) before a reader walks it. Readers follow sector chains and the directory's
 * sibling and child links as the file states them: a chain or link that loops makes them
 * loop forever, a storage nested thousands deep makes them recurse until the stack runs
 * out, a stream that claims gigabytes makes them allocate it. Here every chain is followed
 * once with each sector counted (a sector used twice is refused, so the whole walk is linear
 * in the file's size), every directory entry is reached at most once, streams must fit in
 * the sectors their chains really have, and the deepest storage nesting is measured.
 */
import { ParseError } from "./types.js";

export interface CompoundFileShape {
  /** Directory entries reached from the root (storages and streams). */
  entries: number;
  /** Deepest nesting of storages below the root (a stream directly in the root is at 0). */
  maxStorageDepth: number;
}

/** Most directory entries accepted (an MSG with 2,048 attachments has some 30,000). */
export const MAX_COMPOUND_ENTRIES = 200_000;

const SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const END_OF_CHAIN = 0xfffffffe;
const FREE = 0xffffffff;
const NO_STREAM = 0xffffffff;
const HEADER_DIFAT_ENTRIES = 109;

/**
 * Checks the compound file's structure and measures it.
 * @throws ParseError `corrupt_document` (not a compound file, or chains and links that are
 *   broken, loop or overlap), `document_too_large` (more than `MAX_COMPOUND_ENTRIES` entries).
 */
export function inspectCompoundFile(bytes: Uint8Array, what = "file"): CompoundFileShape {
  const corrupt = (why: string): ParseError => new ParseError("corrupt_document", `The ${what} is damaged: ${why}.`);
  if (bytes.length < 512 || !SIGNATURE.every((b, i) => bytes[i] === b)) throw new ParseError("corrupt_document", `The ${what} is not a compound file (no OLE2 signature).`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (offset: number) => view.getUint32(offset, true);
  const sectorShift = view.getUint16(0x1e, true);
  if (sectorShift !== 9 && sectorShift !== 12) throw corrupt(`a sector size of 2^${sectorShift} bytes`);
  const sectorSize = 1 << sectorShift;
  const miniSectorSize = 1 << view.getUint16(0x20, true);
  const miniCutoff = u32(0x38);
  // Sector n starts at (n + 1) × the sector size (the header takes the first sector's place).
  const sectorCount = Math.max(0, Math.ceil((bytes.length - sectorSize) / sectorSize));
  const sectorOffset = (sector: number) => (sector + 1) * sectorSize;
  const inFile = (sector: number) => sector < sectorCount && sectorOffset(sector) + 4 <= bytes.length;

  // The FAT's own sectors: 109 listed in the header, the rest in the DIFAT chain.
  const fatSectors: number[] = [];
  const fatCount = u32(0x2c);
  if (fatCount > sectorCount) throw corrupt("it declares more FAT sectors than it has");
  for (let i = 0; i < HEADER_DIFAT_ENTRIES && fatSectors.length < fatCount; i++) fatSectors.push(u32(0x4c + 4 * i));
  const perDifat = sectorSize / 4 - 1;
  for (let sector = u32(0x44), hops = 0; fatSectors.length < fatCount && sector !== END_OF_CHAIN && sector !== FREE; hops++) {
    if (!inFile(sector) || hops > sectorCount) throw corrupt("its DIFAT chain is broken");
    for (let i = 0; i < perDifat && fatSectors.length < fatCount; i++) fatSectors.push(u32(sectorOffset(sector) + 4 * i));
    sector = u32(sectorOffset(sector) + 4 * perDifat);
  }
  if (fatSectors.some((s) => !inFile(s))) throw corrupt("a FAT sector lies outside the file");
  const fatEntries = fatSectors.length * (sectorSize / 4);
  const fat = (sector: number) => (sector < fatEntries ? u32(sectorOffset(fatSectors[Math.floor(sector / (sectorSize / 4))]!) + 4 * (sector % (sectorSize / 4))) : END_OF_CHAIN);

  /** Follows a chain; each sector may belong to one chain only (`used`). */
  const used = new Uint8Array(sectorCount);
  const chain = (start: number, name: string): number[] => {
    const sectors: number[] = [];
    for (let sector = start; sector !== END_OF_CHAIN; sector = fat(sector)) {
      if (!inFile(sector)) throw corrupt(`the chain of ${name} leaves the file`);
      if (used[sector]) throw corrupt(`the chain of ${name} loops or overlaps another`);
      used[sector] = 1;
      sectors.push(sector);
    }
    return sectors;
  };

  // The directory: 128-byte entries in the directory chain.
  const directory = chain(u32(0x30), "the directory");
  const entryCount = directory.length * (sectorSize / 128);
  if (entryCount === 0) throw corrupt("it has no directory");
  const entryOffset = (index: number) => sectorOffset(directory[Math.floor(index / (sectorSize / 128))]!) + 128 * (index % (sectorSize / 128));
  const entry = (index: number) => {
    const at = entryOffset(index);
    return { type: bytes[at + 0x42]!, left: u32(at + 0x44), right: u32(at + 0x48), child: u32(at + 0x4c), start: u32(at + 0x74), size: u32(at + 0x78) + 0x100000000 * (sectorShift === 12 ? u32(at + 0x7c) : 0) };
  };
  const root = entry(0);
  if (root.type !== 5) throw corrupt("its first directory entry is not the root");

  // The mini stream (the root's chain) and the mini FAT that chains its small sectors.
  const miniStream = root.start === END_OF_CHAIN || root.size === 0 ? [] : chain(root.start, "the mini stream");
  if (root.size > miniStream.length * sectorSize) throw corrupt("the mini stream is shorter than it claims");
  const miniFat = u32(0x40) === 0 ? [] : chain(u32(0x3c), "the mini FAT");
  const miniCount = Math.floor(root.size / miniSectorSize);
  const miniUsed = new Uint8Array(miniCount);
  const miniNext = (sector: number) => {
    const perSector = sectorSize / 4;
    const fatSector = miniFat[Math.floor(sector / perSector)];
    return fatSector === undefined ? END_OF_CHAIN : u32(sectorOffset(fatSector) + 4 * (sector % perSector));
  };

  /** A stream's chain must hold its size, in big or mini sectors; each sector used once. */
  const checkStream = (start: number, size: number, name: string): void => {
    if (size === 0) return;
    if (size > bytes.length) throw corrupt(`a stream claims ${size.toLocaleString("en")} bytes, more than the file holds`);
    if (size >= miniCutoff) {
      if (chain(start, name).length * sectorSize < size) throw corrupt(`a stream is shorter than it claims`);
      return;
    }
    let sectors = 0;
    for (let sector = start; sector !== END_OF_CHAIN; sector = miniNext(sector)) {
      if (sector >= miniCount) throw corrupt("a small stream's chain leaves the mini stream");
      if (miniUsed[sector]) throw corrupt("a small stream's chain loops or overlaps another");
      miniUsed[sector] = 1;
      sectors++;
    }
    if (sectors * miniSectorSize < size) throw corrupt("a small stream is shorter than it claims");
  };

  // Every entry reachable from the root, each once: siblings (a red-black tree) and children.
  const seen = new Uint8Array(entryCount);
  seen[0] = 1;
  const stack: [index: number, depth: number][] = root.child === NO_STREAM ? [] : [[root.child, 0]];
  let entries = 0;
  let maxStorageDepth = 0;
  while (stack.length > 0) {
    const [index, depth] = stack.pop()!;
    if (index >= entryCount) throw corrupt("a directory link points past the directory");
    if (seen[index]) throw corrupt("its directory links loop");
    seen[index] = 1;
    if (++entries > MAX_COMPOUND_ENTRIES) throw new ParseError("document_too_large", `The ${what} has more than ${MAX_COMPOUND_ENTRIES.toLocaleString("en")} parts.`);
    const e = entry(index);
    if (e.type === 2) checkStream(e.start, e.size, "a stream");
    else if (e.type !== 1) throw corrupt("a directory entry of an unknown kind is linked in");
    if (e.left !== NO_STREAM) stack.push([e.left, depth]);
    if (e.right !== NO_STREAM) stack.push([e.right, depth]);
    if (e.type === 1) {
      maxStorageDepth = Math.max(maxStorageDepth, depth + 1);
      if (e.child !== NO_STREAM) stack.push([e.child, depth + 1]);
    }
  }
  return { entries, maxStorageDepth };
}
