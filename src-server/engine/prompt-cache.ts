/**
 * Prompt caching across requests: each chat sequence keeps the tokens it last evaluated
 * (node-llama-cpp reuses the part of a new prompt that matches them and evaluates only the
 * rest), so a request is given the free sequence that already holds the longest prefix of
 * its prompt — the same system prompt, a conversation's earlier turns, a corpus's grounding
 * instructions. With the cache off, the sequence is emptied first and every prompt is
 * evaluated whole.
 */
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import type { LeaseCandidate, LeasePool } from "./lease-pool.js";

/** How many leading tokens of `tokens` the sequence already holds evaluated. */
export function cachedPrefix(sequence: LlamaContextSequence, tokens: readonly Token[]): number {
  return sequence.compareContextTokens(tokens as Token[]).firstDifferentIndex;
}

/**
 * A sequence whose cache covers at least this share of a prompt is taken for it; below,
 * the request goes to a sequence next to one that is generating, the least recently used
 * of those (an empty one first), so that two conversations that share only a template's
 * first tokens do not keep evicting each other.
 * (llama.cpp's server chooses its slots the same way, with the same default of one half.)
 */
export const PROMPT_SIMILARITY = 0.5;

/** When each sequence was last handed out, by a counter: what "least recently used" reads. */
const lastUsed = new WeakMap<LlamaContextSequence, number>();
let clock = 0;

/** Above any least-recently-used score, below any reusable prefix's. */
const CONTIGUOUS = 2 ** 40;

/**
 * The affinity of a free sequence for a prompt: its reusable prefix; else, a sequence next
 * to one that is generating (llama.cpp evaluates the sequences of a multi-stream cache in
 * one pass only when their ids are consecutive: 0-3 is one pass, 0, 1, 5, 6 are two); then
 * how long it has been idle.
 */
export function promptAffinity(sequence: LlamaContextSequence, tokens: readonly Token[], candidate: LeaseCandidate = { adjacent: true }): number {
  const reused = cachedPrefix(sequence, tokens);
  if (tokens.length > 0 && reused / tokens.length >= PROMPT_SIMILARITY) return Number.MAX_SAFE_INTEGER / 2 + reused;
  return (candidate.adjacent ? CONTIGUOUS : 0) - (lastUsed.get(sequence) ?? 0);
}

/** A sequence for a prompt: the best-prepared free one (cache on) or an emptied one (off). */
export async function acquireForPrompt(pool: LeasePool<LlamaContextSequence>, tokens: readonly Token[], promptCache: boolean, signal: AbortSignal): Promise<LlamaContextSequence> {
  if (promptCache) {
    const sequence = await pool.acquire(signal, (free, candidate) => promptAffinity(free, tokens, candidate));
    lastUsed.set(sequence, ++clock);
    return sequence;
  }
  const sequence = await pool.acquire(signal);
  try {
    if (sequence.nextTokenIndex > 0) await sequence.eraseContextTokenRanges([{ start: 0, end: sequence.nextTokenIndex }]);
  } catch (error) {
    pool.release(sequence);
    throw error;
  }
  return sequence;
}
