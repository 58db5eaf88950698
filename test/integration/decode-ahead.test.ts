/**
 * Decoding ahead (patches/node-llama-cpp+*.patch, LlamaContextSequence._startSpeculation): a
 * greedy token is decoded as soon as it is sampled, while LlamaChat is still handling it, and
 * the token after it is taken from that decode when LlamaChat asks for it. These tests hold the
 * promise it makes, on real models: the same text and the same sequence state as without it, a
 * token decoded ahead that the reply does not keep (a stop trigger) leaves the sequence and its
 * KV cache, and nothing is decoded ahead for sampled tokens or after the last one.
 *
 * The reference runs turn decoding ahead off by replacing the internal `_startSpeculation` for
 * their duration; the counts come from wrapping `_acceptSpeculation` and `_dropSpeculation`.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { getLlama, LlamaChat, LlamaContextSequence, TokenMeter, type ChatHistoryItem, type Llama, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import { testModel } from "../helpers/models.js";
import { installedLlamaOptions } from "../../src-server/engine/llama-binary.js";

interface SequenceInternals {
  _startSpeculation: (this: SequenceInternals, ...args: unknown[]) => void;
  _acceptSpeculation: (this: SequenceInternals, ...args: unknown[]) => void;
  _dropSpeculation: (this: SequenceInternals) => Promise<void> | undefined;
  _speculation: unknown;
  _sequenceId: number;
}
const proto = LlamaContextSequence.prototype as unknown as SequenceInternals;
const original = { start: proto._startSpeculation, accept: proto._acceptSpeculation, drop: proto._dropSpeculation };
const counts = { accepted: 0, dropped: 0 };
proto._acceptSpeculation = function (this: SequenceInternals, ...args: unknown[]) {
  counts.accepted++;
  return original.accept.apply(this, args);
};
proto._dropSpeculation = function (this: SequenceInternals) {
  if (this._speculation != null) counts.dropped++;
  return original.drop.apply(this);
};

async function withoutDecodingAhead<T>(run: () => Promise<T>): Promise<T> {
  proto._startSpeculation = () => undefined;
  try {
    return await run();
  } finally {
    proto._startSpeculation = original.start;
  }
}

const STORY = "Write a long story about a fisherman in Terengganu who finds a strange pearl.";
const CERITA = "Tulis cerita panjang tentang seorang nelayan di Terengganu yang menjumpai mutiara aneh.";

/** The last KV cache position the sequence holds (-1 when empty), from llama.cpp. */
function kvMaxPosition(context: LlamaContext, sequence: LlamaContextSequence): number {
  const ctx = (context as unknown as { _ctx: { getSequenceKvCacheMaxPosition(id: number): number } })._ctx;
  return ctx.getSequenceKvCacheMaxPosition((sequence as unknown as SequenceInternals)._sequenceId);
}

/** Waits for a token decoded ahead to leave the sequence (erasing nothing waits for it). */
const settled = (sequence: LlamaContextSequence) => sequence.eraseContextTokenRanges([]);

interface Turn {
  text: string;
  history: ChatHistoryItem[];
  contextTokens: number[];
  kvMax: number;
  /** What the sequence's token meter counts as generated (the API's completion_tokens). */
  outputTokens: number;
}

