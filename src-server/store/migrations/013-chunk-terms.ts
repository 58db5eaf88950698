import type { Migration } from "./index.js";

/**
 * Each chunk's keyword analysis (its stemmed terms and language), sealed like its content,
 * so a corpus's in-memory index is rebuilt without decrypting and re-analysing every text.
 * NULL for chunks stored before: they are analysed when their corpus next opens, and filled in.
 *
 * And a corpus's chunks indexed in id order: the index rebuild reads them in pages by id,
 * which on `(corpus_id)` alone sorted the rest of the corpus for every page (9.8 s of
 * reading at 100k chunks, 0.3 s with this).
 */
export const m013ChunkTerms: Migration = {
  version: 13,
  name: "chunk-terms",
  sql: `
ALTER TABLE chunks ADD COLUMN terms BLOB;
DROP INDEX chunks_by_corpus;
CREATE INDEX chunks_by_corpus ON chunks(corpus_id, id);
`,
};
