import type { Migration } from "./index.js";

/**
 * The reranker a corpus's queries use by default (a `rerank` model id or alias), or none.
 * Unlike the embedding model it can change at any time: reranking reads text, not vectors.
 */
export const m011CorpusReranker: Migration = {
  version: 11,
  name: "corpus-reranker",
  sql: `
ALTER TABLE corpora ADD COLUMN rerank_model TEXT;
`,
};