async function reply(context: LlamaContext, sequence: LlamaContextSequence, history: ChatHistoryItem[], options: { maxTokens: number; temperature?: number; seed?: number; customStopTriggers?: string[] }): Promise<Turn> {
  const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
  const meterBefore = sequence.tokenMeter.getState();
  try {
    const result = await chat.generateResponse(history, { temperature: 0, repeatPenalty: false, ...options });
    await settled(sequence);
    const outputTokens = TokenMeter.diff(sequence.tokenMeter, meterBefore).usedOutputTokens;
    return { text: result.response, history: result.lastEvaluation.cleanHistory, contextTokens: [...sequence.contextTokens], kvMax: kvMaxPosition(context, sequence), outputTokens };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

const ask = (text: string): ChatHistoryItem[] => [{ type: "user", text }, { type: "model", response: [] }];
const followUp = (history: ChatHistoryItem[], text: string): ChatHistoryItem[] => [...history, { type: "user", text }, { type: "model", response: [] }];

/**
 * On a fresh sequence: the story (the probe), then the story again ended by a stop trigger on a
 * word from the middle of the probe, then a follow-up turn after the stopped reply.
 */
async function stoppedThenFollowedUp(context: LlamaContext, options: { maxTokens: number; followUp: string; followUpTokens: number }) {
  const sequence = context.getSequence();
  try {
    const probe = await reply(context, sequence, ask(STORY), { maxTokens: options.maxTokens });
    await sequence.clearHistory();
    const words = probe.text.split(/\s+/).filter((word) => /^[A-Za-z]{4,}$/.test(word));
    const stop = words[Math.floor(words.length / 2)];
    assert.ok(stop, `the reply has words to stop on: ${probe.text}`);
    const first = await reply(context, sequence, ask(STORY), { maxTokens: options.maxTokens, customStopTriggers: [stop] });
    const second = await reply(context, sequence, followUp(first.history, options.followUp), { maxTokens: options.followUpTokens });
    return { probe, first, second };
  } finally {
    await sequence.dispose();
  }
}

describe("decoding ahead", () => {
  let llama: Llama;
  let gemma: LlamaModel;
  let smol: LlamaModel;
  before(async () => {
    llama = await getLlama({ ...installedLlamaOptions(), logLevel: "error" as never });
    gemma = await llama.loadModel({ modelPath: testModel("gemma3-270m") });
    smol = await llama.loadModel({ modelPath: testModel("smollm2-135m-instruct") });
  });
  afterEach(() => {
    proto._startSpeculation = original.start;
    counts.accepted = counts.dropped = 0;
  });
  after(async () => {
    Object.assign(proto, { _startSpeculation: original.start, _acceptSpeculation: original.accept, _dropSpeculation: original.drop });
    await gemma.dispose();
    await smol.dispose();
    await llama.dispose();
  });

  it("decodes greedy tokens ahead and gives the same text and sequence state as without (Gemma 3, English and Malay)", async () => {
    const context = await gemma.createContext({ contextSize: 1024, sequences: 1, threads: 1 });
    try {
      for (const prompt of [STORY, CERITA]) {
        const reference = await withoutDecodingAhead(async () => {
          const sequence = context.getSequence();
          try {
            return await reply(context, sequence, ask(prompt), { maxTokens: 48 });
          } finally {
            await sequence.dispose();
          }
        });
        assert.equal(counts.accepted, 0, "the reference decodes nothing ahead");
        const sequence = context.getSequence();
        try {
          const turn = await reply(context, sequence, ask(prompt), { maxTokens: 48 });
          assert.equal(turn.text, reference.text);
          assert.deepEqual(turn.contextTokens, reference.contextTokens);
          assert.equal(turn.outputTokens, reference.outputTokens);
          assert.equal(turn.kvMax, turn.contextTokens.length - 1, "the KV cache holds exactly the sequence's tokens");
          // Gemma 3 takes a checkpoint after the prompt, so its first token is decoded in turn;
          // the last one is not decoded at all (48 tokens: the reply ends there).
          assert.ok(counts.accepted >= 44, `most tokens come from a decode ahead (${counts.accepted} of 48)`);
          assert.equal(counts.dropped, 0, "none is wasted when the reply ends at max tokens");
        } finally {
          await sequence.dispose();
        }
        counts.accepted = counts.dropped = 0;
      }
    } finally {
      await context.dispose();
    }
  });

  it("drops the token decoded ahead when a stop trigger ends the reply, and the next turn sees only the tokens kept (Gemma 3)", async () => {
    const context = await gemma.createContext({ contextSize: 2048, sequences: 1, threads: 1 });
    try {
      const reference = await withoutDecodingAhead(() => stoppedThenFollowedUp(context, { maxTokens: 64, followUp: "Ringkaskan dalam satu ayat.", followUpTokens: 24 }));
      const turns = await stoppedThenFollowedUp(context, { maxTokens: 64, followUp: "Ringkaskan dalam satu ayat.", followUpTokens: 24 });
      assert.ok(reference.first.text.length < reference.probe.text.length, "the stop trigger ended the reply early");
      assert.equal(turns.first.text, reference.first.text);
      assert.ok(counts.dropped >= 1, "the token after the stop trigger had been decoded ahead and was dropped");
      assert.deepEqual(turns.first.contextTokens, reference.first.contextTokens);
      assert.equal(turns.first.outputTokens, reference.first.outputTokens, "a dropped token is not counted as generated");
      assert.equal(turns.first.kvMax, turns.first.contextTokens.length - 1, "the dropped token left the KV cache");
      assert.equal(turns.second.text, reference.second.text, "the next turn continues from the same state");
      assert.deepEqual(turns.second.contextTokens, reference.second.contextTokens);
    } finally {
      await context.dispose();
    }
  });

  it("evaluates the sequence again when llama.cpp cannot drop the token's cell (SmolLM2)", async () => {
    const context = await smol.createContext({ contextSize: 1024, sequences: 1, threads: 1 });
    const internals = context as unknown as { _ctx: object };
    const ctx = internals._ctx;
    try {
      const run = () => stoppedThenFollowedUp(context, { maxTokens: 40, followUp: "And then?", followUpTokens: 16 });
      const reference = await withoutDecodingAhead(run);
      let refused = 0;
      internals._ctx = new Proxy(ctx, {
        get(target: Record<string, unknown>, property) {
          const value = target[property as string];
          if (property === "removeTokenCellsFromSequence")
            return (...args: unknown[]) => {
              // refuse only the one-cell removal of a dropped token
              const [, start, end] = args as number[];
              if (end! - start! === 1) {
                refused++;
                return false;
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const turns = await run();
      assert.ok(refused >= 1, "a decoded-ahead token was dropped and its removal refused");
      assert.equal(turns.first.text, reference.first.text);
      assert.deepEqual(turns.first.contextTokens, reference.first.contextTokens);
      assert.equal(turns.first.kvMax, turns.first.contextTokens.length - 1, "the sequence was evaluated again without the token");
      assert.equal(turns.second.text, reference.second.text);
    } finally {
      internals._ctx = ctx;
      await context.dispose();
    }
  });

  it("decodes nothing ahead for sampled tokens (temperature 0.8)", async () => {
    const context = await smol.createContext({ contextSize: 1024, sequences: 1, threads: 1 });
    try {
      const sequence = context.getSequence();
      const turn = await reply(context, sequence, ask(STORY), { maxTokens: 24, temperature: 0.8, seed: 7 });
      assert.ok(turn.text.length > 0);
      assert.equal(counts.accepted + counts.dropped, 0);
      assert.equal(turn.kvMax, turn.contextTokens.length - 1);
    } finally {
      await context.dispose();
    }
  });
});
