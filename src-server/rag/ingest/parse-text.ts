/**
 * Plain text: decoded (UTF-8, UTF-16 with BOM, else Windows-1252), split into
 * paragraphs on blank lines. A first paragraph of one short line above a longer one is
 * the title (as in "Title\n\nBody…"); it stays a paragraph of the text.
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
  const paragraphs = text
    .split(/\n[ \t\f\v]*\n/)
    .map((paragraph) => paragraph.split("\n").map((line) => line.trimEnd()).join("\n").trim())
    .filter((paragraph) => paragraph !== "");
  for (const paragraph of paragraphs) builder.add({ kind: "paragraph", text: paragraph });
  const warnings = encoding === "windows-1252" ? ["The file is not valid UTF-8; it was read as Windows-1252 (Latin-1)."] : [];
  return builder.build({ format: "txt", title: titleLine(paragraphs), warnings });
}

/** Longest first line taken for a title. */
const TITLE_MAX_CHARS = 300;

/** The title of a plain text: its first paragraph when that is one line, at most 300 characters, above a longer paragraph. */
export function titleLine(paragraphs: readonly string[]): string | null {
  const [first, second] = paragraphs;
  if (first === undefined || second === undefined) return null;
  if (first.includes("\n") || first.length > TITLE_MAX_CHARS || second.length <= first.length) return null;
  return first;
}
