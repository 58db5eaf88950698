import type { Migration } from "./index.js";

/**
 * Remote models added through the admin API (those in the configuration live there): what
 * they are in plain JSON (id, type, each replica's URL and upstream model), and the
 * upstreams' secrets (API keys, client certificates and their keys) sealed under a data key
 * the key provider wraps, as every other sealed record.
 */
export const m015RemoteModels: Migration = {
  version: 15,
  name: "remote-models",
  sql: `
CREATE TABLE remote_models (
  id            TEXT PRIMARY KEY,
  spec          TEXT NOT NULL,
  key_provider  TEXT NOT NULL,
  wrapped_key   BLOB NOT NULL,
  secrets       BLOB NOT NULL,
  created_at    INTEGER NOT NULL,
  created_by    TEXT NOT NULL
);
`,
};
