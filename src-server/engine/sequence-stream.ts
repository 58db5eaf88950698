/**
 * A generation on a leased context sequence, turned from node-llama-cpp's callbacks into
 * the engine's event stream. The sequence goes back to its pool exactly once: when the
 * stream ends, when the consumer stops reading, or when the request is aborted before
 * the stream was ever read.
 */
import { TokenMeter, type LlamaContextSequence } from "node-llama-cpp";
import { AsyncQueue } from "./async-queue.js";
import type { LeasePool } from "./lease-pool.js";
import type { ChatEvent, ChatRun, FinishReason, ToolCall } from "./types.js";

/** How a generation ended; null when it was aborted (nothing more is reported). */
export type GenerationEnd = { finishReason: FinishReason; toolCalls: ToolCall[]; stopSequence?: string | undefined } | null;

/**
 * Runs the generation on `sequence`: `emit` streams text, `stop` is aborted when the
 * request is, and the promise settles when the generation is over.
 */
export type Generate = (sequence: LlamaContextSequence, stop: AbortSignal, emit: (text: string) => void) => Promise<GenerationEnd>;

export interface SequenceStreamArgs {
  pool: LeasePool<LlamaContextSequence>;
  /** Already acquired from `pool`; released by the stream. */
  sequence: LlamaContextSequence;
  signal: AbortSignal;
  promptTokens: number;
  contextSize: number;
  generate: Generate;
  /** Called exactly once, after the sequence is released. */
  onDone: () => void;
}

/** node-llama-cpp's stop reason in OpenAI's terms. */
export function finishReasonOf(stopReason: string): FinishReason {
  if (stopReason === "maxTokens") return "length";
  if (stopReason === "functionCalls") return "tool_calls";
  return "stop";
}

/** The run for a generation whose sequence is held; see `InferenceEngine.startChat`. */
export function sequenceStream(args: SequenceStreamArgs): ChatRun {
  const { pool, sequence, signal } = args;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    pool.release(sequence);
    args.onDone();
  };
  // If the consumer never starts the stream (client gone before the first read), the
  // request's abort still returns the sequence.
  const onAbortBeforeStart = (): void => release();
  signal.addEventListener("abort", onAbortBeforeStart, { once: true });

  async function* events(): AsyncGenerator<ChatEvent, void, undefined> {
    signal.removeEventListener("abort", onAbortBeforeStart);
    if (released) return;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const queue = new AsyncQueue<ChatEvent>();
    const meterBefore = sequence.tokenMeter.getState();
    const generation = args
      .generate(sequence, stop.signal, (text) => queue.push({ type: "text", text }))
      .then((end) => {
        if (end) {
          const used = TokenMeter.diff(sequence.tokenMeter, meterBefore);
          // What of the prompt was not evaluated came from the sequence's cache. node-llama-cpp's
          // meter counts one prompt token fewer than the prompt has even when nothing is reused
          // (measured on every model and prompt size tried), hence the 1.
          const cachedTokens = Math.max(0, args.promptTokens - used.usedInputTokens - 1);
          queue.push({ type: "end", finishReason: end.finishReason, toolCalls: end.toolCalls, completionTokens: used.usedOutputTokens, cachedTokens, stopSequence: end.stopSequence });
        }
        queue.end();
      })
      .catch((error: unknown) => queue.fail(error));
    try {
      for await (const event of queue) yield event;
    } finally {
      signal.removeEventListener("abort", onAbort);
      stop.abort();
      await generation;
      release();
    }
  }
  return { promptTokens: args.promptTokens, contextSize: args.contextSize, events: events() };
}
