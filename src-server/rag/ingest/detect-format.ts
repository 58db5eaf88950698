/**
 * Decides a document's format from its content (magic bytes, ZIP directory,
 * HTML markers) and its extension. Content wins for binary formats; text formats
 * need both text content and a text extension.
 */
import { formatOfExtension } from "./formats.js";
import { hasZipSignature, localEntryNames, readZipDirectory } from "./read-zip-directory.js";
import type { DocumentFormat } from "./types.js";

/** Formats that are text, recognised by their extension once the content is text. */
const TEXT_FORMATS = new Set<DocumentFormat>(["txt", "md", "html", "csv", "eml", "mbox"]);
/** ZIP-based formats, each recognised by the part only it has. */
const ZIP_PARTS: [part: string, format: DocumentFormat][] = [
  ["word/document.xml", "docx"],
  ["ppt/presentation.xml", "pptx"],
  ["xl/workbook.xml", "xlsx"],
];
/** OpenDocument and EPUB: a first, stored `mimetype` entry naming the type. */
const ZIP_MIMETYPES: Record<string, DocumentFormat> = {
  "application/vnd.oasis.opendocument.text": "odt",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/epub+zip": "epub",
};
/** Compound-file (OLE2) formats: which one is told by the extension, and the parser checks. */
const OLE_FORMATS = new Set<DocumentFormat>(["msg", "doc", "xls", "ppt"]);
const OLE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const IMAGE_SIGNATURES: [(number | null)[], DocumentFormat][] = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "png"],
  [[0xff, 0xd8, 0xff], "jpeg"],
  [[0x49, 0x49, 0x2a, 0x00], "tiff"], // little-endian
  [[0x4d, 0x4d, 0x00, 0x2a], "tiff"], // big-endian
];

/**
 * Signatures of common binary files that must never pass as text, each matched whole:
 * text may begin with the same letters ("PKD1 inhibits…", "RIFF analysis", "MZM-2").
 * Windows executables ("MZ") need no entry: their headers hold NUL bytes, which text does not.
 */
const BINARY_SIGNATURES: (number | null)[][] = [
  [...ascii("GIF87a")],
  [...ascii("GIF89a")],
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0xcf, 0xfa, 0xed, 0xfe], // Mach-O
  [0x1f, 0x8b, 0x08], // gzip (deflate)
  [0x50, 0x4b, 0x05, 0x06], // empty ZIP (a ZIP with entries starts PK\x03\x04 and is read as one)
  [0x50, 0x4b, 0x07, 0x08], // spanned ZIP
  [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], // 7z
  [...ascii("Rar!"), 0x1a, 0x07], // RAR
  [0x00, 0x61, 0x73, 0x6d], // WebAssembly
  ...["WEBP", "WAVE", "AVI "].map((kind) => [...ascii("RIFF"), null, null, null, null, ...ascii(kind)]), // RIFF: a size, then the kind
];

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}

/** How much of the start of a file the text heuristics look at. */
const SNIFF_BYTES = 64 * 1024;
/** Control characters (other than tab, newlines, form feed, escape) tolerated in text, as a share of bytes. */
const MAX_CONTROL_RATIO = 0.01;

/**
 * The document's format, or null when it is not one Pustaka parses.
 *
 * - `%PDF-` in the first KiB → pdf; PNG, JPEG and TIFF by their signatures; a ZIP by the part
 *   only its format has (`word/document.xml` → docx, `ppt/presentation.xml` → pptx,
 *   `xl/workbook.xml` → xlsx) or its `mimetype` entry (odt, ods, epub), whatever the name
 *   says (a PDF named `.docx` is a PDF). Given only the start of a file (the ZIP directory
 *   is at its end), local file headers are read instead.
 * - A compound file (OLE2) → the one of msg, doc, xls, ppt its extension names (their
 *   directories can lie past the start given here; the parser checks), else null.
 * - Other binary content (executables, other archives, NUL bytes) → null, whatever the name says.
 * - Text starting like an HTML document (`<!doctype html`, `<html`, `<head`, `<body`) → html;
 *   other text → the text format its extension names (txt, md, html, csv, eml, mbox), else null.
 * - An empty file → the extension's format, so parsing reports `empty_document`.
 * - A ZIP named for a ZIP format whose directory cannot be read and whose local headers do
 *   not tell → the extension's format, so parsing reports it (as corrupt).
 */
