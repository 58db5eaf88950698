/**
 * Embeds a list of inputs across a model's pool of embedding contexts. Inputs from
 * all concurrent requests share the pool, so contexts never sit idle while work waits.
 */
import type { LlamaModel } from "node-llama-cpp";
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

export async function embedInputs(slot: EmbedSlot, model: LlamaModel, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult> {
  // Check every length before spending time on any embedding.
  let promptTokens = 0;
  inputs.forEach((text, i) => {
    const own = model.tokenize(text, false).length;
    if (own === 0) {
      throw invalidInput(`${inputs.length === 1 ? "the input" : `input ${i}`} has no tokens (only white space or invisible characters): there is nothing to embed`, "empty_input", { in: "inputs", index: i, count: inputs.length });
    }
    // +2: the beginning/end tokens the embedding context adds.
    const tokens = own + 2;
    if (tokens >= slot.contextSize) {
      const which = inputs.length === 1 ? "the input" : `input ${i}`;
      throw invalidInput(`${which} is ${tokens} tokens; this model accepts at most ${slot.contextSize - 1} tokens per input`, "context_length_exceeded", { in: "inputs", index: i, count: inputs.length });
    }
    promptTokens += tokens;
  });
  // A few workers (no more than the pool has contexts) pull inputs from a shared cursor,
  // taking a context per input, so concurrent requests interleave fairly on the pool.
  const vectors: Float32Array[] = new Array<Float32Array>(inputs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < inputs.length; i = next++) {
      const context = await slot.pool.acquire(signal);
      try {
        signal.throwIfAborted();
        vectors[i] = normalize((await context.getEmbeddingFor(inputs[i]!)).vector);
      } finally {
        slot.pool.release(context);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inputs.length, slot.size) }, worker));
  return { vectors, promptTokens };
}
