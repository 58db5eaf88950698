/**
 * Refuses PDF decompression bombs before pdf.js sees the file. pdf.js inflates
 * streams into typed arrays, which live outside the V8 heap and so outside the
 * parse worker's `resourceLimits`: a 2 MB PDF whose content stream inflates to
 * gigabytes would grow the whole process. Every Flate-compressed stream pdf.js may
 * inflate is inflated here once, counted in small pieces that are dropped at once,
 * against a cap per stream and a cap in all. Streams of files encrypted with an empty
 * user password (pdf.js opens those) are decrypted first.
 *
 * Images are never read for text, so their streams are not inflated here; in the copy
 * handed to pdf.js their filters are renamed to ones pdf.js does not know (same length,
 * offsets unchanged), so an image stream named as a page's content cannot smuggle a
 * bomb past the caps either: pdf.js reads it undecoded.
 */
import { constants, createInflateRaw, inflateRawSync } from "node:zlib";
import { OutputCapExceeded, ascii85Decode, asciiHexDecode, lzwDecode, runLengthDecode } from "./pdf-filters.js";
import { objectText, pdfEncryption, type StreamDecryptor } from "./pdf-standard-security.js";
import { ParseError } from "./types.js";

/** Largest single stream accepted, in bytes once inflated (a page's content is rarely 1 MB). */
export const MAX_PDF_STREAM_BYTES = 32 * 1024 * 1024;
/** Largest total of the Flate streams pdf.js may inflate (contents, forms, fonts), in bytes once inflated. */
export const MAX_PDF_INFLATED_BYTES = 160 * 1024 * 1024;
/**
 * Largest image drawn when a page is rendered for OCR, in pixels (an A4 page scanned at 600 DPI
 * is 35 million). pdf.js decodes an image whole, four bytes a pixel, outside the worker's heap.
 */
export const MAX_PDF_IMAGE_PIXELS = 64 * 1024 * 1024;

/** Deflate cannot expand data more than about 1032 times: an upper bound for streams that fail midway. */
const MAX_DEFLATE_RATIO = 1032;
/** How far before the `stream` keyword its dictionary is looked for. */
const DICTIONARY_WINDOW = 4096;
/** Streams whose worst case (compressed size × 1032) stays under this are inflated in one go. */
const SMALL_STREAM_BYTES = 4 * 1024 * 1024;

interface PdfStream {
  /** Object number and generation, from the `n g obj` header (null when not found). */
  object: [number, number] | null;
  dictionary: string;
  /** Where the dictionary starts in the file. */
  dictionaryStart: number;
  start: number;
  end: number;
}

/** Filters that expand their input (or unwrap data for one that does), and their abbreviations. */
const DECODERS: Record<string, string> = {
  FlateDecode: "FlateDecode",
  Fl: "FlateDecode",
  LZWDecode: "LZWDecode",
  LZW: "LZWDecode",
  RunLengthDecode: "RunLengthDecode",
  RL: "RunLengthDecode",
  ASCIIHexDecode: "ASCIIHexDecode",
  AHx: "ASCIIHexDecode",
  ASCII85Decode: "ASCII85Decode",
  A85: "ASCII85Decode",
};
const EXPANDING = new Set(["FlateDecode", "LZWDecode", "RunLengthDecode"]);

/**
 * Checks every stream whose filters expand data (Flate, LZW, RunLength, also behind ASCII
 * encodings and in chains) against the limits, decoding the way pdf.js does (zlib header
 * skipped, checksum ignored, truncated data accepted). A Flate stream that stops with a
 * data error counts as much as its compressed size could have produced (pdf.js reads on
 * past errors zlib stops at). Returns the copy of the bytes pdf.js should read.
 * @throws ParseError `document_too_large` when a stream or the total would expand beyond the limits;
 *   `encrypted_document` when the file is encrypted in a way that cannot be checked.
 */
