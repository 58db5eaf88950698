import type { Migration } from "./index.js";

/**
 * How a corpus is searched when a request does not say (`search` mode and hybrid fusion),
 * as JSON, or null for the server's defaults. Set by hand or by search tuning on the
 * corpus's own judged questions; like the reranker it can change at any time.
 */
export const m014CorpusSearchDefaults: Migration = {
  version: 14,
  name: "corpus-search-defaults",
  sql: `
ALTER TABLE corpora ADD COLUMN search_defaults TEXT;
`,
};
