/**
 * Bounded reading of the ZIP packages office and e-book formats are made of (PPTX, XLSX,
 * ODS, ODT, EPUB; the DOCX inspector shares the checks). Before anything inflates, the
 * directory must be readable and unambiguous, list at most `maxEntries` entries, and
 * declare sizes and compression ratios within limits (a zip bomb inflates a megabyte into
 * gigabytes). While an entry inflates, its real size is counted and reading stops as soon
 * as it passes what the entry declared (a bomb may lie about its size).
 *
 * The parts themselves are XML, read as a stream of events (`office-xml.ts`) straight from
 * the inflater, so a sheet of a million cells is never a tree, nor even a string, in memory.
 */
import { posix } from "node:path";
import { TextDecoder } from "node:util";
import { createInflateRaw } from "node:zlib";
import { XmlReader, type XmlHandlers } from "./office-xml.js";
import { entryDataOffset, readZipDirectory, readZipEnd, type ZipEntry } from "./read-zip-directory.js";
import { ParseError } from "./types.js";

export interface ArchiveLimits {
  /** Most entries accepted. */
  maxEntries: number;
  /** Largest entry accepted, in bytes once inflated. */
  maxEntryBytes: number;
  /** Largest total of all entries, in bytes once inflated. */
  maxTotalBytes: number;
  /** Highest compression ratio accepted for an entry that inflates beyond 4 MiB. */
  maxRatio: number;
}

/**
 * Limits for office packages. Sheets and OpenDocument `content.xml` are streamed, so an
 * entry may be larger than mammoth's DOCX limit; what a part turns into is bounded by the
 * parsers (rows, cells, characters). Office XML compresses 5–20 times, a sheet of repeated
 * values perhaps 100; deflate's ceiling is about 1032.
 */
export const OFFICE_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 256 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 200,
};

/** Entries below this size are never refused for their ratio (a page of spaces compresses 1000:1). */
const RATIO_CHECK_BYTES = 4 * 1024 * 1024;
/** Parts read whole into memory (everything but the streamed ones) stop at this size. */
export const MAX_WHOLE_PART_BYTES = 16 * 1024 * 1024;

/**
 * A vetted ZIP package: its directory checked at `open`, each entry inflated with caps when read.
 * `label` names the file in messages ("The PowerPoint presentation is damaged: …").
 */
export class OfficeArchive {
  readonly #byName = new Map<string, ZipEntry>();
  readonly #byLowerName = new Map<string, ZipEntry>();

  private constructor(
    private readonly bytes: Uint8Array,
    readonly label: string,
    private readonly limits: ArchiveLimits,
    entries: ZipEntry[],
  ) {
    for (const entry of entries) {
      this.#byName.set(entry.name, entry);
      this.#byLowerName.set(entry.name.toLowerCase(), entry);
    }
  }

  /**
   * Reads and checks the directory; nothing is inflated.
   * @throws ParseError `corrupt_document` (no readable directory, a compression method other
   *   than stored or deflate) or `document_too_large` (too many entries, declared sizes or
   *   ratios beyond the limits).
   */
  static open(bytes: Uint8Array, label: string, limits: ArchiveLimits = OFFICE_ARCHIVE_LIMITS): OfficeArchive {
    const entries = readArchiveDirectory(bytes, label, limits);
    checkDeclaredSizes(entries, label, limits);
    return new OfficeArchive(bytes, label, limits, entries);
  }

