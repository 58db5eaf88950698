/**
 * Long prompts are tokenised in a worker thread with the model's own tokenizer: the same
 * tokens as on the event loop (byte-pair and SentencePiece vocabularies, plain text, special
 * tokens, rendered chat prompts), the event loop free meanwhile, and in place when the
 * worker cannot start.
 */
import assert from "node:assert/strict";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { setTimeout } from "node:timers/promises";
import { getLlama, LlamaLogLevel, LlamaText, resolveChatWrapper, SpecialToken, SpecialTokensText, type Llama, type LlamaModel } from "node-llama-cpp";
import { testModel } from "../../test/helpers/models.js";
import { bindingOf, PromptTokenizer } from "./prompt-tokenizer.js";

/** Text with what tokenizers find hard: runs of spaces and newlines, CJK, emoji, digits, accents. */
function mixedText(chars: number): string {
  const parts = ["Once upon a time, in Kuala Terengganu, ", "   \n\n\t", "漢字仮名交じり文。", "😀🎉👍🏽 ", "1234567890 ", "café naïve résumé ", "aaaaaaaaaaaaaaaaaaaa", "\r\n"];
  let text = "";
  for (let i = 0; text.length < chars; i++) text += parts[i % parts.length]!.repeat(1 + (i % 3));
  return text.slice(0, chars);
}

/** Runs `work` and returns its result with the event loop's longest stall meanwhile (ms). */
async function withLoopDelay<T>(work: () => Promise<T>): Promise<{ result: T; maxDelayMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  // The histogram sees a stall only once the loop turns again: let it turn before and after.
  await setTimeout(50);
  try {
    const result = await work();
    await setTimeout(50);
    return { result, maxDelayMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

describe("prompt tokenizer", () => {
  let llama: Llama;
  const models = new Map<string, LlamaModel>();
  const tokenizers: PromptTokenizer[] = [];
  const open = (model: LlamaModel, path: string, options: { inlineMaxChars?: number; idleMs?: number; workerModule?: string; onWorkerError?: (error: Error) => void } = {}) => {
    const tokenizer = new PromptTokenizer(model, { modelPath: path, binding: bindingOf(llama), inlineMaxChars: 0, ...options });
    tokenizers.push(tokenizer);
    return tokenizer;
  };

  before(async () => {
    llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
    for (const id of ["smollm2-135m-instruct", "gemma3-270m"] as const) models.set(id, await llama.loadModel({ modelPath: testModel(id), vocabOnly: true }));
  });
  after(async () => {
    for (const tokenizer of tokenizers) await tokenizer.close();
    for (const model of models.values()) await model.dispose();
    await llama.dispose();
  });

  for (const id of ["smollm2-135m-instruct", "gemma3-270m"] as const) {
    it(`gives ${id}'s own tokens for long text, plain and with special tokens, from its worker`, { timeout: 120_000 }, async () => {
      const model = models.get(id)!;
      const tokenizer = open(model, testModel(id), { onWorkerError: (error) => assert.fail(error) });
      const text = mixedText(200_000);
      const withSpecials = `<|im_start|>user\n${text}<end_of_turn><|im_end|>${model.tokens.bosString ?? ""}`;
      assert.deepEqual(Array.from(await tokenizer.tokenize(text, false)), model.tokenize(text, false));
      assert.deepEqual(Array.from(await tokenizer.tokenize(withSpecials, true)), model.tokenize(withSpecials, true));
      assert.deepEqual(Array.from(await tokenizer.tokenize(withSpecials, false)), model.tokenize(withSpecials, false));

      // A rendered chat prompt: the template's special tokens, named and as text, around the messages.
      const wrapper = resolveChatWrapper(model);
      const { contextText } = wrapper.generateContextState({ chatHistory: [{ type: "system", text: "Be brief." }, { type: "user", text }, { type: "model", response: [] }] });
      assert.deepEqual(Array.from(await tokenizer.tokenizeText(contextText)), contextText.tokenize(model.tokenizer));
      const odd = LlamaText([new SpecialToken("BOS"), " leading space", new SpecialTokensText("<|im_start|>"), text, new SpecialToken("EOS")]);
      assert.deepEqual(Array.from(await tokenizer.tokenizeText(odd)), odd.tokenize(model.tokenizer));
    });
  }

  it("keeps the event loop free while a long prompt is tokenised", { timeout: 120_000 }, async (t) => {
    const model = models.get("gemma3-270m")!;
    const tokenizer = open(model, testModel("gemma3-270m"));
    await tokenizer.tokenize("warm the worker up", false);
    const text = mixedText(1_000_000);
    const offThread = await withLoopDelay(() => tokenizer.tokenize(text, false));
    const inPlace = await withLoopDelay(async () => model.tokenize(text, false));
    assert.deepEqual(Array.from(offThread.result), inPlace.result);
    t.diagnostic(`event loop's longest stall tokenising ${text.length} characters: ${inPlace.maxDelayMs.toFixed(0)} ms in place, ${offThread.maxDelayMs.toFixed(0)} ms in the worker`);
    // In place the loop stalls for the whole tokenisation (over a second here); off it, for a copy.
    assert.ok(inPlace.maxDelayMs > 300, `in place: ${inPlace.maxDelayMs} ms`);
    assert.ok(offThread.maxDelayMs < Math.min(150, inPlace.maxDelayMs / 3), `off the event loop: ${offThread.maxDelayMs} ms (in place ${inPlace.maxDelayMs} ms)`);
  });

  it("stops the worker when no long prompt came for a while, and starts it again for the next", { timeout: 120_000 }, async () => {
    const model = models.get("smollm2-135m-instruct")!;
    const tokenizer = open(model, testModel("smollm2-135m-instruct"), { idleMs: 300, onWorkerError: (error) => assert.fail(error) });
    const text = mixedText(20_000);
    assert.deepEqual(Array.from(await tokenizer.tokenize(text, false)), model.tokenize(text, false));
    assert.equal(tokenizer.workerRunning, true);
    await setTimeout(800);
    assert.equal(tokenizer.workerRunning, false, "stopped after 300 ms without work");
    assert.deepEqual(Array.from(await tokenizer.tokenize(text, true)), model.tokenize(text, true));
    assert.equal(tokenizer.workerRunning, true);
  });

  it("tokenises short text in place, and everything in place when the worker cannot start", async () => {
    const model = models.get("smollm2-135m-instruct")!;
    const errors: Error[] = [];
    const broken = open(model, testModel("smollm2-135m-instruct"), { inlineMaxChars: 100, workerModule: new URL("./no-such-module.js", import.meta.url).href, onWorkerError: (error) => errors.push(error) });
    assert.deepEqual(Array.from(await broken.tokenize("short", false)), model.tokenize("short", false));
    assert.equal(errors.length, 0, "short text needs no worker");
    const text = mixedText(5000);
    assert.deepEqual(Array.from(await broken.tokenize(text, true)), model.tokenize(text, true));
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /could not start/);
    assert.deepEqual(Array.from(await broken.tokenize(text, false)), model.tokenize(text, false));
    assert.equal(errors.length, 1, "a failed worker is not retried for every prompt");
    await broken.close();
    await broken.close();
  });
});
