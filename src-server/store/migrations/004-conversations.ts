import type { Migration } from "./index.js";

/**
 * Conversations of the workbench, per workspace. Titles and messages are sealed
 * (AES-256-GCM) under a data key of their own, stored only wrapped by the key provider:
 * deleting a conversation deletes its key with it.
 */
export const m004Conversations: Migration = {
  version: 4,
  name: "conversations",
  sql: `
CREATE TABLE conversations (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  corpus_id     TEXT REFERENCES corpora(id) ON DELETE SET NULL,
  key_provider  TEXT NOT NULL,
  wrapped_key   BLOB NOT NULL,
  title         BLOB NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX conversations_by_workspace ON conversations(workspace_id, updated_at);

CREATE TABLE conversation_messages (
  id              TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  idx             INTEGER NOT NULL,
  role            TEXT NOT NULL,
  body            BLOB NOT NULL,
  created_at      INTEGER NOT NULL,
  UNIQUE (conversation_id, idx)
) STRICT;
`,
};
