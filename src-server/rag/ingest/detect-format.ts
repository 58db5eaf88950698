/**
 * Decides a document's format from its content (magic bytes, ZIP directory,
 * HTML markers) and its extension. Content wins for binary formats; text formats
 * need both text content and a text extension.
 */
import { hasZipSignature, localEntryNames, readZipDirectory } from "./read-zip-directory.js";
import type { DocumentFormat } from "./types.js";

const TEXT_EXTENSIONS: Record<string, DocumentFormat> = {
  txt: "txt",
  text: "txt",
  md: "md",
  markdown: "md",
  mdown: "md",
  mkd: "md",
  html: "html",
  htm: "html",
  xhtml: "html",
};
const BINARY_EXTENSIONS: Record<string, DocumentFormat> = { pdf: "pdf", docx: "docx" };
const DOCX_MAIN_PART = "word/document.xml";

/**
 * Signatures of common binary files that must never pass as text, each matched whole:
 * text may begin with the same letters ("PKD1 inhibits…", "RIFF analysis", "MZM-2").
 * Windows executables ("MZ") need no entry: their headers hold NUL bytes, which text does not.
 */
const BINARY_SIGNATURES: (number | null)[][] = [
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [...ascii("GIF87a")],
  [...ascii("GIF89a")],
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0xcf, 0xfa, 0xed, 0xfe], // Mach-O
  [0x1f, 0x8b, 0x08], // gzip (deflate)
  [0x50, 0x4b, 0x05, 0x06], // empty ZIP (a ZIP with entries starts PK\x03\x04 and is read as one)
  [0x50, 0x4b, 0x07, 0x08], // spanned ZIP
  [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], // OLE2 (.doc, .xls)
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
 * - `%PDF-` in the first KiB → pdf; a ZIP whose directory lists `word/document.xml` → docx,
 *   whatever the name says (a PDF named `.docx` is a PDF). Given only the start of a file
 *   (the ZIP directory is at its end), local file headers are read instead.
 * - Other binary content (images, executables, other archives, NUL bytes) → null,
 *   whatever the name says.
 * - Text starting like an HTML document (`<!doctype html`, `<html`, `<head`, `<body`) → html;
 *   other text → the format its extension names (txt, md, html), else null.
 * - An empty file → the extension's format, so parsing reports `empty_document`.
 * - A ZIP named `.docx` whose directory cannot be read and whose local headers do not show
 *   `word/document.xml` → docx, so parsing reports it (as corrupt, or not a Word document).
 */
export function detectFormat(bytes: Uint8Array, filename: string): DocumentFormat | null {
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? "";
  const byExtension = TEXT_EXTENSIONS[extension] ?? BINARY_EXTENSIONS[extension] ?? null;
  if (bytes.length === 0) return byExtension;
  if (isPdf(bytes)) return "pdf";
  if (hasZipSignature(bytes)) {
    const entries = readZipDirectory(bytes);
    if (entries) return entries.some((e) => e.name === DOCX_MAIN_PART) ? "docx" : null;
    // No readable directory: only the start of the file was given, or it is truncated.
    return localEntryNames(bytes).includes(DOCX_MAIN_PART) || byExtension === "docx" ? "docx" : null;
  }
  if (!isText(bytes)) return null;
  if (looksLikeHtml(bytes)) return "html";
  return TEXT_EXTENSIONS[extension] ?? null;
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
