import type { Migration } from "./index.js";

/**
 * Service accounts (OAuth 2.0 clients of a workspace): the SHA-256 of a client secret
 * and/or a registered public JWK; and the JWT assertions already used (RFC 7523 replay
 * protection), kept until they expire.
 */
export const m009ServiceAccounts: Migration = {
  version: 9,
  name: "service-accounts",
  sql: `
CREATE TABLE service_accounts (
  id            TEXT PRIMARY KEY,
  workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
  name          TEXT NOT NULL,
  scopes        TEXT NOT NULL,
  secret_prefix TEXT,
  secret_sha256 TEXT,
  public_jwk    TEXT,
  disabled_at   INTEGER,
  created_at    INTEGER NOT NULL,
  last_token_at INTEGER
) STRICT;
CREATE INDEX service_accounts_by_workspace ON service_accounts(workspace_id, created_at, id);

CREATE TABLE oauth_used_assertions (
  jti        TEXT NOT NULL,
  client_id  TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (client_id, jti)
) STRICT;
CREATE INDEX oauth_used_assertions_by_expiry ON oauth_used_assertions(expires_at);
`,
};
