/**
 * Refuses PDF decompression bombs before pdf.js sees the file. pdf.js inflates
 * streams into typed arrays, which live outside the V8 heap and so outside the
 * parse worker's `resourceLimits`: a 2 MB PDF whose content stream inflates to
 * gigabytes would grow the whole process. Every Flate-compressed stream is
 * inflated here once, with a hard cap on its output, and the output is dropped.
 */
import { constants, inflateRawSync } from "node:zlib";
import { ParseError } from "./types.js";

/** Largest single stream accepted, in bytes once inflated. */
export const MAX_PDF_STREAM_BYTES = 128 * 1024 * 1024;
/** Largest total of all Flate streams accepted, in bytes once inflated. */
export const MAX_PDF_INFLATED_BYTES = 768 * 1024 * 1024;

/** Deflate cannot expand data more than about 1032 times: an upper bound for streams that fail midway. */
const MAX_DEFLATE_RATIO = 1032;
/** How far before the `stream` keyword its dictionary is looked for. */
const DICTIONARY_WINDOW = 4096;

/**
 * Checks every `FlateDecode` stream (including `[/FlateDecode /FlateDecode]` chains)
 * against the limits, inflating the way pdf.js does (zlib header skipped, checksum
 * ignored, truncated data accepted). A stream that stops with a data error counts
 * as much as its compressed size could have produced before the error. Encrypted
 * files are skipped: their streams cannot be inflated without the key.
 * @throws ParseError `document_too_large` when a stream or the total would inflate beyond the limits.
 */
export function inspectPdfStreams(bytes: Uint8Array): void {
  const pdf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (pdf.indexOf("/Encrypt", 0, "latin1") !== -1) return;
  let total = 0;
  let at = pdf.indexOf("stream", 0, "latin1");
  while (at !== -1) {
    if (at >= 3 && pdf.toString("latin1", at - 3, at) === "end") {
      at = pdf.indexOf("stream", at + 6, "latin1");
      continue;
    }
    let start = at + 6;
    if (pdf[start] === 0x0d) start++;
    if (pdf[start] === 0x0a) start++;
    const end = pdf.indexOf("endstream", start, "latin1");
    const layers = leadingFlateFilters(dictionaryBefore(pdf, at));
    if (layers > 0) {
      total += inflatedSize(pdf.subarray(start, end === -1 ? pdf.length : end), layers, Math.min(MAX_PDF_STREAM_BYTES, MAX_PDF_INFLATED_BYTES - total));
    }
    at = end === -1 ? -1 : pdf.indexOf("stream", end + 9, "latin1");
  }
}

/** The text between the object header (`n 0 obj`) and the `stream` keyword. */
function dictionaryBefore(pdf: Buffer, at: number): string {
  const window = pdf.toString("latin1", Math.max(0, at - DICTIONARY_WINDOW), at);
  const header = window.lastIndexOf("obj");
  return header === -1 ? window : window.slice(header);
}

/** How many FlateDecode filters the stream starts with (0 when its first filter is another one). */
function leadingFlateFilters(dictionary: string): number {
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dictionary)?.[1];
  if (!filter) return 0;
  const names = filter.match(/\/[A-Za-z0-9]+/g) ?? [];
  let count = 0;
  while (count < names.length && (names[count] === "/FlateDecode" || names[count] === "/Fl")) count++;
  return count;
}

/** Inflated size of `data` through `layers` inflations; throws when it would pass `cap`. */
function inflatedSize(data: Uint8Array, layers: number, cap: number): number {
  let current: Uint8Array = data;
  for (let layer = 0; layer < layers; layer++) {
    try {
      current = inflateRawSync(current.subarray(2), { maxOutputLength: Math.max(1, cap), finishFlush: constants.Z_SYNC_FLUSH });
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
        throw new ParseError(
          "document_too_large",
          `The PDF holds compressed streams that expand beyond ${Math.round(MAX_PDF_STREAM_BYTES / 1024 ** 2)} MB each ` +
            `or ${Math.round(MAX_PDF_INFLATED_BYTES / 1024 ** 2)} MB in all; it was refused as a possible decompression bomb.`,
        );
      }
      return layer === 0 ? Math.min(cap, current.length * MAX_DEFLATE_RATIO) : cap;
    }
  }
  return current.length;
}
