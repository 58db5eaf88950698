/**
 * Continuous batching across concurrent requests. The sequences of one chat context are
 * evaluated together when their tokens are in the same llama.cpp batch: one decode of eight
 * tokens costs far less than eight decodes of one (the weights are read once). After each
 * decode every generating sequence samples its next token and queues it, but not all at
 * once: one still in its JavaScript (detokenising, stop triggers, the SSE write) misses the
 * next batch, and on the CPU kernels a batch of seven is slower than one of eight.
 *
 * llama.cpp's server samples every slot and then decodes them all in one loop. Here the
 * same is done by waiting, before a batch is formed, until every sequence that was
 * generating in the previous batch has queued its next token — bounded by a share of the
 * previous decode's time, so that a sequence that has finished (or stalls) costs the others
 * at most that share once. node-llama-cpp calls this hook before each batch (see
 * patches/node-llama-cpp+*.patch, which also orders a batch by sequence id: llama.cpp
 * evaluates the sequences of a multi-stream KV cache together only in increasing order).
 */
import type { BatchingOptions } from "node-llama-cpp";

export type BatchGather = NonNullable<BatchingOptions["gather"]>;
export type BatchGatherState = Parameters<BatchGather>[0];

export interface BatchGatherOptions {
  /** Longest wait for the stragglers, in milliseconds. */
  maxWaitMs: number;
  /** The wait is also bounded by this share of the previous decode's time. */
  decodeShare: number;
}

export const DEFAULT_BATCH_GATHER: BatchGatherOptions = { maxWaitMs: 20, decodeShare: 0.25 };

/** Sequences of the previous batch that have not queued their next token yet. */
function missing(state: BatchGatherState): number {
  let count = 0;
  for (const id of state.previousSequenceIds) if (!state.queuedSequenceIds.has(id)) count++;
  return count;
}

/** The hook: resolves once the previous batch's sequences are all queued, or at the deadline. */
export function createBatchGather(options: BatchGatherOptions = DEFAULT_BATCH_GATHER): (state: BatchGatherState) => Promise<void> {
  return async (state) => {
    // Long after the previous batch, whoever has not queued again has stopped generating.
    if (state.msSincePrevious >= state.previousDecodeMs) return;
    const budget = Math.min(options.maxWaitMs, state.previousDecodeMs * options.decodeShare) - state.msSincePrevious;
    const deadline = performance.now() + budget;
    while (missing(state) > 0) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([state.nextQueued(), new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  };
}
