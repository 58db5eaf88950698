/**
 * Vets a DOCX archive before mammoth touches it. mammoth follows the package's
 * relationships, which may name any entry as the main document (`word/media/doc.xml`
 * as well as `word/document.xml`), so every entry is checked, not only the usual parts:
 * the directory must be readable and unambiguous, list at most `MAX_DOCX_ENTRIES` entries,
 * declare sizes and compression ratios within limits (a zip bomb inflates a megabyte into
 * gigabytes), and each entry must really inflate to no more than it declares (a bomb may
 * lie). The real sizes are counted while inflating in small pieces, nothing is kept.
 */
import { createInflateRaw } from "node:zlib";
import { checkDeclaredSizes, entryData, inflatedSize, megabytes, readArchiveDirectory, type ArchiveLimits } from "./office-archive.js";
import { ParseError } from "./types.js";

/**
 * Largest entry accepted, in bytes once inflated. A long book's `word/document.xml` is a few
 * MB; mammoth needs some 40 times an entry's size in heap, so larger ones could not be
 * parsed within any reasonable parse memory anyway.
 */
export const MAX_DOCX_ENTRY_BYTES = 32 * 1024 * 1024;
/** Largest total of all entries, images included, in bytes once inflated. */
export const MAX_DOCX_TOTAL_BYTES = 256 * 1024 * 1024;
/** Most entries accepted (a document with hundreds of images has a few hundred). */
export const MAX_DOCX_ENTRIES = 10_000;
/**
 * Highest compression ratio accepted for an entry that inflates beyond `RATIO_CHECK_BYTES`.
 * Word's XML compresses 5–20 times, photos barely; deflate's ceiling is about 1032.
 */
export const MAX_DOCX_RATIO = 200;
const LIMITS: ArchiveLimits = { maxEntries: MAX_DOCX_ENTRIES, maxEntryBytes: MAX_DOCX_ENTRY_BYTES, maxTotalBytes: MAX_DOCX_TOTAL_BYTES, maxRatio: MAX_DOCX_RATIO };
const LABEL = "DOCX file";

export interface DocxInspection {
  /** `dc:title` from `docProps/core.xml`, if set. */
  title: string | null;
}

/**
 * Checks a DOCX archive and reads its title.
 * @throws ParseError `corrupt_document` (not a readable DOCX) or `document_too_large`
 *   (too many entries, or an entry or the whole expands beyond the limits).
 */
export async function inspectDocxArchive(bytes: Uint8Array): Promise<DocxInspection> {
  const entries = readArchiveDirectory(bytes, LABEL, LIMITS);
  if (!entries.some((e) => e.name === "word/document.xml")) throw new ParseError("corrupt_document", "The file is a ZIP archive but not a Word document (no word/document.xml).");
  checkDeclaredSizes(entries, LABEL, LIMITS);
  let title: string | null = null;
  for (const entry of entries) {
    const data = entryData(bytes, entry, LABEL);
    const size = await inflatedSize(data, entry, LABEL);
    if (size > Math.max(entry.uncompressedSize, entry.method === 0 ? entry.compressedSize : 0)) {
      throw new ParseError("document_too_large", `The DOCX file is a decompression bomb: ${entry.name} expands beyond the ${megabytes(entry.uncompressedSize)} it declares.`);
    }
    if (entry.name === "docProps/core.xml") title = coreTitle(entry.method === 0 ? data : await inflateHead(data));
  }
  return { title };
}

/** The first `max` bytes an entry inflates to (the title sits at the start of `docProps/core.xml`). */
function inflateHead(data: Uint8Array, max = 64 * 1024): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const inflater = createInflateRaw();
    const done = (): void => resolve(Buffer.concat(chunks).subarray(0, max));
    inflater.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= max) {
        inflater.destroy();
        done();
      }
    });
    inflater.on("end", done);
    inflater.on("error", reject);
    inflater.end(data);
  });
}

function coreTitle(xml: Uint8Array): string | null {
  const text = new TextDecoder().decode(xml.subarray(0, 64 * 1024));
  const raw = /<dc:title>([^<]{1,500})<\/dc:title>/.exec(text)?.[1];
  if (!raw) return null;
  return raw.replace(/&(lt|gt|amp|quot|apos);/g, (_, name: string) => ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" })[name] ?? "").trim() || null;
}
