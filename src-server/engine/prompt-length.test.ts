/**
 * The character bound on prompts: no token stands for more characters than the vocabulary's
 * longest piece (checked on real vocabularies and awkward text), and none is claimed for
 * tokenizers that fold text.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getLlama, LlamaLogLevel, LlamaText, SpecialToken, SpecialTokensText, type Llama, type LlamaModel } from "node-llama-cpp";
import { testModel } from "../../test/helpers/models.js";
import { ServiceError } from "../errors.js";
import { llamaTextChars, maxTokenChars, refuseOverlong } from "./prompt-length.js";

const AWKWARD = [
  "Once upon a time, in Kuala Terengganu, a fisherman came home.",
  " ".repeat(3000),
  "\n".repeat(3000),
  "\t \n".repeat(1000),
  "a".repeat(3000),
  "1234567890".repeat(300),
  "漢字仮名交じり文".repeat(300),
  "😀🎉👍🏽".repeat(300),
  "<|im_start|><start_of_turn><|endoftext|>".repeat(100),
  "                                                                        ".repeat(40) + "x",
];

describe("prompt length", () => {
  let llama: Llama;
  const models = new Map<string, LlamaModel>();
  before(async () => {
    llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
    for (const id of ["smollm2-135m-instruct", "gemma3-270m", "qwen2.5-coder-1.5b", "all-minilm-l6-v2"] as const) models.set(id, await llama.loadModel({ modelPath: testModel(id), vocabOnly: true }));
  });
  after(async () => {
    for (const model of models.values()) await model.dispose();
    await llama.dispose();
  });

  it("takes the longest vocabulary piece of byte-pair and SentencePiece vocabularies, and none for WordPiece", () => {
    assert.equal(maxTokenChars(models.get("smollm2-135m-instruct")!), 81);
    assert.equal(maxTokenChars(models.get("gemma3-270m")!), 31);
    assert.equal(maxTokenChars(models.get("qwen2.5-coder-1.5b")!), 128);
    assert.equal(maxTokenChars(models.get("all-minilm-l6-v2")!), null, "WordPiece drops white space: no bound holds");
  });

  it("never claims fewer tokens than the tokenizer gives, on text made to pack characters into tokens", () => {
    for (const [id, model] of models) {
      const perToken = maxTokenChars(model);
      if (perToken === null) continue;
      for (const text of AWKWARD) {
        for (const special of [false, true]) {
          const tokens = model.tokenize(text, special).length;
          assert.ok(tokens * perToken >= text.length, `${id}: ${JSON.stringify(text.slice(0, 20))} is ${text.length} characters in ${tokens} tokens of at most ${perToken}`);
        }
      }
    }
  });

  it("measures a rendered prompt by its text, special tokens written out included", () => {
    assert.equal(llamaTextChars(LlamaText([new SpecialToken("BOS"), new SpecialTokensText("<start_of_turn>"), "user\n", "Hello", new SpecialToken("EOS")])), 15 + 5 + 5);
  });

  it("refuses text longer than the context can hold, with what could fit", () => {
    const model = models.get("smollm2-135m-instruct")!;
    const prompt = { text: "the prompt", shorten: "the prompt" };
    refuseOverlong(model, 2048, 2048 * 81, prompt, { in: "prompt" });
    assert.throws(
      () => refuseOverlong(model, 2048, 2048 * 81 + 1, prompt, { in: "prompt" }),
      (error: unknown) => error instanceof ServiceError && error.code === "context_length_exceeded" && error.location?.in === "prompt" && /at most 165888 characters can fit \(the prompt: 165889 characters\)/.test(error.message),
    );
    refuseOverlong(models.get("all-minilm-l6-v2")!, 512, 10_000_000, prompt, { in: "prompt" });
  });
});
