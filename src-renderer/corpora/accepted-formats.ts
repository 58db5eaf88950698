/**
 * The file formats a corpus accepts, as the upload zone offers and explains them. The
 * server's catalogue (src-server/rag/ingest/formats.ts) is the truth; the renderer may not
 * import server code, so this copy is kept equal to it by accepted-formats.test.ts.
 */
import type { MessageKey } from "../i18n/i18n.js";

/** How the upload zone groups formats for people. */
export type FormatGroup = "documents" | "sheets" | "email" | "scans";

export interface AcceptedFormat {
  /** Lower-case extensions without the dot; the first is the usual one. */
  extensions: string[];
  contentType: string;
  group: FormatGroup;
  /** Read only when the server has OCR, or a converter (LibreOffice) for the legacy binary formats. */
  needs?: "ocr" | "converter";
}

export const ACCEPTED_FORMATS: Record<string, AcceptedFormat> = {
  pdf: { extensions: ["pdf"], contentType: "application/pdf", group: "documents" },
  docx: { extensions: ["docx"], contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", group: "documents" },
  doc: { extensions: ["doc"], contentType: "application/msword", group: "documents", needs: "converter" },
  odt: { extensions: ["odt"], contentType: "application/vnd.oasis.opendocument.text", group: "documents" },
  epub: { extensions: ["epub"], contentType: "application/epub+zip", group: "documents" },
  html: { extensions: ["html", "htm", "xhtml"], contentType: "text/html", group: "documents" },
  md: { extensions: ["md", "markdown", "mdown", "mkd"], contentType: "text/markdown", group: "documents" },
  txt: { extensions: ["txt", "text"], contentType: "text/plain", group: "documents" },
  xlsx: { extensions: ["xlsx"], contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", group: "sheets" },
  xls: { extensions: ["xls"], contentType: "application/vnd.ms-excel", group: "sheets", needs: "converter" },
  ods: { extensions: ["ods"], contentType: "application/vnd.oasis.opendocument.spreadsheet", group: "sheets" },
  csv: { extensions: ["csv", "tsv"], contentType: "text/csv", group: "sheets" },
  pptx: { extensions: ["pptx"], contentType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", group: "sheets" },
  ppt: { extensions: ["ppt"], contentType: "application/vnd.ms-powerpoint", group: "sheets", needs: "converter" },
  eml: { extensions: ["eml"], contentType: "message/rfc822", group: "email" },
  msg: { extensions: ["msg"], contentType: "application/vnd.ms-outlook", group: "email" },
  mbox: { extensions: ["mbox", "mbx"], contentType: "application/mbox", group: "email" },
  png: { extensions: ["png"], contentType: "image/png", group: "scans", needs: "ocr" },
  jpeg: { extensions: ["jpg", "jpeg"], contentType: "image/jpeg", group: "scans", needs: "ocr" },
  tiff: { extensions: ["tif", "tiff"], contentType: "image/tiff", group: "scans", needs: "ocr" },
};

export const FORMAT_GROUPS: { group: FormatGroup; label: MessageKey }[] = [
  { group: "documents", label: "formats.documents" },
  { group: "sheets", label: "formats.sheets" },
  { group: "email", label: "formats.email" },
  { group: "scans", label: "formats.scans" },
];

/** The `<input accept>` list: every extension with its dot, then every media type. */
export const ACCEPT_ATTRIBUTE = [
  ...Object.values(ACCEPTED_FORMATS).flatMap((f) => f.extensions.map((e) => `.${e}`)),
  ...new Set(Object.values(ACCEPTED_FORMATS).map((f) => f.contentType)),
].join(",");

/** The extensions of one group, upper-case, as people name the files ("PDF", "DOCX"). */
export function extensionsOf(group: FormatGroup): string[] {
  return Object.values(ACCEPTED_FORMATS)
    .filter((f) => f.group === group)
    .flatMap((f) => f.extensions.filter((e) => !HIDDEN_ALIASES.has(e)).map((e) => e.toUpperCase()));
}

/** Spellings that are accepted but not worth a place in the help text. */
const HIDDEN_ALIASES = new Set(["htm", "xhtml", "markdown", "mdown", "mkd", "text", "mbx", "jpeg", "tif"]);

/** True for documents shown as page images (image files OCR read). */
export function isImageDocument(contentType: string | null | undefined): boolean {
  return /^image\/(png|jpeg|tiff)\b/.test(contentType ?? "");
}
