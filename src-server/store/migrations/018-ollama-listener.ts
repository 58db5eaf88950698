import type { Migration } from "./index.js";

/**
 * The Ollama-compatible listener (`admin/ollama-listener-service.ts`): at most one row, the
 * API key whose access it lends to programs on this computer and the loopback port it
 * listens on, kept so the listener opens again after a restart. The row goes with its key
 * (a key is revoked, not deleted, so a revoked key leaves the row, shown as broken).
 */
const tables = (bigint: string, strict: string) => `
CREATE TABLE ollama_listener (
  id        TEXT PRIMARY KEY CHECK (id = 'local'),
  key_id    TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  port      ${bigint} NOT NULL CHECK (port BETWEEN 1 AND 65535),
  opened_by TEXT NOT NULL,
  opened_at ${bigint} NOT NULL
)${strict};
`;

export const m018OllamaListener: Migration = {
  version: 18,
  name: "ollama-listener",
  sql: tables("INTEGER", " STRICT"),
  postgres: tables("BIGINT", ""),
};
