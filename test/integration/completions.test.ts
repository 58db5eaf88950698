/**
 * Legacy text completions (`POST /v1/completions`) over HTTP with real models: Gemma 3
 * 270M (a pretrained base model, the kind completions are for) and, for fill-in-the-middle,
 * Qwen2.5-Coder 1.5B (which has FIM tokens).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { testModel } from "../helpers/models.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

describe("text completions with real models", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      bindings: { base: testModel("gemma3-270m"), coder: testModel("qwen2.5-coder-1.5b"), e5: testModel("multilingual-e5-small") },
      config: { chat: { contextSize: 512, sequences: 2 } },
    });
  });
  after(() => t.close());

  const complete = (body: Record<string, unknown>) => t.call("POST", "/v1/completions", { model: "base", temperature: 0, ...body });
  const stream = async (body: Record<string, unknown>) => {
    const response = await fetch(`${t.url}/v1/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "base", temperature: 0, stream: true, ...body }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    return readSse(response);
  };

  it("continues the prompt as written, with no chat template around it", async () => {
    const res = await complete({ prompt: "The Eiffel Tower is in the city of", max_tokens: 6 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.object, "text_completion");
    assert.match(res.json.id, /^cmpl-/);
    assert.equal(res.json.model, "base");
    assert.equal(res.json.choices.length, 1);
    assert.equal(res.json.choices[0].index, 0);
    assert.equal(res.json.choices[0].logprobs, null);
    assert.match(res.json.choices[0].text, /Paris/);
    assert.equal(res.json.usage.total_tokens, res.json.usage.prompt_tokens + res.json.usage.completion_tokens);
    // Gemma's tokenizer: BOS + the nine words; a chat template would add a dozen more tokens.
    assert.ok(res.json.usage.prompt_tokens <= 11, `prompt_tokens ${res.json.usage.prompt_tokens}`);
  });

  it("streams exactly the text a non-streamed request returns, then usage, then [DONE]", async () => {
    // cache_prompt false: as in chat.test.ts, a reused prompt may break a near-tie the other way.
    const whole = await complete({ prompt: "Kuala Lumpur is the capital of", max_tokens: 12, cache_prompt: false });
    const events = await stream({ prompt: "Kuala Lumpur is the capital of", max_tokens: 12, cache_prompt: false, stream_options: { include_usage: true } });
    assert.equal(events.at(-1), "[DONE]");
    const chunks = events.slice(0, -1) as any[];
    assert.ok(chunks.every((c) => c.object === "text_completion" && c.id === chunks[0].id));
    const text = chunks.flatMap((c) => c.choices.map((choice: any) => choice.text)).join("");
    assert.equal(text, whole.json.choices[0].text);
    assert.equal(chunks.at(-2).choices[0].finish_reason, "length");
    assert.deepEqual(chunks.at(-1).choices, []);
    assert.deepEqual(chunks.at(-1).usage, whole.json.usage);
  });

  it("echoes the prompt, stops at a stop sequence, and answers several prompts as several choices", async () => {
    const prompt = "Once upon a time, in a small village by the sea,";
    const free = (await complete({ prompt, max_tokens: 24 })).json.choices[0].text as string;
    const echoed = await complete({ prompt, max_tokens: 24, echo: true });
    assert.equal(echoed.json.choices[0].text, prompt + free);

    const word = free.split(/\s+/).filter((w) => w.length > 3)[2]!;
    const cut = await complete({ prompt, max_tokens: 24, stop: [word] });
    assert.equal(cut.json.choices[0].finish_reason, "stop");
    assert.equal(cut.json.choices[0].text, free.slice(0, free.indexOf(word)));

    const two = await complete({ prompt: [prompt, "The Eiffel Tower is in the city of"], max_tokens: 6 });
    assert.equal(two.status, 200);
    assert.deepEqual(two.json.choices.map((c: any) => c.index), [0, 1]);
    assert.equal(two.json.choices[0].text, free.slice(0, two.json.choices[0].text.length));
    assert.match(two.json.choices[1].text, /Paris/);
    assert.equal(two.json.usage.completion_tokens, 12);

    const streamed = (await stream({ prompt: [prompt, "The Eiffel Tower is in the city of"], max_tokens: 6 })).slice(0, -1) as any[];
    for (const index of [0, 1]) {
      const text = streamed.flatMap((c) => c.choices.filter((choice: any) => choice.index === index).map((choice: any) => choice.text)).join("");
      assert.equal(text, two.json.choices[index].text);
    }
  });

  it("takes a prompt as token ids, and refuses ids outside the vocabulary by position", async () => {
    const ids = await complete({ prompt: [818, 5279, 3207, 529, 7001, 563], max_tokens: 4 });
    assert.equal(ids.status, 200, JSON.stringify(ids.json));
    assert.equal(ids.json.usage.prompt_tokens, 7, "the six ids and the BOS the model wants");
    const bad = await complete({ prompt: [818, 99_999_999], max_tokens: 4 });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, "invalid_token");
    assert.equal(bad.json.error.param, "prompt");
    assert.match(bad.json.error.message, /position 1/);
  });

  it("fills in the middle with a model that has FIM tokens", async () => {
    const res = await t.call("POST", "/v1/completions", {
      model: "coder",
      prompt: "def add(a, b):\n    return ",
      suffix: "\n\n\nprint(add(2, 3))\n",
      max_tokens: 8,
      temperature: 0,
    });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.match(res.json.choices[0].text, /^\s*a \+ b/);
  });

  it("refuses what it cannot do with the field named", async () => {
    const fim = await complete({ prompt: "def add(a, b):", suffix: "print(add(1, 2))", max_tokens: 4 });
    assert.equal(fim.status, 400);
    assert.equal(fim.json.error.code, "fim_not_supported");
    assert.equal(fim.json.error.param, "suffix");

    const long = await complete({ prompt: "banjir ".repeat(600), max_tokens: 4 });
    assert.equal(long.status, 400);
    assert.equal(long.json.error.code, "context_length_exceeded");
    assert.equal(long.json.error.param, "prompt");
    const secondLong = await complete({ prompt: ["hello", "banjir ".repeat(600)], max_tokens: 4 });
    assert.equal(secondLong.json.error.param, "prompt.1");
    const tooMany = await complete({ prompt: "hello", max_tokens: 600 });
    assert.equal(tooMany.json.error.code, "context_length_exceeded");
    assert.equal(tooMany.json.error.param, "max_tokens");

    const embedder = await complete({ model: "e5", prompt: "hello", max_tokens: 4 });
    assert.equal(embedder.status, 400);
    assert.equal(embedder.json.error.code, "model_not_supported");

    for (const [body, param] of [
      [{ prompt: [] }, "prompt"],
      [{ prompt: "x", n: 2 }, "n"],
      [{ prompt: "x", best_of: 3 }, "best_of"],
      [{ prompt: "x", logprobs: 5 }, "logprobs"],
      [{ prompt: "x", logit_bias: { "50256": -100 } }, "logit_bias"],
      [{ prompt: "x", max_tokens: 0 }, "max_tokens"],
      [{ prompt: "x", stream_options: { include_usage: true } }, "stream_options"],
      [{ prompt: "x", frobnicate: true }, null],
    ] as const) {
      const res = await complete(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error.type, "invalid_request_error");
      if (param) assert.equal(res.json.error.param, param, JSON.stringify(res.json));
    }
  });

  it("lists the context a request really gets, and enforces exactly that", async () => {
    const model = (await t.call("GET", "/v1/models/base")).json;
    assert.equal(model.context_length, 512, "the configured context, not the model's own");
    assert.equal(model.max_context_length, 32768, "Gemma 3 270M's trained context");
    const prompt = (await complete({ prompt: "Hello there", max_tokens: 1 })).json.usage.prompt_tokens as number;
    // Stop strings end it at once: admission is what is measured, not a 500-token story.
    const fits = await complete({ prompt: "Hello there", max_tokens: model.context_length - prompt, stop: [" ", "\n", ",", ".", "!"] });
    assert.equal(fits.status, 200, JSON.stringify(fits.json));
    const over = await complete({ prompt: "Hello there", max_tokens: model.context_length - prompt + 1 });
    assert.equal(over.json.error.code, "context_length_exceeded");
    const embedder = (await t.call("GET", "/v1/models/e5")).json;
    assert.equal(embedder.context_length, 512);
  });

  it("works with the official openai client, streamed and not", async () => {
    const client = new OpenAI({ apiKey: t.key, baseURL: `${t.url}/v1` });
    const whole = await client.completions.create({ model: "base", prompt: "The Eiffel Tower is in the city of", max_tokens: 6, temperature: 0 });
    assert.match(whole.choices[0]!.text, /Paris/);
    assert.equal(whole.choices[0]!.finish_reason, "length");
    const parts: string[] = [];
    for await (const chunk of await client.completions.create({ model: "base", prompt: "The Eiffel Tower is in the city of", max_tokens: 6, temperature: 0, stream: true })) {
      parts.push(chunk.choices[0]?.text ?? "");
    }
    assert.equal(parts.join(""), whole.choices[0]!.text);
  });

  it("records each completion in the audit log with the prompt's hash, never the prompt", async () => {
    const prompt = "Laporan banjir Kelantan menyatakan bahawa";
    await complete({ prompt, max_tokens: 3 });
    const events = (await t.call("GET", "/v1/audit/events?type=text.completion&limit=100")).json.data as any[];
    const mine = events.find((e) => e.data.prompt_sha256 && e.data.completion_tokens === 3 && JSON.stringify(e).includes("base"));
    assert.ok(mine, JSON.stringify(events.slice(0, 2)));
    assert.equal(mine.outcome, "success");
    assert.ok(!JSON.stringify(events).includes("Kelantan"));
  });
});
