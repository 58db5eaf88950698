/**
 * Markdown files: decoded like plain text, split into structural blocks
 * (headings with levels, paragraphs, lists, tables, code).
 */
import { decodeText } from "./decode-text.js";
import { DocumentBuilder, promiseOf } from "./document-builder.js";
import { splitMarkdown } from "./split-markdown.js";
import type { DocumentFormat, ParsedDocument } from "./types.js";

/** Parses a Markdown file; the title is the first level-1 heading, if any. */
export function parseMarkdown(bytes: Uint8Array): Promise<ParsedDocument> {
  return promiseOf(() => markdownToDocument(decodeText(bytes).text, { format: "md" }));
}

export interface MarkdownDocumentOptions {
  format: DocumentFormat;
  /** A title known from elsewhere (HTML `<title>`); else the first level-1 heading. */
  title?: string | null;
  warnings?: string[];
}

/** Builds a document from Markdown text; shared by the Markdown, HTML and DOCX parsers. */
export function markdownToDocument(markdown: string, options: MarkdownDocumentOptions): ParsedDocument {
  const builder = new DocumentBuilder();
  let firstHeading: string | null = null;
  for (const block of splitMarkdown(markdown)) {
    if (block.kind === "heading" && block.level === 1) firstHeading ??= block.text.trim();
    builder.add(block);
  }
  return builder.build({ format: options.format, title: options.title || firstHeading, warnings: options.warnings ?? [] });
}
