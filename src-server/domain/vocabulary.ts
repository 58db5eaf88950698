/**
 * Words every layer shares, kept at the bottom so that storage never imports a service:
 * document formats and chunking strategies.
 */

/** Formats a corpus accepts, decided by content (magic bytes) and extension. */
export type DocumentFormat = "pdf" | "docx" | "html" | "md" | "txt";

/** How a corpus cuts documents into chunks (spec: `semantic` by default). */
export type ChunkingStrategy = "semantic" | "fixed" | "paragraph";

/**
 * Text an embedding model wants in front of its inputs: one prompt for queries, one for
 * the documents indexed (e.g. multilingual-e5's `query: ` and `passage: `). Empty: none.
 */
export interface EmbeddingPrompts {
  query: string;
  document: string;
}
