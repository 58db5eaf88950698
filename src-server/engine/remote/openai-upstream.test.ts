import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatEvent, ChatGenerationInput, TextCompletionInput } from "../types.js";
import { chatBody, choiceProbabilities, completionBody, embeddingVectors, firstTokenAlternatives, rerankScores, StreamDecoder } from "./openai-upstream.js";
import { UpstreamFailure } from "./upstream-client.js";

function chatInput(overrides: Partial<ChatGenerationInput> = {}): ChatGenerationInput {
  return {
    messages: [
      { role: "system", content: "Jawab dengan ringkas." },
      { role: "user", content: "Apakah ibu negara Malaysia?" },
    ],
    tools: [],
    toolChoice: "auto",
    responseFormat: { type: "text" },
    stop: [],
    sampling: { temperature: 0.2 },
    ...overrides,
  };
}

function completionInput(overrides: Partial<TextCompletionInput> = {}): TextCompletionInput {
  return { prompt: "Once upon a time", stop: [], sampling: { temperature: 0.8 }, ...overrides };
}

const weatherTool = { name: "get_weather", description: "Current weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

/** A protocol failure whose message matches `message`. */
function protocolFailure(message: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof UpstreamFailure, `not an UpstreamFailure: ${String(error)}`);
    assert.equal(error.kind, "protocol");
    assert.match(error.message, message);
    return true;
  };
}

/** Every event a decoder gives for `chunks`, then its end event. */
function decode(chunks: unknown[]): { texts: string[]; end: Extract<ChatEvent, { type: "end" }> } {
  const decoder = new StreamDecoder("the upstream r1 of 'svc-chat'");
  const texts: string[] = [];
  for (const chunk of chunks) for (const event of decoder.push(chunk)) if (event.type === "text") texts.push(event.text);
  return { texts, end: decoder.end() };
}

function float32Base64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString("base64");
}

function assertClose(actual: ArrayLike<number>, expected: number[], tolerance = 1e-6): void {
  assert.equal(actual.length, expected.length, `length ${actual.length} instead of ${expected.length}`);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i]! - expected[i]!) <= tolerance, `[${i}] = ${actual[i]} instead of ${expected[i]}`);
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

