import type { Migration } from "./index.js";

/** GGUF files the user picked on this machine (workbench: "use a file on disk"), bound again at every start. */
export const m005ModelFiles: Migration = {
  version: 5,
  name: "model-files",
  sql: `
CREATE TABLE model_files (
  id         TEXT PRIMARY KEY,
  path       TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
) STRICT;
`,
};
