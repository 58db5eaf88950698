import type { Migration } from "./index.js";

/**
 * Responses kept for `previous_response_id` (the OpenAI Responses API), per workspace:
 * the response and the conversation it ends, sealed (AES-256-GCM) under a data key of
 * each response's own, stored only wrapped by the key provider. Deleting a response, or
 * its retention ending, deletes its key with it.
 */
export const m012Responses: Migration = {
  version: 12,
  name: "responses",
  sql: `
CREATE TABLE responses (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  key_provider  TEXT NOT NULL,
  wrapped_key   BLOB NOT NULL,
  body          BLOB NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER
) STRICT;
CREATE INDEX responses_by_workspace ON responses(workspace_id, created_at);
CREATE INDEX responses_by_expiry ON responses(expires_at) WHERE expires_at IS NOT NULL;
`,
};