  /** Entry names in directory order. */
  get names(): string[] {
    return [...this.#byName.keys()];
  }

  /** Whether the package has an entry of this name (exact, else ignoring case as OPC part names do). */
  has(name: string): boolean {
    return this.#entry(name) !== undefined;
  }

  /**
   * An entry's inflated bytes, whole.
   * @throws ParseError `corrupt_document` when it is missing or damaged, `document_too_large` when it
   *   inflates beyond `maxBytes` (default `MAX_WHOLE_PART_BYTES`) or beyond what it declared.
   */
  async read(name: string, maxBytes = MAX_WHOLE_PART_BYTES): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const chunk of this.chunks(name, maxBytes)) parts.push(chunk);
    return Buffer.concat(parts);
  }

  /** An entry as text (UTF-8, or UTF-16 with a byte-order mark). */
  async text(name: string, maxBytes = MAX_WHOLE_PART_BYTES): Promise<string> {
    const bytes = await this.read(name, maxBytes);
    return decoderFor(bytes).decode(bytes);
  }

  /**
   * An entry's inflated bytes in pieces of at most 64 KiB, each dropped once the caller moves on.
   * Stops (throws) as soon as the count passes `maxBytes` or the size the entry declared.
   */
  async *chunks(name: string, maxBytes = this.limits.maxEntryBytes): AsyncGenerator<Buffer> {
    const entry = this.#entry(name);
    if (!entry) throw new ParseError("corrupt_document", `The ${this.label} is damaged: it has no ${name}.`);
    const data = entryData(this.bytes, entry, this.label);
    if (entry.method === 0) {
      if (data.length > maxBytes) throw tooLarge(this.label, entry.name, maxBytes);
      for (let at = 0; at < data.length; at += 64 * 1024) yield Buffer.from(data.buffer, data.byteOffset + at, Math.min(64 * 1024, data.length - at));
      return;
    }
    const declared = entry.uncompressedSize;
    const inflater = createInflateRaw({ chunkSize: 64 * 1024 });
    inflater.end(data);
    let size = 0;
    try {
      for await (const chunk of inflater as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > declared) throw bomb(this.label, entry);
        if (size > maxBytes) throw tooLarge(this.label, entry.name, maxBytes);
        yield chunk;
      }
    } catch (error) {
      if (error instanceof ParseError) throw error;
      throw new ParseError("corrupt_document", `The ${this.label} is damaged: ${entry.name} cannot be decompressed.`);
    } finally {
      inflater.destroy();
    }
  }

  /**
   * Streams an XML entry through `handlers` (see `XmlHandlers`), never holding more than a
   * piece of it. Malformed XML is `corrupt_document`; nesting too deep is `document_too_complex`;
   * a DOCTYPE declaring entities is refused.
   */
  async readXml(name: string, handlers: XmlHandlers, maxBytes?: number): Promise<void> {
    const reader = new XmlReader(handlers, `${this.label} (${name})`);
    let decoder: TextDecoder | null = null;
    for await (const chunk of this.chunks(name, maxBytes)) {
      decoder ??= decoderFor(chunk);
      reader.write(decoder.decode(chunk, { stream: true }));
    }
    if (decoder) reader.write(decoder.decode());
    reader.close();
  }

  /** The entry `name` names, matched exactly first, then without regard to case. */
  #entry(name: string): ZipEntry | undefined {
    return this.#byName.get(name) ?? this.#byLowerName.get(name.toLowerCase());
  }
}

/** A package path from a relationship or manifest target: relative to `from`'s folder, or absolute; null for external targets. */
export function resolvePart(from: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, mailto:, file: …
  let decoded = target.split("#")[0]!;
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    // not percent-encoded after all
  }
  const joined = decoded.startsWith("/") ? decoded : posix.join(posix.dirname(from), decoded);
  const normal = posix.normalize(joined).replace(/^\/+/, "");
  return normal.startsWith("..") || normal === "." ? null : normal;
}

/**
 * An OPC relationships part (`ppt/_rels/presentation.xml.rels`) for `part`: id → target part
 * path and type (the type's last path segment: `slide`, `notesSlide`, `worksheet`).
 */
export async function readRelationships(archive: OfficeArchive, part: string): Promise<Map<string, { target: string; type: string }>> {
  const relsName = posix.join(posix.dirname(part), "_rels", `${posix.basename(part)}.rels`);
  const relationships = new Map<string, { target: string; type: string }>();
  if (!archive.has(relsName)) return relationships;
  await archive.readXml(relsName, {
    open(name, attributes) {
      if (name !== "Relationship" || attributes.TargetMode === "External") return;
      const target = attributes.Target ? resolvePart(part, attributes.Target) : null;
      if (attributes.Id && target) relationships.set(attributes.Id, { target, type: (attributes.Type ?? "").split("/").at(-1) ?? "" });
    },
  });
  return relationships;
}

/** `dc:title` of a metadata part (OOXML `docProps/core.xml`, OpenDocument `meta.xml`), if set. */
export async function readDcTitle(archive: OfficeArchive, part: string): Promise<string | null> {
  if (!archive.has(part)) return null;
  let title: string | null = null;
  let inTitle = false;
  let text = "";
  await archive.readXml(part, {
    open: (name) => void (inTitle = name === "title" && title === null),
    text: (t) => void (inTitle && (text += t)),
    close(name) {
      if (name === "title" && inTitle) title = text.replace(/\s+/g, " ").trim() || null;
      inTitle = false;
    },
  });
  return title;
}