describe("chatBody", () => {
  it("asks for a stream with usage and sends only the sampling fields a request sets", () => {
    const body = chatBody("qwen2.5-7b-instruct", chatInput(), "openai");
    assert.deepEqual(body, {
      model: "qwen2.5-7b-instruct",
      messages: [
        { role: "system", content: "Jawab dengan ringkas." },
        { role: "user", content: "Apakah ibu negara Malaysia?" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
    });
  });

  it("sends OpenAI's extension fields when set: repeat_penalty, or vLLM's repetition_penalty", () => {
    const sampling = { temperature: 0, topP: 0.9, topK: 40, minP: 0.05, seed: 7, frequencyPenalty: 0.1, presencePenalty: 0.2, repeatPenalty: 1.1 };
    const llama = chatBody("m", chatInput({ sampling }), "llama-server");
    assert.equal(llama.temperature, 0);
    assert.equal(llama.top_p, 0.9);
    assert.equal(llama.top_k, 40);
    assert.equal(llama.min_p, 0.05);
    assert.equal(llama.seed, 7);
    assert.equal(llama.frequency_penalty, 0.1);
    assert.equal(llama.presence_penalty, 0.2);
    assert.equal(llama.repeat_penalty, 1.1);
    assert.equal("repetition_penalty" in llama, false);
    const vllm = chatBody("m", chatInput({ sampling }), "vllm");
    assert.equal(vllm.repetition_penalty, 1.1);
    assert.equal("repeat_penalty" in vllm, false);
    const plain = chatBody("m", chatInput({ sampling: { temperature: 1, topP: 0.5 } }), "vllm");
    for (const field of ["top_k", "min_p", "seed", "frequency_penalty", "presence_penalty", "repeat_penalty", "repetition_penalty"]) assert.equal(field in plain, false, `${field} sent although unset`);
    assert.equal(plain.top_p, 0.5);
  });

  it("carries assistant tool calls and tool results in OpenAI's shape", () => {
    const body = chatBody(
      "m",
      chatInput({
        messages: [
          { role: "user", content: "Cuaca di Ipoh?" },
          { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Ipoh"}' }] },
          { role: "tool", toolCallId: "call_1", content: "31°C, cerah" },
          { role: "assistant", content: "Cerah, 31°C.", toolCalls: [] },
        ],
      }),
      "openai",
    );
    assert.deepEqual(body.messages, [
      { role: "user", content: "Cuaca di Ipoh?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Ipoh"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "31°C, cerah" },
      { role: "assistant", content: "Cerah, 31°C." },
    ]);
  });

  it("sends max_tokens (the caller's override first) and stop only when given", () => {
    assert.equal("max_tokens" in chatBody("m", chatInput(), "openai"), false);
    assert.equal("stop" in chatBody("m", chatInput(), "openai"), false);
    assert.equal(chatBody("m", chatInput({ maxTokens: 64 }), "openai").max_tokens, 64);
    assert.equal(chatBody("m", chatInput({ maxTokens: 64 }), "openai", { maxTokens: 1 }).max_tokens, 1);
    assert.deepEqual(chatBody("m", chatInput({ stop: ["\n\n", "END"] }), "openai").stop, ["\n\n", "END"]);
  });

  it("maps tools and tool_choice, and leaves the tools out when toolChoice is none", () => {
    const tools = [weatherTool, { name: "now" }];
    const auto = chatBody("m", chatInput({ tools, toolChoice: "auto" }), "openai");
    assert.deepEqual(auto.tools, [
      { type: "function", function: { name: "get_weather", description: "Current weather of a city", parameters: weatherTool.parameters } },
      { type: "function", function: { name: "now", parameters: { type: "object", properties: {} } } },
    ]);
    assert.equal(auto.tool_choice, "auto");
    assert.equal(chatBody("m", chatInput({ tools, toolChoice: "required" }), "openai").tool_choice, "required");
    assert.deepEqual(chatBody("m", chatInput({ tools, toolChoice: { name: "now" } }), "openai").tool_choice, { type: "function", function: { name: "now" } });
    const none = chatBody("m", chatInput({ tools, toolChoice: "none" }), "openai");
    assert.equal("tools" in none, false);
    assert.equal("tool_choice" in none, false);
    assert.equal("tool_choice" in chatBody("m", chatInput({ toolChoice: "required" }), "openai"), false, "no tools, no tool_choice");
  });

  it("maps the response format", () => {
    assert.equal("response_format" in chatBody("m", chatInput(), "openai"), false);
    assert.deepEqual(chatBody("m", chatInput({ responseFormat: { type: "json_object" } }), "openai").response_format, { type: "json_object" });
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    assert.deepEqual(chatBody("m", chatInput({ responseFormat: { type: "json_schema", name: "reply", schema } }), "openai").response_format, {
      type: "json_schema",
      json_schema: { name: "reply", schema, strict: true },
    });
  });

  it("turns llama-server's prompt cache off only when the request says so", () => {
    assert.equal(chatBody("m", chatInput({ promptCache: false }), "llama-server").cache_prompt, false);
    assert.equal("cache_prompt" in chatBody("m", chatInput({ promptCache: false }), "vllm"), false, "vLLM does not know the field");
    assert.equal("cache_prompt" in chatBody("m", chatInput({ promptCache: true }), "llama-server"), false);
    assert.equal("cache_prompt" in chatBody("m", chatInput(), "llama-server"), false);
  });

  it("asks for the first token's alternatives when logprobs are wanted", () => {
    const body = chatBody("m", chatInput(), "openai", { maxTokens: 1, logprobs: 20 });
    assert.equal(body.logprobs, true);
    assert.equal(body.top_logprobs, 20);
    assert.equal("logprobs" in chatBody("m", chatInput(), "openai"), false);
    assert.equal("top_logprobs" in chatBody("m", chatInput(), "openai"), false);
  });
});

describe("completionBody", () => {
  it("streams the prompt with usage and only the fields set", () => {
    assert.deepEqual(completionBody("smollm2", completionInput(), "openai"), {
      model: "smollm2",
      prompt: "Once upon a time",
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.8,
    });
  });

  it("carries token ids, the FIM suffix, max_tokens, stop and the extension fields", () => {
    const body = completionBody("m", completionInput({ prompt: [1, 2, 3], suffix: "return x", maxTokens: 32, stop: ["\n"], sampling: { temperature: 0, topK: 1, repeatPenalty: 1.05 } }), "vllm");
    assert.deepEqual(body.prompt, [1, 2, 3]);
    assert.equal(body.suffix, "return x");
    assert.equal(body.max_tokens, 32);
    assert.deepEqual(body.stop, ["\n"]);
    assert.equal(body.top_k, 1);
    assert.equal(body.repetition_penalty, 1.05);
    assert.equal("repeat_penalty" in body, false);
    assert.equal(completionBody("m", completionInput({ sampling: { temperature: 0, repeatPenalty: 1.05 } }), "ollama").repeat_penalty, 1.05);
  });

  it("turns llama-server's prompt cache off only when the request says so", () => {
    assert.equal(completionBody("m", completionInput({ promptCache: false }), "llama-server").cache_prompt, false);
    assert.equal("cache_prompt" in completionBody("m", completionInput({ promptCache: false }), "pustaka"), false);
    assert.equal("cache_prompt" in completionBody("m", completionInput(), "llama-server"), false);
  });
});

describe("StreamDecoder", () => {
  it("yields text deltas in order, from chat deltas and completion text, and only of the first choice", () => {
    const { texts, end } = decode([
      { choices: [{ index: 0, delta: { role: "assistant", content: "" } }] },
      { choices: [{ index: 0, delta: { content: "Kuala" } }, { index: 1, delta: { content: "Putrajaya" } }] },
      { choices: [{ index: 0, delta: { content: " Lumpur" } }] },
      { choices: [{ index: 0, text: "." }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    ]);
    assert.deepEqual(texts, ["Kuala", " Lumpur", "."]);
    assert.equal(end.finishReason, "stop");
    assert.deepEqual(end.toolCalls, []);
    assert.equal(end.completionTokens, 3, "without usage: one token per text chunk");
  });

  it("joins tool-call fragments across chunks by index", () => {
    const { texts, end } = decode([
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_", arguments: "" } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: "call_b", function: { name: "get_weather", arguments: '{"city":' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: "weather", arguments: '{"city":"Ipoh"}' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: '"Johor Bahru"}' } }] } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    ]);
    assert.deepEqual(texts, []);
    assert.equal(end.finishReason, "tool_calls");
    assert.deepEqual(end.toolCalls, [
      { id: "call_a", name: "get_weather", arguments: '{"city":"Ipoh"}' },
      { id: "call_b", name: "get_weather", arguments: '{"city":"Johor Bahru"}' },
    ]);
  });

  it("reports tool_calls whenever calls were made, and fills in a missing id and arguments", () => {
    const { end } = decode([{ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: "now" } }] }, finish_reason: "stop" }] }]);
    assert.equal(end.finishReason, "tool_calls", "llama-server may say stop after a call");
    assert.deepEqual(end.toolCalls, [{ id: "call_0", name: "now", arguments: "{}" }]);
  });

  it("maps the finish reasons", () => {
    const finish = (reason: string) => decode([{ choices: [{ index: 0, delta: { content: "x" }, finish_reason: reason }] }]).end.finishReason;
    assert.equal(finish("length"), "length");
    assert.equal(finish("stop"), "stop");
    assert.equal(finish("tool_calls"), "tool_calls");
    assert.equal(finish("function_call"), "tool_calls");
    assert.equal(finish("content_filter"), "stop");
  });

  it("uses the upstream's usage: prompt, completion and cached tokens", () => {
    const { end } = decode([
      { choices: [{ index: 0, delta: { content: "Ya" }, finish_reason: "stop" }] },
      { choices: [], usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129, prompt_tokens_details: { cached_tokens: 96 } } },
    ]);
    assert.equal(end.promptTokens, 120);
    assert.equal(end.completionTokens, 9);
    assert.equal(end.cachedTokens, 96);
  });

  it("reads llama-server's cache_n when the usage has no cached tokens, and leaves promptTokens out without usage", () => {
    const withTimings = decode([
      { choices: [{ index: 0, delta: { content: "Ya" }, finish_reason: "stop" }], timings: { cache_n: 57, prompt_n: 3 } },
      { choices: [], usage: { prompt_tokens: 60, completion_tokens: 1, prompt_tokens_details: null } },
    ]).end;
    assert.equal(withTimings.cachedTokens, 57);
    assert.equal(withTimings.promptTokens, 60);
    const bare = decode([{ choices: [{ index: 0, delta: { content: "Ya" }, finish_reason: "stop" }] }]).end;
    assert.equal(bare.cachedTokens, 0);
    assert.equal("promptTokens" in bare, false);
  });

  it("refuses a stream that ends without a finish reason", () => {
    const decoder = new StreamDecoder("the upstream r2 of 'svc-chat'");
    decoder.push({ choices: [{ index: 0, delta: { content: "Kuala" } }] });
    assert.throws(() => decoder.end(), protocolFailure(/r2 of 'svc-chat' ended its answer without a finish reason/));
  });

  it("refuses events that are not objects and tool calls with absurd indexes", () => {
    const decoder = new StreamDecoder("the upstream r1 of 'svc-chat'");
    assert.throws(() => decoder.push("data"), protocolFailure(/not an object/));
    assert.throws(() => decoder.push(null), protocolFailure(/not an object/));
    assert.throws(() => decoder.push({ choices: [{ index: 0, delta: { tool_calls: [{ index: 300, function: { name: "x" } }] } }] }), protocolFailure(/tool call with index 300/));
    assert.throws(() => decoder.push({ choices: [{ index: 0, delta: { tool_calls: [{ index: -1, function: { name: "x" } }] } }] }), protocolFailure(/tool call with index -1/));
  });
});

