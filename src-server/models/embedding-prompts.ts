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
  return promptsByName(entry.catalog?.id, entry.catalog?.name, entry.gguf.name, path.basename(entry.gguf.path), entry.id) ?? NO_PROMPTS;
}
