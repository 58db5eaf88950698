/** Seals and opens chunk content and vectors with the corpus cipher. */
import type { DataCipher } from "../security/data-cipher.js";
import type { PageBreak } from "./chunking/types.js";
import { KEYWORD_ANALYSIS_VERSION, type KeywordLanguage } from "./retrieval/keyword-analysis.js";

export interface ChunkContent {
  text: string;
  headingPath: string[];
  /**
   * Where each page begins inside `text` (`[offset, page]`, see `pageAt`). Absent for
   * page-less formats and for chunks stored before it was recorded.
   */
  pageBreaks?: PageBreak[];
  /**
   * The passage's context line (document title, enclosing headings; `passage-context.ts`),
   * embedded and keyword-analysed before the text. Absent when there is none, and for
   * chunks stored before it was recorded.
   */
  context?: string;
}

export function sealContent(cipher: DataCipher, chunkId: string, content: ChunkContent): Buffer {
  return cipher.seal(Buffer.from(JSON.stringify(content), "utf8"), `chunk:${chunkId}:content`);
}

export function openContent(cipher: DataCipher, chunkId: string, sealed: Buffer): ChunkContent {
  return JSON.parse(cipher.open(sealed, `chunk:${chunkId}:content`).toString("utf8")) as ChunkContent;
}

export function sealVector(cipher: DataCipher, chunkId: string, vector: Float32Array): Buffer {
  return cipher.seal(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), `chunk:${chunkId}:vector`);
}

export function openVector(cipher: DataCipher, chunkId: string, sealed: Buffer): Float32Array {
  const bytes = cipher.open(sealed, `chunk:${chunkId}:vector`);
  // Copy: a Buffer view may start at an offset that is not a multiple of 4.
  return new Float32Array(new Uint8Array(bytes).buffer);
}

/** A chunk's keyword analysis (`analyzeChunk`), stored so opening a corpus need not redo it. */
export interface ChunkTerms {
  terms: string;
  language: KeywordLanguage;
}

export function sealTerms(cipher: DataCipher, chunkId: string, analysed: ChunkTerms): Buffer {
  return cipher.seal(Buffer.from(JSON.stringify({ v: KEYWORD_ANALYSIS_VERSION, language: analysed.language, terms: analysed.terms }), "utf8"), `chunk:${chunkId}:terms`);
}

/** The stored analysis, or null when it was made by another version of the keyword analysis. */
export function openTerms(cipher: DataCipher, chunkId: string, sealed: Buffer): ChunkTerms | null {
  const stored = JSON.parse(cipher.open(sealed, `chunk:${chunkId}:terms`).toString("utf8")) as { v: number; language: KeywordLanguage; terms: string };
  return stored.v === KEYWORD_ANALYSIS_VERSION ? { terms: stored.terms, language: stored.language } : null;
}