describe("firstTokenAlternatives", () => {
  it("reads the first token and its alternatives as probabilities", () => {
    const alternatives = firstTokenAlternatives({
      choices: [
        {
          logprobs: {
            content: [
              { token: "Yes", logprob: Math.log(0.7), top_logprobs: [{ token: "Yes", logprob: Math.log(0.7) }, { token: "No", logprob: Math.log(0.2) }, { token: " yes", logprob: Math.log(0.05) }] },
              { token: ".", logprob: 0, top_logprobs: [{ token: "!", logprob: -3 }] },
            ],
          },
        },
      ],
    });
    assert.ok(alternatives);
    assert.deepEqual([...alternatives.keys()], ["Yes", "No", " yes"], "the first token once, then its alternatives; never the second token's");
    assertClose([...alternatives.values()], [0.7, 0.2, 0.05], 1e-12);
  });

  it("is null when the answer carries no log probabilities", () => {
    assert.equal(firstTokenAlternatives({ choices: [{ delta: { content: "Yes" } }] }), null);
    assert.equal(firstTokenAlternatives({ choices: [{ logprobs: null }] }), null);
    assert.equal(firstTokenAlternatives({ choices: [{ logprobs: { content: [] } }] }), null);
    assert.equal(firstTokenAlternatives({ choices: [], usage: { prompt_tokens: 5 } }), null);
  });
});

