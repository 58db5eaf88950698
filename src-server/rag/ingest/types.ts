/**
 * What parsing a document produces: its text, and the structure chunkers follow.
 * Every parser (PDF, DOCX, HTML, Markdown, plain text) returns this shape.
 */

import type { DocumentFormat } from "../../domain/vocabulary.js";

export type { DocumentFormat };

export interface Block {
  kind: "heading" | "paragraph" | "list" | "table" | "code";
  /** The block's text, exactly `ParsedDocument.text.slice(start, end)`. */
  text: string;
  /** Headings only: 1 (top) to 6. */
  level?: number;
  /** 1-based page the block is on (PDF); null for formats without pages. */
  page: number | null;
  /** Character offsets into `ParsedDocument.text`. */
  start: number;
  end: number;
}

export interface ParsedDocument {
  format: DocumentFormat;
  /** Whole extracted text: the blocks' texts joined with "\n\n". */
  text: string;
  blocks: Block[];
  /** PDF page count; null for other formats. */
  pageCount: number | null;
  title: string | null;
  /** Things worth telling the user that did not fail the document. */
  warnings: string[];
  /** Pages read by OCR (scans, images); absent when every page had a usable text layer. */
  ocr?: OcrReport;
  /**
   * Files the document carries that are documents of their own (an e-mail's attachments, a
   * mailbox's messages): each is indexed as its own document, linked to this one.
   */
  embedded?: EmbeddedFile[];
}

/** Which pages OCR read, how sure it was, and the words' places for highlighting. */
export interface OcrReport {
  engine: string;
  languages: string[];
  pages: OcrPage[];
}

export interface OcrPage {
  /** 1-based page (an image file is page 1; a TIFF's frames are its pages). */
  page: number;
  /** Why OCR read it: no text layer, too little text, a text layer of garbage, or an image. */
  reason: "no_text_layer" | "too_little_text" | "garbled_text_layer" | "image";
  /** Mean word confidence, 0–100. */
  confidence: number;
  /** Page image size in pixels the boxes refer to. */
  width: number;
  height: number;
  /** Degrees the page was turned to straighten it before OCR (absent: it was straight). */
  deskewed?: number;
  /** Words in reading order: text and box [left, top, width, height] in pixels. */
  words: OcrWord[];
}

export interface OcrWord {
  text: string;
  box: [left: number, top: number, width: number, height: number];
  confidence: number;
}

/** A file inside a document that becomes a document of its own. */
export interface EmbeddedFile {
  filename: string;
  bytes: Uint8Array;
  /** How it relates to the document holding it. */
  relation: "attachment" | "message";
}

/** What a parse may be told beyond the bytes (per corpus). */
export interface ParseSettings {
  /** Tesseract language codes OCR reads with, in order (default eng + msa). */
  ocrLanguages: string[];
  /** Whether pages without a usable text layer and images are OCR'd at all. */
  ocr: boolean;
  /**
   * The server's data folder: where the built-in OCR engine (WebAssembly) finds language data
   * (`<dataDir>/ocr/tessdata`) when no Tesseract is installed. Absent: the installed one only.
   */
  dataDir?: string;
  /** `auto` (default): installed Tesseract when it has the languages, else the built-in one; `builtin`: always the built-in one. */
  ocrEngine?: "auto" | "builtin";
}

export const DEFAULT_PARSE_SETTINGS: ParseSettings = { ocrLanguages: ["eng", "msa"], ocr: true };

/** What a parser is handed besides the bytes. */
export interface ParseContext {
  settings: ParseSettings;
  /** Reports progress through long parses (pages OCR'd of the pages to OCR). */
  progress(done: number, total: number): void;
}

export type ParseErrorCode =
  | "empty_document"
  | "corrupt_document"
  | "encrypted_document"
  | "document_too_large"
  | "document_too_complex"
  | "parse_timeout"
  | "unsupported_file_type"
  /** A scan or image, and no OCR engine (or not the corpus's languages) is installed. */
  | "ocr_unavailable"
  /** A legacy binary Office file, and no converter (LibreOffice) is installed. */
  | "converter_unavailable"
  /** An image too large to read (pixels) or a file with too many pages or parts. */
  | "image_too_large";

/** A document that cannot be parsed; the message is shown to the user as is. */
export class ParseError extends Error {
  override name = "ParseError";
  constructor(
    readonly code: ParseErrorCode,
    message: string,
  ) {
    super(message);
  }
}
