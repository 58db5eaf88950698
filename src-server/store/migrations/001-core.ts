import type { Migration } from "./index.js";

/** Workspaces and their API keys. */
export const m001Core: Migration = {
  version: 1,
  name: "core",
  sql: `
CREATE TABLE workspaces (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  prefix        TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL UNIQUE,
  scopes        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER,
  revoked_at    INTEGER,
  last_used_at  INTEGER
) STRICT;
CREATE INDEX api_keys_by_prefix ON api_keys(prefix);
CREATE INDEX api_keys_by_workspace ON api_keys(workspace_id, created_at);
`,
};
