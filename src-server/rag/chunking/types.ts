/** Chunks: what the corpus stores, embeds and cites. */
import type { ParsedDocument } from "../ingest/types.js";

import type { ChunkingStrategy } from "../../domain/vocabulary.js";

export type { ChunkingStrategy };

/**
 * Where a page begins inside a chunk's text: `[offset, page]`, the offset into the chunk
 * text and the 1-based page from there on. The first entry is at offset 0.
 */
export type PageBreak = [offset: number, page: number];

export interface ChunkDraft {
  /** 0-based position in the document. */
  index: number;
  text: string;
  /** Character offsets into `ParsedDocument.text`; `text === doc.text.slice(start, end)`. */
  start: number;
  end: number;
  /** 1-based first and last page the chunk spans; null for formats without pages. */
  pageStart: number | null;
  pageEnd: number | null;
  /** Where each page begins inside `text`, in order (empty for formats without pages). */
  pageBreaks: PageBreak[];
  /** Enclosing headings, outermost first (e.g. ["Annual report", "Finance"]). */
  headingPath: string[];
  /** Tokens, counted with the corpus's embedding model tokenizer. */
  tokenCount: number;
}

export interface ChunkerDeps {
  /** Token count of `text` with the embedding model's tokenizer (synchronous, fast). */
  countTokens(text: string): number;
  /** Unit-length sentence embeddings, in input order (semantic chunking only). */
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface ChunkOptions {
  strategy: ChunkingStrategy;
  /** Hard upper bound per chunk in tokens (the embedding model's input length, less a margin). */
  maxTokens: number;
  /** Size aimed for, in tokens (fixed windows; paragraph and semantic merging). */
  targetTokens: number;
  /** Fixed windows only: tokens shared by consecutive chunks. */
  overlapTokens: number;
  /**
   * Semantic chunking only: how topic shifts are found. `lexical` (the default): from the
   * sentences' stemmed words, nothing embedded, so each chunk's text is embedded once;
   * `embedding`: from sentence embeddings, which embeds the text twice (sentences, then chunks).
   */
  breakpoints?: SemanticBreakpoints | undefined;
}

export type SemanticBreakpoints = "lexical" | "embedding";

export type Chunker = (doc: ParsedDocument, options: ChunkOptions, deps: ChunkerDeps) => Promise<ChunkDraft[]>;