export async function inspectPdfStreams(bytes: Uint8Array, options: { keepImages?: boolean } = {}): Promise<Uint8Array> {
  const pdf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const copy = new Uint8Array(bytes);
  const encryption = pdfEncryption(pdf);
  if (encryption.kind === "password") return copy; // pdf.js asks for the password and fails the file
  if (encryption.kind === "unsupported") {
    throw new ParseError("encrypted_document", `The PDF is encrypted in a way that cannot be checked (${encryption.reason}); remove the protection and upload it again.`);
  }
  const decrypt: StreamDecryptor | null = encryption.kind === "empty-password" ? encryption.decrypt : null;
  let total = 0;
  for (const stream of streamsOf(pdf)) {
    const filters = filtersOf(pdf, stream.dictionary);
    const image = /\/Subtype\s*\/Image\b/.test(stream.dictionary);
    if (image && options.keepImages) {
      // Rendering decodes images: each is bounded by its pixels, a JPEG also by the size in
      // its own header, and its compressed data by what those pixels can hold (an image
      // stream a page names as its content is read in full, whatever the image says).
      const pixels = checkImageSize(pdf, stream, filters, decrypt);
      if (!filters.some((f) => EXPANDING.has(f))) continue;
      let data: Uint8Array = pdf.subarray(stream.start, stream.end);
      if (decrypt && stream.object) data = decrypt(stream.object[0], stream.object[1], data);
      await decodedSize(data, filters, stream.dictionary, Math.min(MAX_PDF_IMAGE_PIXELS, pixels) * 4 + 64 * 1024);
      continue;
    }
    if (!filters.some((f) => EXPANDING.has(f))) continue;
    if (!decrypt && image && disableFilters(copy, stream)) continue;
    let data: Uint8Array = pdf.subarray(stream.start, stream.end);
    // Cross-reference streams are never encrypted, nor is metadata when the file says so.
    const plain = /\/Type\s*\/XRef\b/.test(stream.dictionary) || (encryption.kind === "empty-password" && !encryption.encryptsMetadata && /\/Type\s*\/Metadata\b/.test(stream.dictionary));
    if (decrypt && !plain) {
      if (!stream.object) throw new ParseError("encrypted_document", "The PDF is encrypted and a stream's object cannot be identified; remove the protection and upload it again.");
      data = decrypt(stream.object[0], stream.object[1], data);
    }
    total += await decodedSize(data, filters, stream.dictionary, Math.min(MAX_PDF_STREAM_BYTES, MAX_PDF_INFLATED_BYTES - total));
  }
  return copy;
}

/**
 * Refuses an image too large to decode: its declared width × height, and for a JPEG the frame
 * size in its own header (pdf.js's decoder believes the header, not the dictionary).
 * @throws ParseError `image_too_large`.
 */
function checkImageSize(pdf: Buffer, stream: PdfStream, filters: string[], decrypt: StreamDecryptor | null): number {
  const width = integerValue(pdf, /\/(?:Width|W)\s+(\d+)(?:\s+(\d+)\s+R)?/.exec(stream.dictionary));
  const height = integerValue(pdf, /\/(?:Height|H)\s+(\d+)(?:\s+(\d+)\s+R)?/.exec(stream.dictionary));
  const sizes: [number, number][] = [[width ?? Number.POSITIVE_INFINITY, height ?? Number.POSITIVE_INFINITY]];
  if (filters.at(-1) === "DCTDecode" && filters.length === 1) {
    let data: Uint8Array = pdf.subarray(stream.start, stream.end);
    if (decrypt && stream.object) data = decrypt(stream.object[0], stream.object[1], data);
    const frame = jpegFrameSize(data);
    if (frame) sizes.push(frame);
  }
  for (const [w, h] of sizes) {
    if (w * h > MAX_PDF_IMAGE_PIXELS) {
      const shown = Number.isFinite(w * h) ? `${w} × ${h} pixels` : "an undeclared size";
      throw new ParseError("image_too_large", `The PDF holds an image of ${shown}; images above ${Math.round(MAX_PDF_IMAGE_PIXELS / 1024 ** 2)} million pixels are not read.`);
    }
  }
  return Math.max(...sizes.map(([w, h]) => w * h));
}

