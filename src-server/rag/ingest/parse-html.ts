/**
 * HTML pages: decoded, checked for pathological nesting, converted to Markdown
 * with turndown (page chrome, scripts and styles dropped), then split into blocks
 * like any Markdown document.
 */
import { decodeText, normalizeNewlines } from "./decode-text.js";
import { promiseOf } from "./document-builder.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { measureHtmlDepth } from "./measure-html-depth.js";
import { markdownToDocument } from "./parse-markdown.js";
import { ParseError, type DocumentFormat, type ParsedDocument } from "./types.js";

/**
 * Deepest element nesting accepted. Real pages stay well under 100 levels; browsers
 * themselves stop nesting at 512. Deeper trees overflow the converter's recursion.
 */
export const MAX_HTML_DEPTH = 1000;

/**
 * Largest HTML file parsed, in bytes. Its DOM takes some 40 times its size in memory, so a
 * page this big already needs more than the parse worker's default heap; real pages are
 * rarely over 2 MB.
 */
export const MAX_HTML_BYTES = 8 * 1024 * 1024;

/**
 * Parses an HTML file; the title comes from `<title>`, else the first `<h1>`.
 * @throws ParseError `document_too_large` beyond `MAX_HTML_BYTES`, `document_too_complex` when nested too deeply.
 */
export function parseHtml(bytes: Uint8Array): Promise<ParsedDocument> {
  return promiseOf(() => {
    if (bytes.length > MAX_HTML_BYTES) {
      throw new ParseError("document_too_large", `The HTML page is larger than ${MAX_HTML_BYTES / 1024 ** 2} MB; save it as text or split it to index it.`);
    }
    return htmlToDocument(decodeHtml(bytes), "html");
  });
}

/**
 * A byte-order mark or valid UTF-8 decides the encoding; otherwise a `<meta charset>`
 * in the first KiB, if the runtime knows it; otherwise Windows-1252.
 */
export function decodeHtml(bytes: Uint8Array): string {
  const decoded = decodeText(bytes);
  if (decoded.encoding !== "windows-1252") return decoded.text;
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  const label = /<meta[^>]{0,200}?charset\s*=\s*["']?([\w-]{1,40})/i.exec(head)?.[1];
  if (!label) return decoded.text;
  try {
    return normalizeNewlines(new TextDecoder(label).decode(bytes));
  } catch {
    return decoded.text; // a label the runtime does not know
  }
}

/**
 * Converts an HTML string (a page, or mammoth's rendering of a DOCX) to a document.
 * @throws ParseError `document_too_complex` when elements nest deeper than `MAX_HTML_DEPTH`.
 */
export function htmlToDocument(html: string, format: DocumentFormat, warnings: string[] = []): ParsedDocument {
  if (measureHtmlDepth(html, MAX_HTML_DEPTH) > MAX_HTML_DEPTH) {
    throw new ParseError("document_too_complex", `The page nests elements more than ${MAX_HTML_DEPTH} levels deep.`);
  }
  const { markdown, title } = htmlToMarkdown(html);
  return markdownToDocument(markdown, { format, title, warnings });
}
