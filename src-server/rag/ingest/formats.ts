/**
 * The formats Pustaka reads, in one place: what the upload page offers, what a refused
 * file is told, the media type a document is stored with, and the extensions detection
 * trusts. Detection itself (content first) is `detect-format.ts`.
 */
import type { DocumentFormat } from "./types.js";

export interface FormatInfo {
  /** Shown to people ("PDF", "Excel workbook"). */
  label: string;
  /** Lower-case extensions without the dot; the first is the usual one. */
  extensions: string[];
  /** Media type a document of this format is stored and served with. */
  contentType: string;
  /** What reading it needs beyond Pustaka itself, when anything (shown with the format). */
  needs?: "ocr" | "converter";
}

export const FORMATS: Record<DocumentFormat, FormatInfo> = {
  pdf: { label: "PDF", extensions: ["pdf"], contentType: "application/pdf" },
  docx: { label: "Word document", extensions: ["docx"], contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
  odt: { label: "OpenDocument text", extensions: ["odt"], contentType: "application/vnd.oasis.opendocument.text" },
  pptx: { label: "PowerPoint presentation", extensions: ["pptx"], contentType: "application/vnd.openxmlformats-officedocument.presentationml.presentation" },
  xlsx: { label: "Excel workbook", extensions: ["xlsx"], contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
  ods: { label: "OpenDocument spreadsheet", extensions: ["ods"], contentType: "application/vnd.oasis.opendocument.spreadsheet" },
  csv: { label: "CSV", extensions: ["csv", "tsv"], contentType: "text/csv" },
  epub: { label: "EPUB e-book", extensions: ["epub"], contentType: "application/epub+zip" },
  html: { label: "HTML", extensions: ["html", "htm", "xhtml"], contentType: "text/html" },
  md: { label: "Markdown", extensions: ["md", "markdown", "mdown", "mkd"], contentType: "text/markdown" },
  txt: { label: "Text", extensions: ["txt", "text"], contentType: "text/plain" },
  eml: { label: "E-mail message", extensions: ["eml"], contentType: "message/rfc822" },
  mbox: { label: "Mailbox", extensions: ["mbox", "mbx"], contentType: "application/mbox" },
  msg: { label: "Outlook message", extensions: ["msg"], contentType: "application/vnd.ms-outlook" },
  png: { label: "PNG image", extensions: ["png"], contentType: "image/png", needs: "ocr" },
  jpeg: { label: "JPEG image", extensions: ["jpg", "jpeg"], contentType: "image/jpeg", needs: "ocr" },
  tiff: { label: "TIFF image", extensions: ["tif", "tiff"], contentType: "image/tiff", needs: "ocr" },
  doc: { label: "Word 97–2003 document", extensions: ["doc"], contentType: "application/msword", needs: "converter" },
  xls: { label: "Excel 97–2003 workbook", extensions: ["xls"], contentType: "application/vnd.ms-excel", needs: "converter" },
  ppt: { label: "PowerPoint 97–2003 presentation", extensions: ["ppt"], contentType: "application/vnd.ms-powerpoint", needs: "converter" },
};

/** Every accepted extension, with its dot, as an `<input accept>` list takes them. */
export function acceptedExtensions(): string[] {
  return Object.values(FORMATS).flatMap((f) => f.extensions.map((e) => `.${e}`));
}

/** The sentence a refused file is told: which types are read. */
export function acceptedTypesSentence(): string {
  const names = [...new Set(Object.values(FORMATS).flatMap((f) => f.extensions[0]!.toUpperCase()))];
  return `upload ${names.slice(0, -1).join(", ")} or ${names.at(-1)!}`;
}

/** The format an extension names, or null. */
export function formatOfExtension(extension: string): DocumentFormat | null {
  const lower = extension.toLowerCase().replace(/^\./, "");
  for (const [format, info] of Object.entries(FORMATS) as [DocumentFormat, FormatInfo][]) {
    if (info.extensions.includes(lower)) return format;
  }
  return null;
}
