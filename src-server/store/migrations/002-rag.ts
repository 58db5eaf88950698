import type { Migration } from "./index.js";

/**
 * Corpora, documents and chunks. Chunk text (with its heading path) and vectors are
 * stored sealed (AES-256-GCM under the corpus's data key); the data key is stored only
 * wrapped by the key provider, and outlives the corpus until its retention ends.
 */
export const m002Rag: Migration = {
  version: 2,
  name: "rag",
  sql: `
CREATE TABLE corpora (
  id              TEXT PRIMARY KEY,
  workspace_id    TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name            TEXT NOT NULL,
  chunking        TEXT NOT NULL,
  embedding_model TEXT NOT NULL,
  dimensions      INTEGER NOT NULL,
  retention_days  INTEGER NOT NULL,
  metadata        TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX corpora_by_workspace ON corpora(workspace_id, created_at);

CREATE TABLE corpus_keys (
  corpus_id     TEXT PRIMARY KEY,
  provider      TEXT NOT NULL,
  wrapped_key   BLOB NOT NULL,
  created_at    INTEGER NOT NULL,
  destroy_after INTEGER
) STRICT;

CREATE TABLE documents (
  id            TEXT PRIMARY KEY,
  corpus_id     TEXT NOT NULL REFERENCES corpora(id) ON DELETE CASCADE,
  filename      TEXT NOT NULL,
  content_type  TEXT NOT NULL,
  format        TEXT NOT NULL,
  bytes         INTEGER NOT NULL,
  sha256        TEXT NOT NULL,
  status        TEXT NOT NULL,
  error_code    TEXT,
  error_message TEXT,
  page_count    INTEGER,
  chunk_count   INTEGER NOT NULL DEFAULT 0,
  metadata      TEXT NOT NULL,
  attempts      INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  indexed_at    INTEGER,
  UNIQUE (corpus_id, sha256)
) STRICT;
CREATE INDEX documents_by_corpus ON documents(corpus_id, created_at);
CREATE INDEX documents_by_status ON documents(status, created_at);

CREATE TABLE chunks (
  id           TEXT PRIMARY KEY,
  corpus_id    TEXT NOT NULL REFERENCES corpora(id) ON DELETE CASCADE,
  document_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  idx          INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset   INTEGER NOT NULL,
  page_start   INTEGER,
  page_end     INTEGER,
  token_count  INTEGER NOT NULL,
  content      BLOB NOT NULL,
  vector       BLOB NOT NULL,
  UNIQUE (document_id, idx)
) STRICT;
CREATE INDEX chunks_by_corpus ON chunks(corpus_id);
`,
};