/** A baseline or progressive JPEG's frame size (the first SOF marker), or null when none is found. */
export function jpegFrameSize(data: Uint8Array): [width: number, height: number] | null {
  if (data[0] !== 0xff || data[1] !== 0xd8) return null;
  let at = 2;
  while (at + 9 < data.length) {
    if (data[at] !== 0xff) return null;
    const marker = data[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = (data[at + 2]! << 8) | data[at + 3]!;
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return [(data[at + 7]! << 8) | data[at + 8]!, (data[at + 5]! << 8) | data[at + 6]!];
    }
    at += 2 + length;
  }
  return null;
}

/** Every `stream … endstream` body, with the dictionary and object header before it. */
function* streamsOf(pdf: Buffer): Generator<PdfStream> {
  let at = pdf.indexOf("stream", 0, "latin1");
  while (at !== -1) {
    if (at >= 3 && pdf.toString("latin1", at - 3, at) === "end") {
      at = pdf.indexOf("stream", at + 6, "latin1");
      continue;
    }
    let start = at + 6;
    if (pdf[start] === 0x0d) start++;
    if (pdf[start] === 0x0a) start++;
    const windowStart = Math.max(0, at - DICTIONARY_WINDOW);
    const window = pdf.toString("latin1", windowStart, at);
    let header = window.lastIndexOf("obj");
    if (header >= 3 && window.slice(header - 3, header) === "end") header = -1;
    const numbers = header === -1 ? null : /(\d+)\s+(\d+)\s+$/.exec(window.slice(Math.max(0, header - 24), header));
    const dictionaryAt = header === -1 ? 0 : header + 3;
    const dictionary = window.slice(dictionaryAt);
    const end = streamEnd(pdf, dictionary, start);
    yield { object: numbers ? [Number(numbers[1]), Number(numbers[2])] : null, dictionary, dictionaryStart: windowStart + dictionaryAt, start, end };
    const next = pdf.indexOf("endstream", start, "latin1");
    at = next === -1 ? -1 : pdf.indexOf("stream", next + 9, "latin1");
  }
}

/**
 * Where the data ends: pdf.js trusts `/Length` when `endstream` follows it and else
 * looks for the first `endstream`, so the further of the two is taken (compressed data
 * may hold the bytes `endstream` itself).
 */
function streamEnd(pdf: Buffer, dictionary: string, start: number): number {
  const keyword = pdf.indexOf("endstream", start, "latin1");
  const length = integerValue(pdf, /\/Length\s+(\d+)(?:\s+(\d+)\s+R)?/.exec(dictionary));
  const declared = length === null ? -1 : Math.min(pdf.length, start + length);
  return Math.max(keyword === -1 ? pdf.length : keyword, declared);
}

/** A direct integer, or the integer an `n g R` reference points at. */
function integerValue(pdf: Buffer, match: RegExpExecArray | null): number | null {
  if (!match) return null;
  if (match[2] === undefined) return Number(match[1]);
  const text = objectText(pdf, Number(match[1]), Number(match[2]));
  const value = text ? /obj\s*(\d+)/.exec(text)?.[1] : undefined;
  return value === undefined ? null : Number(value);
}

/** The stream's filters in order (names without the slash, abbreviations expanded); an indirect `/Filter` is resolved. */
function filtersOf(pdf: Buffer, dictionary: string): string[] {
  const direct = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dictionary)?.[1];
  let value = direct;
  const reference = direct ? null : /\/Filter\s+(\d+)\s+(\d+)\s+R/.exec(dictionary);
  if (reference) value = /obj\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(objectText(pdf, Number(reference[1]), Number(reference[2])) ?? "")?.[1] ?? "/Unresolved";
  return (value?.match(/\/[A-Za-z0-9]+/g) ?? []).map((name) => DECODERS[name.slice(1)] ?? name.slice(1));
}

