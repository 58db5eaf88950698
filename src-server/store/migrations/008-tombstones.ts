import type { Migration } from "./index.js";

/**
 * Tombstones of deleted corpora and documents: the catalogue, kept in the primary
 * database beside the rows it replaces, so that marking a tombstone retained and deleting
 * the rows it holds commit in one transaction. The sealed payload (chunk ciphertext and
 * encrypted vectors, stored originals, sealed document records) lives in the cold store,
 * never here. `created_at` is when the deletion began (the list pages on it);
 * `status` is `moving` (copying to the cold store; the rows are still in primary),
 * `retained` (primary wiped, kept until `expires_at`) or `purging` (being destroyed).
 */
export const m008Tombstones: Migration = {
  version: 8,
  name: "tombstones",
  sql: `
CREATE TABLE tombstones (
  id           TEXT PRIMARY KEY,
  kind         TEXT NOT NULL CHECK (kind IN ('corpus', 'document')),
  workspace_id TEXT NOT NULL,
  corpus_id    TEXT NOT NULL,
  document_id  TEXT,
  status       TEXT NOT NULL CHECK (status IN ('moving', 'retained', 'purging')),
  documents    INTEGER NOT NULL DEFAULT 0,
  chunks       INTEGER NOT NULL DEFAULT 0,
  bytes        INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX tombstones_by_workspace ON tombstones(workspace_id, created_at);
CREATE INDEX tombstones_by_status ON tombstones(status, expires_at);
CREATE INDEX tombstones_by_corpus ON tombstones(corpus_id, status);
`,
};
