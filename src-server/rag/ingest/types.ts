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
}

export type ParseErrorCode =
  | "empty_document"
  | "corrupt_document"
  | "encrypted_document"
  | "document_too_large"
  | "document_too_complex"
  | "parse_timeout"
  | "unsupported_file_type";

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
