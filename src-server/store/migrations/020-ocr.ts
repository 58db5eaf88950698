import type { Migration } from "./index.js";

/**
 * OCR (issue 34). A corpus names the languages its scans are read in (JSON array; null: the
 * server's default, English and Malay). A document says which pages OCR read and how sure it
 * was (JSON, no text: page, reason, confidence, word count), and each OCR'd page keeps its
 * words with their boxes, sealed under the corpus key like passages, for the workbench to
 * highlight a cited passage on the page image. The pages go with their document.
 */
const tables = (bigint: string, bytes: string, strict: string) => `
ALTER TABLE corpora ADD COLUMN ocr_languages TEXT;
ALTER TABLE documents ADD COLUMN ocr_summary TEXT;
CREATE TABLE document_ocr_pages (
  document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  page        ${bigint} NOT NULL CHECK (page >= 1),
  width       ${bigint} NOT NULL,
  height      ${bigint} NOT NULL,
  words       ${bytes} NOT NULL,
  PRIMARY KEY (document_id, page)
)${strict};
`;

export const m020Ocr: Migration = {
  version: 20,
  name: "ocr",
  sql: tables("INTEGER", "BLOB", " STRICT"),
  postgres: tables("BIGINT", "BYTEA", ""),
};