export function detectFormat(bytes: Uint8Array, filename: string): DocumentFormat | null {
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? "";
  const byExtension = formatOfExtension(extension);
  if (bytes.length === 0) return byExtension;
  if (isPdf(bytes)) return "pdf";
  for (const [signature, format] of IMAGE_SIGNATURES) if (hasBom(bytes, signature)) return format;
  if (hasBom(bytes, OLE_SIGNATURE)) return byExtension && OLE_FORMATS.has(byExtension) ? byExtension : null;
  if (hasZipSignature(bytes)) return zipFormat(bytes, byExtension);
  if (!isText(bytes)) return null;
  if (looksLikeHtml(bytes)) return "html";
  return byExtension && TEXT_FORMATS.has(byExtension) ? byExtension : null;
}

/** Which ZIP-based format the archive is, from its directory, else its first local headers. */
function zipFormat(bytes: Uint8Array, byExtension: DocumentFormat | null): DocumentFormat | null {
  const names = readZipDirectory(bytes)?.map((e) => e.name) ?? null;
  const seen = names ?? localEntryNames(bytes);
  for (const [part, format] of ZIP_PARTS) if (seen.includes(part)) return format;
  const mimetype = storedMimetype(bytes);
  if (mimetype && ZIP_MIMETYPES[mimetype]) return ZIP_MIMETYPES[mimetype];
  // No readable directory: only the start of the file was given, or it is truncated.
  const zipFormats = new Set<DocumentFormat>([...ZIP_PARTS.map(([, f]) => f), ...Object.values(ZIP_MIMETYPES)]);
  if (!names && byExtension && zipFormats.has(byExtension)) return byExtension;
  return null;
}

/**
 * The type an OpenDocument or EPUB file names in its first entry: `mimetype`, stored
 * uncompressed right after the first local header (both specifications require it).
 */
function storedMimetype(bytes: Uint8Array): string | null {
  if (bytes.length < 30) return null;
  const data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const method = data.getUint16(8, true);
  const size = data.getUint32(18, true);
  const nameLength = data.getUint16(26, true);
  const extraLength = data.getUint16(28, true);
  const name = Buffer.from(bytes.buffer, bytes.byteOffset + 30, Math.min(nameLength, bytes.length - 30)).toString("latin1");
  const start = 30 + nameLength + extraLength;
  if (name !== "mimetype" || method !== 0 || size > 200 || start + size > bytes.length) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, size).toString("latin1").trim();
}

function isPdf(bytes: Uint8Array): boolean {
  // Readers accept junk before the header; the spec allows it within the first 1024 bytes.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  return head.indexOf("%PDF-", 0, "latin1") !== -1;
}

/** Text unless it starts with a binary signature, holds NUL bytes, or too many control bytes. */
function isText(bytes: Uint8Array): boolean {
  if (hasBom(bytes, [0xff, 0xfe]) || hasBom(bytes, [0xfe, 0xff])) return true; // UTF-16: NULs expected
  if (BINARY_SIGNATURES.some((signature) => hasBom(bytes, signature))) return false;
  const length = Math.min(bytes.length, SNIFF_BYTES);
  let control = 0;
  for (let i = 0; i < length; i++) {
    const b = bytes[i]!;
    if (b === 0) return false;
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) || b === 0x7f) control++;
  }
  return control <= length * MAX_CONTROL_RATIO;
}

/** Whether the bytes start with `signature` (null: any byte). */
function hasBom(bytes: Uint8Array, signature: (number | null)[]): boolean {
  return bytes.length >= signature.length && signature.every((b, i) => b === null || bytes[i] === b);
}

/** HTML sniffing in the spirit of the WHATWG MIME sniffing rules, limited to unambiguous document markers. */
function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = decodeHead(bytes.subarray(0, 4096));
  const start = head
    .replace(/^(?:\s+|<!--[\s\S]*?-->|<\?xml[^>]*\?>)*/, "")
    .toLowerCase();
  return /^<(?:!doctype\s+html|html|head|body)[\s>/]/.test(start);
}

function decodeHead(bytes: Uint8Array): string {
  if (hasBom(bytes, [0xff, 0xfe])) return new TextDecoder("utf-16le").decode(bytes);
  if (hasBom(bytes, [0xfe, 0xff])) return new TextDecoder("utf-16be").decode(bytes);
  return new TextDecoder("utf-8").decode(bytes); // not fatal; drops a UTF-8 BOM
}
