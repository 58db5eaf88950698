/**
 * Scores documents against a query across a reranker's pool of ranking contexts. Like
 * `embedInputs`, documents from all concurrent requests share the pool one document at
 * a time, so a long request does not hold every context while others wait.
 */
import type { LlamaModel } from "node-llama-cpp";
import { invalidInput } from "../errors.js";
import type { RankSlot } from "./loaded-model.js";
import type { RerankScores } from "./types.js";

/** Overflowing documents are read in windows overlapping by half; the best window's score wins. */
const ON_OVERFLOW = { type: "maxChunk", overlapPercentage: 0.5 } as const;

export async function rankDocuments(slot: RankSlot, model: LlamaModel, query: string, documents: string[], signal: AbortSignal): Promise<RerankScores> {
  // Tokenised the way the ranking context tokenises them (leading space trimmed, no special tokens).
  const tokens = (text: string) => model.tokenize(text, false, "trimLeadingSpace").length;
  const queryTokens = tokens(query);
  if (queryTokens === 0) {
    throw invalidInput("the query has no tokens (only white space or invisible characters): there is nothing to rank against", "empty_input", { in: "query" });
  }
  // The query is repeated in every window of a long document: it may take at most half the context.
  const overhead = slot.inputLength(query, "");
  const budget = Math.floor(slot.contextSize / 2);
  if (overhead > budget) {
    throw invalidInput(
      `the query is ${queryTokens} tokens; this model reads query and document together in ${slot.contextSize} tokens, so a query may take at most ${budget - (overhead - queryTokens)}`,
      "context_length_exceeded",
      { in: "query" },
    );
  }
  // Every length is known before any evaluation. A document with no tokens cannot be
  // relevant: it scores 0 without being evaluated (refusing it would fail a whole search
  // for one blank hit).
  const scores = new Array<number>(documents.length).fill(0);
  const todo: number[] = [];
  let promptTokens = 0;
  documents.forEach((document, i) => {
    if (tokens(document) === 0) return;
    todo.push(i);
    promptTokens += slot.inputLength(query, document);
  });
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let k = next++; k < todo.length; k = next++) {
      const i = todo[k]!;
      const context = await slot.pool.acquire(signal);
      try {
        signal.throwIfAborted();
        scores[i] = await context.rank(query, documents[i]!, { onOverflow: ON_OVERFLOW });
      } finally {
        slot.pool.release(context);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(todo.length, slot.size) }, worker));
  return { scores, promptTokens };
}
