/**
 * Vets a DOCX archive before mammoth touches it: the ZIP directory must be
 * readable and list `word/document.xml`, the parts mammoth may read must declare
 * sizes within limits (a zip bomb inflates a few kilobytes into gigabytes), and
 * each part must really inflate to no more than it declares (a bomb may lie).
 */
import { inflateRawSync } from "node:zlib";
import { entryDataOffset, readZipDirectory, type ZipEntry } from "./read-zip-directory.js";
import { ParseError } from "./types.js";

/** Largest single part (e.g. `word/document.xml`) accepted, in bytes once inflated. */
export const MAX_DOCX_PART_BYTES = 128 * 1024 * 1024;
/** Largest total of the parts mammoth may read, in bytes once inflated. */
export const MAX_DOCX_TOTAL_BYTES = 256 * 1024 * 1024;

export interface DocxInspection {
  /** `dc:title` from `docProps/core.xml`, if set. */
  title: string | null;
}

/**
 * Checks a DOCX archive and reads its title.
 * @throws ParseError `corrupt_document` (not a readable DOCX) or `document_too_large` (a part expands beyond the limits).
 */
export function inspectDocxArchive(bytes: Uint8Array): DocxInspection {
  const entries = readZipDirectory(bytes);
  if (entries === null) throw new ParseError("corrupt_document", "The DOCX file is damaged: its ZIP directory cannot be read.");
  if (!entries.some((e) => e.name === "word/document.xml")) throw new ParseError("corrupt_document", "The file is a ZIP archive but not a Word document (no word/document.xml).");
  // Images and embedded objects are never read (images are not converted), so only the XML parts count.
  const parts = entries.filter((e) => !e.name.endsWith("/") && !/^word\/(?:media|embeddings)\//.test(e.name));
  let total = 0;
  for (const part of parts) {
    total += part.uncompressedSize;
    if (part.uncompressedSize > MAX_DOCX_PART_BYTES || total > MAX_DOCX_TOTAL_BYTES) {
      throw new ParseError(
        "document_too_large",
        `The DOCX file would expand to more than ${megabytes(Math.min(MAX_DOCX_TOTAL_BYTES, total))} (${part.name}: ${megabytes(part.uncompressedSize)}); ` +
          `the limit is ${megabytes(MAX_DOCX_PART_BYTES)} per part and ${megabytes(MAX_DOCX_TOTAL_BYTES)} in all.`,
      );
    }
  }
  let title: string | null = null;
  for (const part of parts) {
    const content = inflateEntry(bytes, part);
    if (part.name === "docProps/core.xml") title = coreTitle(content);
  }
  return { title };
}

/** Inflates one entry, refusing output beyond its declared size. */
function inflateEntry(bytes: Uint8Array, entry: ZipEntry): Uint8Array {
  const start = entryDataOffset(bytes, entry);
  if (start === null) throw new ParseError("corrupt_document", `The DOCX file is damaged: ${entry.name} is truncated.`);
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return data;
  if (entry.method !== 8) throw new ParseError("corrupt_document", `The DOCX file uses an unsupported compression method for ${entry.name}.`);
  try {
    return inflateRawSync(data, { maxOutputLength: Math.max(1, entry.uncompressedSize) });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new ParseError("document_too_large", `The DOCX file is a decompression bomb: ${entry.name} expands beyond the ${megabytes(entry.uncompressedSize)} it declares.`);
    }
    throw new ParseError("corrupt_document", `The DOCX file is damaged: ${entry.name} cannot be decompressed.`);
  }
}

function coreTitle(xml: Uint8Array): string | null {
  const text = new TextDecoder().decode(xml.subarray(0, 64 * 1024));
  const raw = /<dc:title>([^<]{1,500})<\/dc:title>/.exec(text)?.[1];
  if (!raw) return null;
  return raw.replace(/&(lt|gt|amp|quot|apos);/g, (_, name: string) => ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" })[name] ?? "").trim() || null;
}

function megabytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  return bytes >= 1024 ** 2 ? `${Math.ceil(bytes / 1024 ** 2)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
