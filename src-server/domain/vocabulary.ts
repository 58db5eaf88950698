/**
 * Words every layer shares, kept at the bottom so that storage never imports a service:
 * document formats and chunking strategies.
 */

/**
 * Formats a corpus accepts, decided by content (magic bytes) and extension. The catalog
 * (`rag/ingest/formats.ts`) names each one's extensions and media type.
 */
export type DocumentFormat =
  | "pdf"
  | "docx"
  | "html"
  | "md"
  | "txt"
  // Images, read by OCR.
  | "png"
  | "jpeg"
  | "tiff"
  // Office and e-book formats.
  | "pptx"
  | "xlsx"
  | "ods"
  | "csv"
  | "odt"
  | "epub"
  // E-mail: one message, a mailbox of messages, an Outlook message.
  | "eml"
  | "mbox"
  | "msg"
  // Legacy binary Office files, read after conversion by LibreOffice when it is installed.
  | "doc"
  | "xls"
  | "ppt";

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

/** How a corpus is searched: both signals fused (the default), embeddings alone, or words alone. */
export type SearchMode = "hybrid" | "vector" | "keyword";

/** How hybrid search fuses its two scores (`rag/retrieval/score-fusion.ts`). */
export type FusionMethod = "convex" | "dbsf" | "rrf";

/** How the keyword weight adapts to each question (`HybridFusion.keywordTrust`). */
export type KeywordTrust = "auto" | "squared" | "linear" | "language" | "fixed";

/**
 * A corpus's own search settings, used when a request does not say: its mode and, for
 * hybrid search, the fusion fields it overrides (the rest come from the server's).
 */
export interface SearchDefaults {
  search: SearchMode;
  fusion?: { method?: FusionMethod; vectorWeight?: number; keywordTrust?: KeywordTrust };
}