describe("choiceProbabilities", () => {
  it("normalises over the choices, matching tokens case-insensitively without surrounding space", () => {
    const alternatives = new Map([
      ["Yes", 0.5],
      [" yes", 0.1],
      ["NO ", 0.2],
      ["Maybe", 0.2],
    ]);
    assertClose(choiceProbabilities(alternatives, ["yes", "no"]), [0.75, 0.25]);
  });

  it("counts a token that begins a choice, not one that goes beyond it nor a blank one", () => {
    const alternatives = new Map([
      ["y", 0.3],
      ["yes!", 0.4],
      [" ", 0.2],
      ["n", 0.1],
    ]);
    assertClose(choiceProbabilities(alternatives, [" Yes ", "no"]), [0.75, 0.25]);
  });

  it("is uniform when no choice shows among the alternatives", () => {
    assertClose(choiceProbabilities(new Map([["Perhaps", 0.9]]), ["yes", "no", "unsure"]), [1 / 3, 1 / 3, 1 / 3]);
    assertClose(choiceProbabilities(new Map(), ["yes", "no"]), [0.5, 0.5]);
  });
});

describe("embeddingVectors", () => {
  it("orders the vectors by index, normalises them to unit length and reads the usage", () => {
    const { vectors, promptTokens } = embeddingVectors(
      {
        data: [
          { index: 1, embedding: [0, 2] },
          { index: 0, embedding: [3, 4] },
        ],
        usage: { prompt_tokens: 11 },
      },
      2,
      "r1",
    );
    assert.equal(vectors.length, 2);
    assert.ok(vectors.every((v) => v instanceof Float32Array));
    assertClose(vectors[0]!, [0.6, 0.8]);
    assertClose(vectors[1]!, [0, 1]);
    assert.equal(promptTokens, 11);
  });

  it("takes the position for a missing index, and null prompt tokens without usage", () => {
    const { vectors, promptTokens } = embeddingVectors({ data: [{ embedding: [1, 0, 0] }, { embedding: [0, 0, 1] }] }, 2, "r1");
    assertClose(vectors[0]!, [1, 0, 0]);
    assertClose(vectors[1]!, [0, 0, 1]);
    assert.equal(promptTokens, null);
  });

  it("decodes base64 float32 vectors", () => {
    const { vectors } = embeddingVectors({ data: [{ index: 0, embedding: float32Base64([0, -6, 8]) }, { index: 1, embedding: float32Base64([0.6, 0.8, 0]) }] }, 2, "r1");
    assertClose(vectors[0]!, [0, -0.6, 0.8]);
    assertClose(vectors[1]!, [0.6, 0.8, 0]);
  });

  it("refuses the wrong number of vectors, duplicate or out-of-range indexes", () => {
    const v = [1, 0];
    assert.throws(() => embeddingVectors({ data: [{ index: 0, embedding: v }] }, 2, "the upstream r1"), protocolFailure(/r1 answered 1 embeddings for 2 inputs/));
    assert.throws(() => embeddingVectors({ object: "list" }, 1, "r1"), protocolFailure(/answered no embeddings for 1 inputs/));
    assert.throws(() => embeddingVectors({ data: [{ index: 0, embedding: v }, { index: 0, embedding: v }] }, 2, "r1"), protocolFailure(/index 0/));
    assert.throws(() => embeddingVectors({ data: [{ index: 0, embedding: v }, { index: 2, embedding: v }] }, 2, "r1"), protocolFailure(/index 2/));
    assert.throws(() => embeddingVectors({ data: [{ index: 0.5, embedding: v }] }, 1, "r1"), protocolFailure(/index 0.5/));
  });

  it("refuses vectors of mixed widths, empty vectors and values that are not numbers", () => {
    assert.throws(() => embeddingVectors({ data: [{ embedding: [1, 0] }, { embedding: [1, 0, 0] }] }, 2, "r1"), protocolFailure(/different widths/));
    assert.throws(() => embeddingVectors({ data: [{ embedding: [] }] }, 1, "r1"), protocolFailure(/different widths/));
    assert.throws(() => embeddingVectors({ data: [{ embedding: [[1, 0], [0, 1]] }] }, 1, "r1"), protocolFailure(/not a list of numbers/), "per-token vectors (--pooling none)");
    assert.throws(() => embeddingVectors({ data: [{ embedding: [1, "0"] }] }, 1, "r1"), protocolFailure(/not a list of numbers/));
    assert.throws(() => embeddingVectors({ data: [{ embedding: [1, null] }] }, 1, "r1"), protocolFailure(/not a list of numbers/));
    assert.throws(() => embeddingVectors({ data: [{ embedding: { values: [1] } }] }, 1, "r1"), protocolFailure(/neither numbers nor base64/));
    assert.throws(() => embeddingVectors({ data: [{ embedding: Buffer.from([1, 2, 3, 4, 5, 6]).toString("base64") }] }, 1, "r1"), protocolFailure(/base64 embedding of 6 bytes/));
  });
});

