/**
 * Embeds a list of inputs: checks each one's length, then hands them to the model's batcher,
 * which evaluates inputs from every concurrent request together (embed-batcher.ts).
 */
import { invalidInput } from "../errors.js";
import type { EmbedSlot } from "./loaded-model.js";
import type { EmbeddingResult } from "./types.js";

/** Scales a vector to unit length (OpenAI's embeddings are normalised; cosine = dot). */
export function normalize(values: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += (values[i] ?? 0) ** 2;
  const norm = Math.sqrt(sum) || 1;
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i] ?? 0) / norm;
  return out;
}

export async function embedInputs(slot: EmbedSlot, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult> {
  // Check every length before spending time on any embedding.
  let promptTokens = 0;
  const tokens = inputs.map((text, i) => {
    const ids = slot.tokenize(text);
    const which = inputs.length === 1 ? "the input" : `input ${i}`;
    if (ids.length === 0) {
      throw invalidInput(`${which} has no tokens (only white space or invisible characters): there is nothing to embed`, "empty_input", { in: "inputs", index: i, count: inputs.length });
    }
    if (ids.length >= slot.contextSize) {
      throw invalidInput(`${which} is ${ids.length} tokens; this model accepts at most ${slot.contextSize - 1} tokens per input`, "context_length_exceeded", { in: "inputs", index: i, count: inputs.length });
    }
    promptTokens += ids.length;
    return ids;
  });
  return { vectors: await slot.batcher.embed(tokens, signal), promptTokens };
}