/**
 * Renames the filters of an image stream in the copy (`/FlateDecode` → `/XlateDecode`, same
 * length): pdf.js leaves data with unknown filters as it is, so the image is never expanded,
 * even if a page names it as its content. False when the filters are not written in the
 * dictionary itself (they are then checked like any stream's).
 */
function disableFilters(copy: Uint8Array, stream: PdfStream): boolean {
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(stream.dictionary);
  if (!filter) return false;
  const base = stream.dictionaryStart + filter.index + filter[0].length - filter[1]!.length;
  for (const name of filter[1]!.matchAll(/\/([A-Za-z0-9]+)/g)) copy[base + name.index + 1] = 0x58; // "X"
  return true;
}

/** What the stream's filters expand `data` to (image codecs and unknown filters end the chain: their output is not read as text). */
async function decodedSize(data: Uint8Array, filters: string[], dictionary: string, cap: number): Promise<number> {
  let current = data;
  for (let i = 0; i < filters.length; i++) {
    const filter = filters[i]!;
    const last = i === filters.length - 1 || DECODERS[filters[i + 1]!] === undefined;
    try {
      switch (filter) {
        case "FlateDecode":
          if (last) return await inflatedSize(current, cap);
          current = inflateCapped(current, cap);
          break;
        case "LZWDecode":
          current = lzwDecode(current, cap, /\/EarlyChange\s+0/.test(dictionary) ? 0 : 1);
          break;
        case "RunLengthDecode":
          current = runLengthDecode(current, cap);
          break;
        case "ASCIIHexDecode":
          current = asciiHexDecode(current);
          break;
        case "ASCII85Decode":
          current = ascii85Decode(current);
          break;
        default:
          return current.length;
      }
    } catch (error) {
      if (error instanceof OutputCapExceeded) throw tooLarge();
      throw error;
    }
  }
  return current.length;
}

function tooLarge(): ParseError {
  return new ParseError(
    "document_too_large",
    `The PDF holds compressed streams that expand beyond ${Math.round(MAX_PDF_STREAM_BYTES / 1024 ** 2)} MB each ` +
      `or ${Math.round(MAX_PDF_INFLATED_BYTES / 1024 ** 2)} MB in all; it was refused as a possible decompression bomb.`,
  );
}

/** Inflates a Flate layer that another filter reads next (at most `cap` bytes, so kept in memory). */
function inflateCapped(data: Uint8Array, cap: number): Buffer {
  try {
    return inflateRawSync(data.subarray(2), { maxOutputLength: Math.max(1, cap), finishFlush: constants.Z_SYNC_FLUSH });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw new OutputCapExceeded("flate output too large");
    throw tooLarge(); // a data error midway: pdf.js may read on, and what follows cannot be measured
  }
}

/** Inflated size of one Flate layer (zlib header skipped), counted piece by piece (nothing kept); stops past `cap`. */
async function inflatedSize(data: Uint8Array, cap: number): Promise<number> {
  if (data.length * MAX_DEFLATE_RATIO <= SMALL_STREAM_BYTES) {
    // Small enough that even its worst case is harmless: inflate at once.
    try {
      return inflateRawSync(data.subarray(2), { finishFlush: constants.Z_SYNC_FLUSH }).length;
    } catch {
      return Math.min(cap, data.length * MAX_DEFLATE_RATIO);
    }
  }
  let size = 0;
  const outcome = await new Promise<"ok" | "over" | "error">((resolve) => {
    const inflater = createInflateRaw({ chunkSize: 64 * 1024, finishFlush: constants.Z_SYNC_FLUSH });
    inflater.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        inflater.destroy();
        resolve("over");
      }
    });
    inflater.on("end", () => resolve("ok"));
    inflater.on("error", () => resolve("error"));
    inflater.end(data.subarray(2));
  });
  if (outcome === "over") throw tooLarge();
  if (outcome === "error") {
    // pdf.js reads on past errors zlib stops at: assume the most the data could hold.
    const worst = Math.max(size, data.length * MAX_DEFLATE_RATIO);
    if (worst > cap) throw tooLarge();
    return worst;
  }
  return size;
}
