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
 *
 * Decode chaining (the addon's AddonDecodeThread, LlamaContextSequence._armDecodeChain): when a
 * sequence decodes alone and LlamaChat already waits for the token after the one being decoded,
 * the decode thread picks that greedy token and decodes it at once. Its tests compare against
 * contexts made with `batching: { decodeChain: false }` (JavaScript's decode-ahead alone) and
 * read how many decodes were chained, and drained unwanted, from the context's counters.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { getLlama, LlamaChat, LlamaCompletion, LlamaContextSequence, TokenMeter, type ChatHistoryItem, type Llama, type LlamaContext, type LlamaModel } from "node-llama-cpp";
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

/** How many decodes the context's addon chained, and how many of them nobody took. */
function chainStats(context: LlamaContext): { chained: number; drained: number } {
  return { ...(context as unknown as { _decodeChainStats: { chained: number; drained: number } })._decodeChainStats };
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

/** A stopped reply and the turn after it hold the reference's tokens, count and cache. */
function assertSameStateAfterStop(turns: Awaited<ReturnType<typeof stoppedThenFollowedUp>>, reference: Awaited<ReturnType<typeof stoppedThenFollowedUp>>): void {
  assert.deepEqual(turns.first.contextTokens, reference.first.contextTokens);
  assert.equal(turns.first.outputTokens, reference.first.outputTokens, "a dropped token is not counted as generated");
  assert.equal(turns.first.kvMax, turns.first.contextTokens.length - 1, "the dropped token left the KV cache");
  assert.equal(turns.second.text, reference.second.text, "the next turn continues from the same state");
  assert.deepEqual(turns.second.contextTokens, reference.second.contextTokens);
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
      assertSameStateAfterStop(turns, reference);
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

  it("chains greedy decodes in the addon's thread: the same text, tokens, count and KV cache as without (SmolLM2 and Gemma 3, English and Malay)", async () => {
    for (const model of [smol, gemma]) {
      const plain = await model.createContext({ contextSize: 1024, sequences: 1, threads: 1, batching: { decodeChain: false } });
      const chained = await model.createContext({ contextSize: 1024, sequences: 1, threads: 1 });
      try {
        for (const prompt of [STORY, CERITA]) {
          const run = async (context: LlamaContext) => {
            const sequence = context.getSequence();
            try {
              return await reply(context, sequence, ask(prompt), { maxTokens: 48 });
            } finally {
              await sequence.dispose();
            }
          };
          const reference = await run(plain);
          assert.equal(chainStats(plain).chained, 0, "decodeChain: false chains nothing");
          const before = chainStats(chained);
          const turn = await run(chained);
          const after = chainStats(chained);
          assert.equal(turn.text, reference.text);
          assert.deepEqual(turn.contextTokens, reference.contextTokens);
          assert.equal(turn.outputTokens, reference.outputTokens);
          assert.equal(turn.kvMax, turn.contextTokens.length - 1, "the KV cache holds exactly the sequence's tokens");
          // the first tokens come from the prompt's decode and the decodes ahead that start the
          // chain; the last one is not decoded at all
          assert.ok(after.chained - before.chained >= 40, `most decodes are chained (${after.chained - before.chained} of 48 tokens)`);
          assert.equal(after.drained, before.drained, "no chained decode is wasted when the reply ends at max tokens");
        }
      } finally {
        await plain.dispose();
        await chained.dispose();
      }
    }
  });

  it("a stop trigger ends a chained reply: the token decoded after it leaves the sequence, and the next turn is the same (SmolLM2)", async () => {
    const plain = await smol.createContext({ contextSize: 2048, sequences: 1, threads: 1, batching: { decodeChain: false } });
    const chained = await smol.createContext({ contextSize: 2048, sequences: 1, threads: 1 });
    try {
      const run = (context: LlamaContext) => stoppedThenFollowedUp(context, { maxTokens: 64, followUp: "Ringkaskan dalam satu ayat.", followUpTokens: 24 });
      const reference = await run(plain);
      counts.dropped = 0;
      const turns = await run(chained);
      assert.ok(reference.first.text.length < reference.probe.text.length, "the stop trigger ended the reply early");
      assert.ok(chainStats(chained).chained >= 40, `the replies were chained (${chainStats(chained).chained})`);
      assert.ok(counts.dropped >= 1, "the token after the stop trigger had been decoded and was dropped");
      assert.equal(turns.first.text, reference.first.text);
      assertSameStateAfterStop(turns, reference);
    } finally {
      await plain.dispose();
      await chained.dispose();
    }
  });

  it("a second reply joining a chained one: chaining stops, both are batched, and each says what it says alone (SmolLM2)", async () => {
    const JOINER = "Explain in detail how a kampung house is built.";
    const alone = async (prompt: string, maxTokens: number) => {
      const context = await smol.createContext({ contextSize: 2048, sequences: 2, threads: 1, batching: { decodeChain: false } });
      try {
        return await reply(context, context.getSequence(), ask(prompt), { maxTokens });
      } finally {
        await context.dispose();
      }
    };
    const referenceFirst = await alone(STORY, 64);
    const referenceSecond = await alone(JOINER, 24);
    const context = await smol.createContext({ contextSize: 2048, sequences: 2, threads: 1 });
    try {
      const first = context.getSequence();
      const second = context.getSequence();
      let chainedBeforeJoin = 0;
      let joined: Promise<Turn> | undefined;
      let chunks = 0;
      const firstChat = new LlamaChat({ contextSequence: first, autoDisposeSequence: false });
      const firstReply = firstChat.generateResponse(ask(STORY), {
        temperature: 0,
        repeatPenalty: false,
        maxTokens: 64,
        onTextChunk: () => {
          if (++chunks === 12) {
            chainedBeforeJoin = chainStats(context).chained;
            joined = reply(context, second, ask(JOINER), { maxTokens: 24 });
          }
        },
      });
      const firstText = (await firstReply).response;
      firstChat.dispose({ disposeSequence: false });
      const secondTurn = await joined!;
      await settled(first);
      assert.ok(chainedBeforeJoin >= 6, `the first reply was chained before the second joined (${chainedBeforeJoin})`);
      assert.equal(firstText, referenceFirst.text);
      assert.equal(secondTurn.text, referenceSecond.text);
      assert.equal(kvMaxPosition(context, first), first.contextTokens.length - 1);
      assert.equal(secondTurn.kvMax, secondTurn.contextTokens.length - 1);
      // 64 + 24 tokens, of which at least 20 were generated side by side: not all chained
      assert.ok(chainStats(context).chained <= 64 + 24 - 20, `batched decodes are not chained (${chainStats(context).chained} chained)`);
    } finally {
      await context.dispose();
    }
  });

  it("an aborted chained reply leaves the sequence holding exactly its tokens, and it answers as before (SmolLM2)", async () => {
    const context = await smol.createContext({ contextSize: 2048, sequences: 1, threads: 1 });
    try {
      const sequence = context.getSequence();
      const reference = await reply(context, sequence, ask(CERITA), { maxTokens: 32 });
      await sequence.clearHistory();
      const controller = new AbortController();
      const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
      let chunks = 0;
      const before = chainStats(context).chained;
      await chat
        .generateResponse(ask(STORY), {
          temperature: 0,
          maxTokens: 200,
          signal: controller.signal,
          stopOnAbortSignal: true,
          onTextChunk: () => {
            if (++chunks === 20) controller.abort();
          },
        })
        .finally(() => chat.dispose({ disposeSequence: false }));
      await settled(sequence);
      assert.ok(chainStats(context).chained - before >= 10, "the aborted reply was chained");
      assert.equal(kvMaxPosition(context, sequence), sequence.contextTokens.length - 1, "no chained token is left in the KV cache");
      await sequence.clearHistory();
      const again = await reply(context, sequence, ask(CERITA), { maxTokens: 32 });
      assert.equal(again.text, reference.text);
    } finally {
      await context.dispose();
    }
  });

  it("takes interval checkpoints between chained decodes, with no decode running (Gemma 3, a checkpoint every 8 tokens)", async () => {
    const run = async (decodeChain: boolean) => {
      const context = await gemma.createContext({ contextSize: 1024, sequences: 1, threads: 1, batching: { decodeChain } });
      try {
        const sequence = context.getSequence({ checkpoints: { interval: 8 } });
        const turn = await reply(context, sequence, ask(STORY), { maxTokens: 48 });
        return { turn, stats: chainStats(context), checkpoint: sequence.lastCheckpointIndex };
      } finally {
        await context.dispose();
      }
    };
    const reference = await run(false);
    const chained = await run(true);
    assert.equal(chained.turn.text, reference.turn.text);
    assert.deepEqual(chained.turn.contextTokens, reference.turn.contextTokens);
    assert.equal(chained.checkpoint, reference.checkpoint, "the last checkpoint is at the same token");
    assert.ok(chained.checkpoint >= chained.turn.contextTokens.length - 10, `checkpoints kept being taken (last at ${chained.checkpoint} of ${chained.turn.contextTokens.length})`);
    // a decode after which a checkpoint is due is not chained
    assert.ok(chained.stats.chained >= 24 && chained.stats.chained <= 48 - 4, `chained ${chained.stats.chained} of 48`);
  });

  it("chains text completions too (LlamaCompletion): the same text and state, ended by max tokens or a stop trigger (SmolLM2)", async () => {
    const PROMPT = "The history of the Malacca Sultanate begins";
    const complete = async (context: LlamaContext, options: { maxTokens: number; customStopTriggers?: string[] }) => {
      const sequence = context.getSequence();
      const completion = new LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: false });
      try {
        const text = await completion.generateCompletion(PROMPT, { temperature: 0, ...options });
        await settled(sequence);
        return { text, contextTokens: [...sequence.contextTokens], kvMax: kvMaxPosition(context, sequence) };
      } finally {
        completion.dispose({ disposeSequence: false });
        await sequence.dispose();
      }
    };
    const plain = await smol.createContext({ contextSize: 1024, sequences: 1, threads: 1, batching: { decodeChain: false } });
    const chained = await smol.createContext({ contextSize: 1024, sequences: 1, threads: 1 });
    try {
      const reference = await complete(plain, { maxTokens: 40 });
      const turn = await complete(chained, { maxTokens: 40 });
      assert.equal(turn.text, reference.text);
      assert.deepEqual(turn.contextTokens, reference.contextTokens);
      assert.equal(turn.kvMax, turn.contextTokens.length - 1);
      assert.ok(chainStats(chained).chained >= 32, `completions are chained (${chainStats(chained).chained} of 40)`);
      const words = reference.text.split(/\s+/).filter((word) => /^[A-Za-z]{4,}$/.test(word));
      const stop = words[Math.floor(words.length / 2)]!;
      const stoppedReference = await complete(plain, { maxTokens: 40, customStopTriggers: [stop] });
      const stopped = await complete(chained, { maxTokens: 40, customStopTriggers: [stop] });
      assert.ok(stoppedReference.text.length < reference.text.length, "the stop trigger ended the completion early");
      assert.equal(stopped.text, stoppedReference.text);
      assert.deepEqual(stopped.contextTokens, stoppedReference.contextTokens);
      assert.equal(stopped.kvMax, stopped.contextTokens.length - 1, "the token decoded after the stop left the KV cache");
    } finally {
      await plain.dispose();
      await chained.dispose();
    }
  });

  it("decodes nothing ahead for sampled tokens (temperature 0.8)", async () => {
    const context = await smol.createContext({ contextSize: 1024, sequences: 1, threads: 1 });
    try {
      const sequence = context.getSequence();
      const turn = await reply(context, sequence, ask(STORY), { maxTokens: 24, temperature: 0.8, seed: 7 });
      assert.ok(turn.text.length > 0);
      assert.equal(counts.accepted + counts.dropped, 0);
      assert.equal(chainStats(context).chained, 0, "nor chains");
      assert.equal(turn.kvMax, turn.contextTokens.length - 1);
    } finally {
      await context.dispose();
    }
  });
});
