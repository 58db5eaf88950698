import type { Migration } from "./index.js";

/**
 * OpenAI's Files and Vector Stores over corpora (`rag/vector-stores/`):
 * - `openai_files`: files uploaded through `/v1/files`, per workspace. Their bytes are sealed
 *   (AES-256-GCM) under a data key of each file's own, stored here only wrapped by the key
 *   provider; the sealed bytes live beside the originals (`<data-dir>/openai-files/`, or
 *   `blob_parts` under the owner `openai-files` when replicas share Postgres). Deleting a file
 *   deletes its key with it. A file is in no corpus until it is attached to a vector store.
 * - `vector_stores`: what a corpus needs to be an OpenAI vector store beyond the corpus itself
 *   (its expiry policy and last activity). A corpus without a row is a vector store too,
 *   one that never expires.
 * - `vector_store_files`: a file attached to a vector store, i.e. the document it became in
 *   the corpus (null when it never became one: refused, or cancelled before indexing), with
 *   its attributes and the chunking it asked for. `borrowed`: the document was the corpus's
 *   own (the same content uploaded directly), so detaching the file never deletes it.
 * - `vector_store_file_batches`: batches of attachments, and when one was cancelled.
 */
const tables = (blob: string, bigint: string, strict: string) => `
CREATE TABLE openai_files (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  filename      TEXT NOT NULL,
  purpose       TEXT NOT NULL,
  bytes         ${bigint} NOT NULL,
  sha256        TEXT NOT NULL,
  key_provider  TEXT NOT NULL,
  wrapped_key   ${blob} NOT NULL,
  created_at    ${bigint} NOT NULL,
  expires_at    ${bigint}
)${strict};
CREATE INDEX openai_files_by_workspace ON openai_files(workspace_id, created_at);

CREATE TABLE vector_stores (
  corpus_id          TEXT PRIMARY KEY REFERENCES corpora(id) ON DELETE CASCADE,
  description        TEXT,
  expires_after_days ${bigint},
  last_active_at     ${bigint} NOT NULL,
  expired_at         ${bigint}
)${strict};

CREATE TABLE vector_store_file_batches (
  id           TEXT PRIMARY KEY,
  corpus_id    TEXT NOT NULL REFERENCES corpora(id) ON DELETE CASCADE,
  cancelled_at ${bigint},
  created_at   ${bigint} NOT NULL
)${strict};
CREATE INDEX vector_store_file_batches_by_corpus ON vector_store_file_batches(corpus_id, created_at);

CREATE TABLE vector_store_files (
  corpus_id     TEXT NOT NULL REFERENCES corpora(id) ON DELETE CASCADE,
  id            TEXT NOT NULL REFERENCES openai_files(id) ON DELETE CASCADE,
  document_id   TEXT REFERENCES documents(id) ON DELETE CASCADE,
  borrowed      INTEGER NOT NULL DEFAULT 0,
  batch_id      TEXT,
  state         TEXT NOT NULL CHECK (state IN ('attached', 'failed', 'cancelled')),
  error_code    TEXT,
  error_message TEXT,
  attributes    TEXT NOT NULL,
  chunking      TEXT NOT NULL,
  created_at    ${bigint} NOT NULL,
  PRIMARY KEY (corpus_id, id)
)${strict};
CREATE INDEX vector_store_files_by_corpus ON vector_store_files(corpus_id, created_at);
CREATE INDEX vector_store_files_by_file ON vector_store_files(id);
CREATE INDEX vector_store_files_by_document ON vector_store_files(document_id);
CREATE INDEX vector_store_files_by_batch ON vector_store_files(batch_id);
`;

export const m017VectorStores: Migration = {
  version: 17,
  name: "vector-stores",
  sql: tables("BLOB", "INTEGER", " STRICT"),
  postgres: tables("BYTEA", "BIGINT", ""),
};
