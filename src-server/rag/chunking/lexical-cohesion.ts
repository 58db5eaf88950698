/**
 * Sentence vectors from words alone, for finding topic shifts without a model (lexical
 * cohesion, as in Hearst's TextTiling): each sentence becomes its content words' stems,
 * weighted by how rare they are in the document, hashed into a fixed number of
 * dimensions. Two runs of sentences about the same thing share stems; at a topic shift the
 * vocabulary changes. The stems are the keyword index's (English or Malay, chosen once
 * per document), so `flood`/`floods` and `banjir`/`kebanjiran` count as the same word.
 */
import { detectLanguage, isStopWord, stem, tokenize, type KeywordLanguage } from "../retrieval/keyword-analysis.js";
import type { SparseVector } from "./semantic-breakpoints.js";

/** Hashed dimensions: collisions among a document's few thousand stems stay rare enough. */
export const LEXICAL_DIMENSIONS = 1024;

/** FNV-1a, 32-bit: a stem's dimension. */
function dimensionOf(term: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) {
    hash ^= term.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % LEXICAL_DIMENSIONS;
}

/**
 * One vector per text (the sentences of one document, in order): term frequency × inverse
 * document frequency over these texts, scaled to unit length. A text with no content words
 * gets a zero vector (its distance to anything is 1). Sparse: a sentence has a few dozen
 * words, and a document may have hundreds of thousands of sentences.
 */
export function lexicalVectors(texts: readonly string[]): SparseVector[] {
  const tokens = texts.map(tokenize);
  const language: KeywordLanguage = detectLanguage(tokens.flat());
  const terms = tokens.map((words) => words.filter((w) => !isStopWord(w)).map((w) => stem(w, language)));
  const documentFrequency = new Map<string, number>();
  for (const list of terms) for (const term of new Set(list)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const n = texts.length;
  // Each sentence is weighed in one dense scratch vector (float32, as a dense vector would
  // be), then its non-zero dimensions are kept and the scratch is cleared.
  const scratch = new Float32Array(LEXICAL_DIMENSIONS);
  return terms.map((list) => {
    const touched = [...new Set(list.map(dimensionOf))].sort((a, b) => a - b);
    for (const term of list) scratch[dimensionOf(term)]! += Math.log(1 + n / documentFrequency.get(term)!);
    let norm = 0;
    for (const d of touched) norm += scratch[d]! * scratch[d]!;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const indexes = Uint32Array.from(touched);
    const values = new Float32Array(touched.length);
    touched.forEach((d, j) => {
      values[j] = scratch[d]! * scale;
      scratch[d] = 0;
    });
    return { length: LEXICAL_DIMENSIONS, indexes, values };
  });
}
