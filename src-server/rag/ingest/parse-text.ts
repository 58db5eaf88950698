/**
 * Plain text: decoded (UTF-8, UTF-16 with BOM, else Windows-1252), split into
 * paragraphs on blank lines.
 */
import { decodeText } from "./decode-text.js";
import { DocumentBuilder, promiseOf } from "./document-builder.js";
import type { ParsedDocument } from "./types.js";

/** Parses a plain-text file; each run of non-blank lines is a paragraph block. */
export function parseText(bytes: Uint8Array): Promise<ParsedDocument> {
  return promiseOf(() => textToDocument(bytes));
}

function textToDocument(bytes: Uint8Array): ParsedDocument {
  const { text, encoding } = decodeText(bytes);
  const builder = new DocumentBuilder();
  for (const paragraph of text.split(/\n[ \t\f\v]*\n/)) {
    builder.add({ kind: "paragraph", text: paragraph.split("\n").map((line) => line.trimEnd()).join("\n") });
  }
  const warnings = encoding === "windows-1252" ? ["The file is not valid UTF-8; it was read as Windows-1252 (Latin-1)."] : [];
  return builder.build({ format: "txt", warnings });
}