describe("rerankScores", () => {
  it("keeps probabilities as they are, in document order", () => {
    const { scores, promptTokens } = rerankScores(
      {
        results: [
          { index: 2, relevance_score: 0.05 },
          { index: 0, relevance_score: 0.9 },
          { index: 1, score: 0.4 },
        ],
        usage: { prompt_tokens: 300, total_tokens: 300 },
      },
      3,
      "vllm",
      "r1",
    );
    assert.deepEqual(scores, [0.9, 0.4, 0.05]);
    assert.equal(promptTokens, 300);
  });

  it("squashes llama-server's logits with a sigmoid, even those inside 0–1", () => {
    const { scores } = rerankScores({ results: [{ index: 0, relevance_score: 0.5 }, { index: 1, relevance_score: 0 }] }, 2, "llama-server", "r1");
    assertClose(scores, [sigmoid(0.5), 0.5], 1e-12);
  });

  it("squashes all the scores, never some, when any is outside 0–1", () => {
    const { scores } = rerankScores({ results: [{ index: 0, relevance_score: 0.9 }, { index: 1, relevance_score: -2.5 }, { index: 2, relevance_score: 0.1 }] }, 3, "pustaka", "r1");
    assertClose(scores, [sigmoid(0.9), sigmoid(-2.5), sigmoid(0.1)], 1e-12);
    const high = rerankScores({ results: [{ index: 0, relevance_score: 4 }, { index: 1, relevance_score: 0.5 }] }, 2, "openai", "r1").scores;
    assertClose(high, [sigmoid(4), sigmoid(0.5)], 1e-12);
  });

  it("reads total_tokens when prompt_tokens is absent, and null without usage", () => {
    assert.equal(rerankScores({ results: [{ index: 0, relevance_score: 0.5 }], usage: { total_tokens: 42 } }, 1, "vllm", "r1").promptTokens, 42);
    assert.equal(rerankScores({ results: [{ index: 0, relevance_score: 0.5 }] }, 1, "vllm", "r1").promptTokens, null);
  });

  it("refuses missing documents and results it should not have", () => {
    assert.throws(() => rerankScores({ results: [{ index: 0, relevance_score: 0.5 }] }, 2, "vllm", "the upstream r1"), protocolFailure(/r1 ranked 1 of 2 documents/));
    assert.throws(() => rerankScores({ data: [] }, 1, "vllm", "r1"), protocolFailure(/no rerank results/));
    assert.throws(() => rerankScores({ results: [{ index: 1, relevance_score: 0.5 }] }, 1, "vllm", "r1"), protocolFailure(/index 1/));
    assert.throws(() => rerankScores({ results: [{ relevance_score: 0.5 }] }, 1, "vllm", "r1"), protocolFailure(/index undefined/));
    assert.throws(() => rerankScores({ results: [{ index: 0, relevance_score: "0.5" }] }, 1, "vllm", "r1"), protocolFailure(/index 0/));
    assert.throws(() => rerankScores({ results: [{ index: 0, relevance_score: null }] }, 1, "vllm", "r1"), protocolFailure(/index 0/));
  });
});
