/** Chat completions over HTTP with a real small model (Gemma 3 270M). */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { testModel } from "../helpers/models.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

describe("chat with a real model", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings: { "svc-merlion-13b": testModel("gemma3-270m") }, config: { chat: { contextSize: 1024, sequences: 2 } } });
  });
  after(() => t.close());

  const messages = [{ role: "user", content: "Write a short story about a fisherman in Terengganu." }];
  const chat = (body: Record<string, unknown>) => t.call("POST", "/v1/chat/completions", { messages, temperature: 0, ...body });

  it("streams exactly the text a non-streamed request returns, with the same usage", async () => {
    // cache_prompt false: the second request would otherwise reuse the first one's prompt, and
    // llama.cpp's logits differ in the last bits with how a prompt is batched (a near-tie can
    // then go the other way; test/integration/prompt-cache.test.ts covers the cache).
    const whole = await chat({ max_tokens: 30, cache_prompt: false });
    assert.equal(whole.status, 200);
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ messages, temperature: 0, max_tokens: 30, cache_prompt: false, stream: true, stream_options: { include_usage: true } }),
    });
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = await readSse(response);
    assert.equal(events.at(-1), "[DONE]");
    const chunks = events.slice(0, -1) as any[];
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    assert.equal(text, whole.json.choices[0].message.content);
    assert.deepEqual(chunks.at(-1).usage, whole.json.usage);
    assert.equal(chunks.at(-2).choices[0].finish_reason, "length");
  });

  it("stops at a stop sequence, excludes it, and reports finish_reason stop", async () => {
    const free = (await chat({ max_tokens: 40 })).json.choices[0].message.content as string;
    const words = free.split(/\s+/).filter((w) => w.length > 3);
    const stopWord = words[Math.min(3, words.length - 1)]!;
    const cut = await chat({ max_tokens: 40, stop: [stopWord, "@@never@@"] });
    assert.equal(cut.json.choices[0].finish_reason, "stop");
    assert.equal(cut.json.choices[0].message.content, free.slice(0, free.indexOf(stopWord)));
    assert.ok(cut.json.usage.completion_tokens < 40);
  });

  it("ends with finish_reason length at max_tokens and counts tokens with the model's tokenizer", async () => {
    const res = await chat({ max_tokens: 5 });
    assert.equal(res.json.choices[0].finish_reason, "length");
    assert.equal(res.json.usage.completion_tokens, 5);
    const longer = await t.call("POST", "/v1/chat/completions", { messages: [{ role: "user", content: `${messages[0]!.content} Please.` }], temperature: 0, max_tokens: 1 });
    assert.ok(longer.json.usage.prompt_tokens > res.json.usage.prompt_tokens, "a longer prompt must count more tokens");
  });

  it("produces JSON that parses and satisfies the json_schema", async () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string", maxLength: 30 },
        population: { type: "integer" },
        coastal: { type: "boolean" },
        districts: { type: "array", items: { type: "string", maxLength: 20 }, maxItems: 3 },
      },
      required: ["city", "population", "coastal", "districts"],
      additionalProperties: false,
    };
    const res = await t.call("POST", "/v1/chat/completions", {
      messages: [{ role: "user", content: "Describe Kuala Terengganu as JSON." }],
      temperature: 0,
      max_tokens: 200,
      response_format: { type: "json_schema", json_schema: { name: "city", strict: true, schema } },
    });
    assert.equal(res.status, 200);
    const value = JSON.parse(res.json.choices[0].message.content);
    assert.deepEqual(Object.keys(value).sort(), ["city", "coastal", "districts", "population"]);
    assert.equal(typeof value.city, "string");
    assert.ok(Number.isInteger(value.population));
    assert.equal(typeof value.coastal, "boolean");
    assert.ok(Array.isArray(value.districts) && value.districts.length <= 3 && value.districts.every((d: unknown) => typeof d === "string"));
  });

  it("produces a JSON object for json_object mode", async () => {
    const res = await chat({ max_tokens: 120, response_format: { type: "json_object" } });
    const text = res.json.choices[0].message.content as string;
    if (res.json.choices[0].finish_reason === "stop") assert.equal(typeof JSON.parse(text), "object");
    else assert.match(text, /^\s*[[{]/, "a truncated answer must still be JSON so far");
  });

  it("is reproducible with a seed at temperature > 0, and varies across seeds", async () => {
    const a = await chat({ max_tokens: 20, temperature: 1.2, seed: 42 });
    const b = await chat({ max_tokens: 20, temperature: 1.2, seed: 42 });
    assert.equal(a.json.choices[0].message.content, b.json.choices[0].message.content);
    const others = await Promise.all([1, 2, 3].map((seed) => chat({ max_tokens: 20, temperature: 1.2, seed })));
    const texts = new Set([a, ...others].map((r) => r.json.choices[0].message.content));
    assert.ok(texts.size > 1, "different seeds all gave the same text");
  });

  const weatherTool = {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather in a Malaysian city",
      parameters: { type: "object", properties: { city: { type: "string", maxLength: 40 }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["city", "unit"] },
    },
  };
  const timeTool = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string", maxLength: 40 } }, required: ["zone"] } } };

  it("makes a tool call when the function is named in tool_choice, streamed and not", async () => {
    const body = { messages: [{ role: "user", content: "What is the weather in Ipoh?" }], temperature: 0, max_tokens: 60, tools: [weatherTool, timeTool], tool_choice: { type: "function", function: { name: "get_weather" } } };
    const res = await t.call("POST", "/v1/chat/completions", body);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const choice = res.json.choices[0];
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, null);
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, "function");
    assert.equal(call.function.name, "get_weather");
    const args = JSON.parse(call.function.arguments);
    assert.equal(typeof args.city, "string");
    assert.ok(["celsius", "fahrenheit"].includes(args.unit));

    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true }),
    });
    const chunks = (await readSse(response)).slice(0, -1) as any[];
    const streamed = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(streamed.length, 1);
    assert.equal(streamed[0].index, 0);
    assert.equal(streamed[0].function.name, "get_weather");
    assert.equal(streamed[0].function.arguments, call.function.arguments, "streamed and non-streamed calls differ at temperature 0");
    assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
    assert.ok(!chunks.some((c) => c.choices[0]?.delta.content), "a forced call's arguments must not leak as content");
  });

  it("lets the model choose among tools when tool_choice is required, and continues after a tool result", async () => {
    const res = await t.call("POST", "/v1/chat/completions", { messages: [{ role: "user", content: "What time is it in Kuching?" }], temperature: 0, max_tokens: 80, tools: [weatherTool, timeTool], tool_choice: "required" });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const call = res.json.choices[0].message.tool_calls[0];
    assert.ok(["get_weather", "get_time"].includes(call.function.name));
    assert.doesNotThrow(() => JSON.parse(call.function.arguments));
    // Send the result back, as a client would; the model answers in text.
    const followUp = await t.call("POST", "/v1/chat/completions", {
      messages: [
        { role: "user", content: "What time is it in Kuching?" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "14:05" },
      ],
      temperature: 0,
      max_tokens: 10,
      tools: [weatherTool, timeTool],
      tool_choice: "none",
    });
    assert.equal(followUp.status, 200, JSON.stringify(followUp.json));
    assert.equal(typeof followUp.json.choices[0].message.content, "string");
    assert.ok(!followUp.json.choices[0].message.tool_calls);
  });

  it("shows tools to the model in auto mode (the prompt grows by their description)", async () => {
    const plain = await chat({ max_tokens: 1 });
    const withTools = await chat({ max_tokens: 1, tools: [weatherTool] });
    assert.equal(withTools.status, 200);
    assert.ok(withTools.json.usage.prompt_tokens > plain.json.usage.prompt_tokens + 20, `${withTools.json.usage.prompt_tokens} vs ${plain.json.usage.prompt_tokens}`);
  });
});

