import type { Migration } from "./index.js";

/**
 * The prompts a corpus's chunks were embedded with (`passage: ` for multilingual-e5 …),
 * fixed at creation so its queries always get the matching one. Corpora created before
 * keep empty prompts, which is how they were indexed.
 */
export const m010EmbeddingPrompts: Migration = {
  version: 10,
  name: "embedding-prompts",
  sql: `
ALTER TABLE corpora ADD COLUMN query_prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE corpora ADD COLUMN document_prompt TEXT NOT NULL DEFAULT '';
`,
};
