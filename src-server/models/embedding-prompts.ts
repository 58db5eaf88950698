/**
 * What an embedding model wants in front of its inputs. Retrieval-trained encoders are
 * trained with instructions — multilingual-e5 with `query: ` / `passage: `, nomic-embed
 * with `search_query: ` / `search_document: `, BGE English with an instruction before
 * queries only — and score worse without them. The order of authority: the
 * configuration (`models.embeddingPrompts`, for files the catalog does not know), the
 * catalog entry, then the model family named in the GGUF header or the file name.
 * Models that want nothing (all-MiniLM, BGE-M3, GTE) get empty prompts.
 */
import path from "node:path";
import type { EmbeddingPrompts } from "../domain/vocabulary.js";
import type { ModelEntry } from "./model-registry.js";

export const NO_PROMPTS: EmbeddingPrompts = Object.freeze({ query: "", document: "" });

const SEARCH_INSTRUCTION = "Represent this sentence for searching relevant passages: ";

/** Model families by name, with the prompts their model cards prescribe for retrieval. */
const FAMILIES: readonly { pattern: RegExp; prompts: EmbeddingPrompts }[] = [
  { pattern: /\b(?:multilingual-)?e5-(?:small|base|large)(?!-instruct)/i, prompts: { query: "query: ", document: "passage: " } },
  { pattern: /\bnomic-embed-text/i, prompts: { query: "search_query: ", document: "search_document: " } },
  { pattern: /\bbge-(?:small|base|large)-(?:en|zh)/i, prompts: { query: SEARCH_INSTRUCTION, document: "" } },
  { pattern: /\bmxbai-embed-large/i, prompts: { query: SEARCH_INSTRUCTION, document: "" } },
  { pattern: /\bsnowflake-arctic-embed/i, prompts: { query: SEARCH_INSTRUCTION, document: "" } },
];

/** The prompts of a model family named in `names`, or null when none is recognised. */
export function promptsByName(...names: (string | null | undefined)[]): EmbeddingPrompts | null {
  for (const name of names) {
    if (!name) continue;
    const family = FAMILIES.find((f) => f.pattern.test(name));
    if (family) return family.prompts;
  }
  return null;
}

/** The prompts for `entry`: configured, else from the catalog, else by family name, else none. */
export function embeddingPromptsFor(entry: ModelEntry, configured: Readonly<Record<string, EmbeddingPrompts>> = {}): EmbeddingPrompts {
  for (const name of [entry.id, ...entry.aliases]) {
    const prompts = configured[name];
    if (prompts) return prompts;
  }
  if (entry.catalog?.prompts) return entry.catalog.prompts;
  return promptsByName(entry.catalog?.id, entry.catalog?.name, entry.gguf?.name ?? null, entry.gguf ? path.basename(entry.gguf.path) : (entry.remote?.upstreams[0]?.model ?? null), entry.id) ?? NO_PROMPTS;
}

/** Words of three or more letters, all capitals, that make text shouted (an acronym or two do not). */
const MIN_SHOUTED_WORDS = 3;
/** Share of lower-case letters under which text counts as written in capitals. */
const MAX_LOWER_SHARE = 0.1;

/**
 * Text written in capitals ("USE OF DIGITAL COMPUTERS IN THE DESIGN OF BAND PASS FILTERS") in
 * lower case, the way an embedding model reads it best. Cased vocabularies (multilingual-e5's
 * SentencePiece, cased BERTs) cut shouted words into rare pieces whose vectors mean little:
 * on Vaswani, whose 93 queries are in capitals and its abstracts in lower case,
 * multilingual-e5-small's nDCG@10 goes from 0.306 to 0.429 with the queries lowered. Text
 * with more than a tenth of its letters in lower case keeps its case (an acronym in a
 * sentence carries meaning), and so does a short run of capitals ("PKD1 AMPK", "MCO").
 * Keyword search needs none of this: its analyser folds case itself.
 */
export function foldShouting(text: string): string {
  const upper = text.match(/\p{Lu}/gu)?.length ?? 0;
  if (upper === 0) return text;
  const lower = text.match(/\p{Ll}/gu)?.length ?? 0;
  if (lower > MAX_LOWER_SHARE * (upper + lower)) return text;
  let shouted = 0;
  for (const word of text.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []) {
    if ((word.match(/\p{Lu}/gu)?.length ?? 0) >= 3 && !/\p{Ll}/u.test(word) && ++shouted >= MIN_SHOUTED_WORDS) return text.toLowerCase();
  }
  return text;
}

/** What a retrieval embedding is computed from: the model's prompt and the text, shouting folded. */
export function embeddingInput(prompt: string, text: string): string {
  return prompt + foldShouting(text);
}