function decoderFor(head: Uint8Array): TextDecoder {
  if (head[0] === 0xff && head[1] === 0xfe) return new TextDecoder("utf-16le");
  if (head[0] === 0xfe && head[1] === 0xff) return new TextDecoder("utf-16be");
  return new TextDecoder("utf-8");
}

/**
 * The archive's entries, or the reason it cannot be read.
 * @throws ParseError `document_too_large` (more than `limits.maxEntries`), `corrupt_document` (no readable directory).
 */
export function readArchiveDirectory(bytes: Uint8Array, label: string, limits: Pick<ArchiveLimits, "maxEntries">): ZipEntry[] {
  const end = readZipEnd(bytes);
  if (end && end.count > limits.maxEntries) {
    throw new ParseError("document_too_large", `The ${label} holds ${end.count.toLocaleString("en")} entries; the limit is ${limits.maxEntries.toLocaleString("en")}.`);
  }
  const entries = readZipDirectory(bytes, limits.maxEntries);
  if (entries === null) throw new ParseError("corrupt_document", `The ${label} is damaged: its ZIP directory cannot be read.`);
  return entries;
}

/**
 * Refuses an archive whose directory already admits to being too big: an entry or the total
 * beyond the limits, or an entry compressed more than `maxRatio` times.
 */
export function checkDeclaredSizes(entries: ZipEntry[], label: string, limits: ArchiveLimits): void {
  let total = 0;
  for (const entry of entries) {
    if (entry.method !== 0 && entry.method !== 8) throw new ParseError("corrupt_document", `The ${label} uses an unsupported compression method for ${entry.name}.`);
    // A stored entry is read as its compressed bytes, whatever it declares.
    const size = Math.max(entry.uncompressedSize, entry.method === 0 ? entry.compressedSize : 0);
    total += size;
    if (size > limits.maxEntryBytes || total > limits.maxTotalBytes) {
      throw new ParseError(
        "document_too_large",
        `The ${label} would expand to more than ${megabytes(total)} (${entry.name}: ${megabytes(size)}); ` +
          `the limit is ${megabytes(limits.maxEntryBytes)} per entry and ${megabytes(limits.maxTotalBytes)} in all.`,
      );
    }
    if (entry.method === 8 && size > RATIO_CHECK_BYTES && size > entry.compressedSize * limits.maxRatio) {
      throw new ParseError(
        "document_too_large",
        `The ${label} looks like a decompression bomb: ${entry.name} expands ${Math.round(size / Math.max(1, entry.compressedSize))} times (${megabytes(size)}); ` +
          `the limit is ${limits.maxRatio} times.`,
      );
    }
  }
}

/** An entry's compressed bytes. @throws ParseError `corrupt_document` when its header or data is missing. */
export function entryData(bytes: Uint8Array, entry: ZipEntry, label: string): Uint8Array {
  const start = entryDataOffset(bytes, entry);
  if (start === null) throw new ParseError("corrupt_document", `The ${label} is damaged: ${entry.name} is truncated.`);
  return bytes.subarray(start, start + entry.compressedSize);
}

/**
 * How many bytes an entry really inflates to, counted in 64 KiB pieces that are dropped at
 * once; stops as soon as the count passes what the entry declared (the caller compares).
 */
export function inflatedSize(data: Uint8Array, entry: ZipEntry, label: string): Promise<number> {
  if (entry.method === 0) return Promise.resolve(data.length);
  const limit = entry.uncompressedSize;
  return new Promise((resolve, reject) => {
    const inflater = createInflateRaw({ chunkSize: 64 * 1024 });
    let size = 0;
    inflater.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        inflater.destroy();
        resolve(size);
      }
    });
    inflater.on("end", () => resolve(size));
    inflater.on("error", () => reject(new ParseError("corrupt_document", `The ${label} is damaged: ${entry.name} cannot be decompressed.`)));
    inflater.end(data);
  });
}

function bomb(label: string, entry: ZipEntry): ParseError {
  return new ParseError("document_too_large", `The ${label} is a decompression bomb: ${entry.name} expands beyond the ${megabytes(entry.uncompressedSize)} it declares.`);
}

function tooLarge(label: string, name: string, maxBytes: number): ParseError {
  return new ParseError("document_too_large", `The ${label} is too large to read: ${name} expands to more than ${megabytes(maxBytes)}.`);
}

/** Sizes as people read them ("1.1 GB", "33 MB", "4 KB"). */
export function megabytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  return bytes >= 1024 ** 2 ? `${Math.ceil(bytes / 1024 ** 2)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
