import type { Migration } from "./index.js";

/**
 * Browser sessions of the workbench: an HttpOnly cookie holds the secret, this table its
 * SHA-256 (never the secret), the workspace and scopes it acts with, and its expiry.
 */
export const m003Sessions: Migration = {
  version: 3,
  name: "sessions",
  sql: `
CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  secret_sha256 TEXT NOT NULL UNIQUE,
  scopes        TEXT NOT NULL,
  user_agent    TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  last_used_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_by_expiry ON sessions(expires_at);
`,
};
