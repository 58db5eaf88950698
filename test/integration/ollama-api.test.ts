/**
 * The Ollama API (`/api/*`) through the official `ollama` npm client against the real server
 * with real models: chat and generate (NDJSON streams and single answers), embed and the older
 * embeddings (the same vectors as `/v1/embeddings`), list, show, ps, version, structured output
 * with a JSON Schema, tool calls in Ollama's shape; keys, scopes, rate-limit headers and the
 * audit trail as on every route; bad input answered in Ollama's error shape, never a 500.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import canonicalize from "canonicalize";
import { Ollama, type ChatResponse, type Message, type Tool } from "ollama";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const WEATHER: Tool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a Malaysian city",
    parameters: { type: "object", properties: { city: { type: "string", enum: ["Ipoh", "Kuantan", "Kota Bharu"] } }, required: ["city"] },
  },
};

/** Greedy, short: the same request gives the same text (the prompt cache is off on this server). */
const greedy = (numPredict: number) => ({ temperature: 0, num_predict: numPredict });

/** Whether `version` is at least `min` (dotted numbers). */
const atLeast = (version: string, min: string) => {
  const [a, b] = [version, min].map((v) => v.split(".").map(Number));
  for (let i = 0; i < 3; i++) if (a![i] !== b![i]) return a![i]! > b![i]!;
  return true;
};

describe("the Ollama API with the official ollama client", () => {
  let t: TestServer;
  let ollama: Ollama;
  let limitedKey: string;
  let noInferenceKey: string;
  const raw = (route: string, init: { method?: string; body?: string; key?: string | null; type?: string | null } = {}) => {
    const headers: Record<string, string> = {};
    if (init.key !== null) headers.authorization = `Bearer ${init.key ?? t.key}`;
    if (init.type !== null && init.body !== undefined) headers["content-type"] = init.type ?? "application/json";
    return fetch(t.url + route, { method: init.method ?? (init.body === undefined ? "GET" : "POST"), headers, body: init.body });
  };
  /** An error answer in Ollama's shape: `{"error": "…"}` and nothing else. */
  const ollamaError = async (res: Response, status: number, pattern: RegExp) => {
    const text = await res.text();
    assert.equal(res.status, status, text);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const body = JSON.parse(text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ["error"], text);
    assert.equal(typeof body.error, "string");
    assert.match(body.error as string, pattern);
  };
  /** The lines of an NDJSON answer, each parsed. */
  const ndjson = async (res: Response) => {
    assert.match(res.headers.get("content-type") ?? "", /^application\/x-ndjson/);
    const text = await res.text();
    assert.ok(text.endsWith("\n"), "every line ends with a newline");
    return text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>);
  };

  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), embed: testModel("all-minilm-l6-v2"), coder: testModel("qwen2.5-coder-1.5b") },
      config: { chat: { contextSize: 2048, sequences: 2, promptCache: false }, limits: { maxJsonBodyBytes: 1_000_000 } },
    });
    ollama = new Ollama({ host: t.url, headers: { Authorization: `Bearer ${t.key}` } });
    const limited = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "ollama-limited", scopes: ["inference"] })).json;
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/api_keys/${limited.id}`, { rate_limit_tier: "default" })).status, 200);
    limitedKey = limited.secret;
    noInferenceKey = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "ollama-rag-only", scopes: ["rag.read"] })).json.secret;
  });
  after(() => t?.close());

  it("chats: the stream's lines add up to the single answer, and the last one carries Ollama's timings", async () => {
    const messages: Message[] = [{ role: "system", content: "You are a helpful assistant." }, { role: "user", content: "Name a fruit that grows in Malaysia." }];
    const whole = await ollama.chat({ model: "chat", messages, options: greedy(16) });
    assert.equal(whole.model, "chat");
    assert.equal(whole.done, true);
    assert.equal(whole.done_reason, "length");
    assert.equal(whole.message.role, "assistant");
    assert.ok(whole.message.content.length > 0);
    assert.equal(whole.eval_count, 16);
    assert.ok(whole.prompt_eval_count > 10);
    for (const key of ["total_duration", "load_duration", "prompt_eval_duration", "eval_duration"] as const) {
      assert.ok(Number.isInteger(whole[key]) && whole[key] >= 0, `${key} ${whole[key]}`);
    }
    assert.ok(whole.total_duration >= whole.prompt_eval_duration + whole.eval_duration, "nanoseconds that add up");
    assert.ok(!Number.isNaN(Date.parse(String(whole.created_at))), "created_at is an ISO time");

    const parts: ChatResponse[] = [];
    for await (const part of await ollama.chat({ model: "chat:latest", messages, options: greedy(16), stream: true })) parts.push(part);
    assert.ok(parts.length >= 3, `${parts.length} lines`);
    assert.equal(parts.map((p) => p.message.content).join(""), whole.message.content);
    assert.deepEqual(parts.map((p) => p.done), [...parts.slice(1).map(() => false), true]);
    const last = parts.at(-1)!;
    assert.equal(last.model, "chat:latest", "the name as the client sent it");
    assert.deepEqual([last.done_reason, last.eval_count, last.prompt_eval_count], ["length", 16, whole.prompt_eval_count]);
  });

  it("streams NDJSON when stream is absent (Ollama's default), as curl sends it (no JSON content type)", async () => {
    const res = await raw("/api/chat", { body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Hi" }], options: greedy(4) }), type: "application/x-www-form-urlencoded" });
    assert.equal(res.status, 200);
    const lines = await ndjson(res);
    assert.equal(lines.at(-1)!.done, true);
    assert.equal(lines.at(-1)!.eval_count, 4);
    assert.ok(lines.slice(0, -1).every((l) => l.done === false && typeof l.message.content === "string"));
  });

  it("generates from a prompt, streamed and not, in the chat template or raw", async () => {
    const whole = await ollama.generate({ model: "chat", prompt: "Write one word about the sea.", system: "Be brief.", options: greedy(8) });
    assert.equal(whole.done, true);
    assert.equal(whole.eval_count, 8);
    assert.ok((whole.response ?? "").length > 0);
    const parts = [];
    for await (const part of await ollama.generate({ model: "chat", prompt: "Write one word about the sea.", system: "Be brief.", options: greedy(8), stream: true })) parts.push(part);
    assert.equal(parts.map((p) => p.response).join(""), whole.response);
    assert.equal(parts.at(-1)!.done_reason, "length");
    // raw: the prompt continued as it is, exactly as /v1/completions continues it.
    const continued = await ollama.generate({ model: "chat", prompt: "One, two, three,", raw: true, options: greedy(6) });
    const legacy = await t.call("POST", "/v1/completions", { model: "chat", prompt: "One, two, three,", max_tokens: 6, temperature: 0, top_p: 0.9, top_k: 40 });
    assert.equal(continued.response, legacy.json.choices[0].text);
    assert.equal(continued.prompt_eval_count, legacy.json.usage.prompt_tokens);
  });

  it("loads a model for a request without a prompt, and answers keep_alive 0 with 'unload'", async () => {
    const loaded = await ollama.chat({ model: "chat", messages: [] });
    assert.deepEqual([loaded.done, loaded.done_reason, loaded.message.content], [true, "load", ""]);
    const generateLoad = await ollama.generate({ model: "chat", prompt: "" });
    assert.equal(generateLoad.done_reason, "load");
    const unload = await ollama.generate({ model: "chat", prompt: "", keep_alive: 0 });
    assert.equal(unload.done_reason, "unload");
    for (const keepAlive of ["10m", "1h30m", -1, 300, "0s"]) assert.equal((await ollama.chat({ model: "chat", messages: [], keep_alive: keepAlive })).done, true, String(keepAlive));
    await assert.rejects(ollama.chat({ model: "chat", messages: [], keep_alive: "ten minutes" }), (e: any) => e.status_code === 400 && /keep_alive: invalid duration/.test(e.error));
    assert.ok((await ollama.ps()).models.some((m) => m.name === "chat:latest"), "the loaded model is listed");
  });

  it("embeds one input and a batch: the vectors /v1/embeddings gives, of the model's width", async () => {
    const texts = ["Kucing tidur di atas tikar.", "The cat sleeps on the mat.", "Harga minyak naik minggu ini."];
    const batch = await ollama.embed({ model: "embed", input: texts });
    assert.equal(batch.model, "embed");
    assert.equal(batch.embeddings.length, 3);
    for (const v of batch.embeddings) assert.equal(v.length, 384, "all-MiniLM-L6-v2's dimensions");
    assert.ok(batch.prompt_eval_count > 10);
    // The vectors /v1/embeddings gives for the same inputs (llama.cpp's sums vary in the last
    // bits of a float32 from one evaluation to the next, so to within 1e-6).
    const same = (a: number[], b: number[], what: string) => {
      assert.equal(a.length, b.length, what);
      const worst = Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
      assert.ok(worst < 1e-6, `${what}: differs by ${worst}`);
    };
    const openai = (await t.call("POST", "/v1/embeddings", { model: "embed", input: texts })).json;
    batch.embeddings.forEach((v, i) => same(v, openai.data[i].embedding, `input ${i}`));
    const one = await ollama.embed({ model: "embed:latest", input: texts[0]! });
    assert.equal(one.embeddings.length, 1);
    same(one.embeddings[0]!, (await t.call("POST", "/v1/embeddings", { model: "embed", input: texts[0] })).json.data[0].embedding, "one input");
    const norm = Math.hypot(...one.embeddings[0]!);
    assert.ok(Math.abs(norm - 1) < 1e-4, `unit length (${norm})`);
    // The older endpoint: prompt in, one embedding out.
    const old = await ollama.embeddings({ model: "embed", prompt: texts[1]! });
    same(old.embedding, batch.embeddings[1]!, "the older endpoint");
    // The same width asked for is fine; another is refused by name.
    assert.equal((await ollama.embed({ model: "embed", input: "x", dimensions: 384 })).embeddings[0]!.length, 384);
    await assert.rejects(ollama.embed({ model: "embed", input: "x", dimensions: 128 }), (e: any) => e.status_code === 400 && /dimensions/.test(e.error));
  });

  it("lists models with their details, shows one, lists what is loaded, and says its version", async () => {
    const { models } = await ollama.list();
    const names = models.map((m) => m.name).sort();
    assert.deepEqual(names, ["chat:latest", "coder:latest", "embed:latest"]);
    const chat = models.find((m) => m.name === "chat:latest")!;
    assert.equal(chat.model, "chat:latest");
    assert.equal(chat.details.format, "gguf");
    assert.equal(chat.details.family, "llama");
    assert.equal(chat.details.parameter_size, "135M");
    assert.equal(chat.details.quantization_level, "Q4_1");
    assert.match(chat.digest, /^[0-9a-f]{64}$/);
    assert.ok(chat.size > 50_000_000);
    assert.ok(!Number.isNaN(Date.parse(String(chat.modified_at))));

    const shown = await ollama.show({ model: "chat" });
    assert.deepEqual(shown.capabilities, ["completion"]);
    assert.match(shown.parameters, /^num_ctx\s+2048$/, "the context one request gets here");
    assert.equal(shown.details.family, "llama");
    const info = shown.model_info as unknown as Record<string, unknown>;
    assert.equal(info["general.architecture"], "llama");
    assert.equal(info["llama.context_length"], 8192);
    assert.ok(shown.template.includes("im_start"), "SmolLM2's own chat template");
    assert.match(shown.modelfile, /^FROM .*SmolLM2-135M-Instruct\.Q4_1\.gguf$/m);
    assert.deepEqual((await ollama.show({ model: "coder:latest" })).capabilities, ["completion", "tools"], "Qwen's template takes tools");
    assert.deepEqual((await ollama.show({ model: "embed" })).capabilities, ["embedding"]);
    await assert.rejects(ollama.show({ model: "missing" }), (e: any) => e.status_code === 404 && e.error === "model 'missing' not found");

    await ollama.embed({ model: "embed", input: "load me" });
    const { models: loaded } = await ollama.ps();
    const embed = loaded.find((m) => m.name === "embed:latest");
    assert.ok(embed, JSON.stringify(loaded));
    assert.equal(embed.size_vram, 0);
    assert.ok(Date.parse(String(embed.expires_at)) > Date.now(), "not yet due to unload");
    assert.ok(!loaded.some((m) => m.name === "coder:latest"), "only what is loaded");

    const { version } = await ollama.version();
    assert.ok(atLeast(version, "0.6.4"), `a version Ollama clients accept: ${version}`);
  });

  it("produces output that parses and validates against a JSON Schema format, in chat and generate", async () => {
    const schema = {
      type: "object",
      properties: { city: { type: "string", maxLength: 30 }, state: { enum: ["Perak", "Pahang", "Kelantan"] }, population_millions: { type: "integer", minimum: 0, maximum: 50 } },
      required: ["city", "state", "population_millions"],
      additionalProperties: false,
    };
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const chat = await ollama.chat({ model: "chat", messages: [{ role: "user", content: "Describe Ipoh as JSON." }], format: schema, options: { temperature: 0.7, seed: 3, num_predict: 200 } });
    assert.equal(chat.done_reason, "stop", `ended by the grammar, not the limit: ${chat.message.content}`);
    const value = JSON.parse(chat.message.content) as unknown;
    assert.ok(validate(value), `${chat.message.content} ${JSON.stringify(validate.errors)}`);
    const generated = await ollama.generate({ model: "chat", prompt: "Describe Kuantan as JSON.", format: schema, options: { temperature: 0, num_predict: 200 } });
    assert.ok(validate(JSON.parse(generated.response ?? "")), generated.response);
    const json = await ollama.chat({ model: "chat", messages: [{ role: "user", content: "Reply with a JSON object with one key, name, the name of a Malaysian state." }], format: "json", options: { temperature: 0, num_predict: 300 } });
    assert.equal(json.done_reason, "stop", json.message.content);
    assert.equal(typeof JSON.parse(json.message.content), "object");
    await assert.rejects(ollama.chat({ model: "chat", messages: [{ role: "user", content: "x" }], format: { type: "array", uniqueItems: true } }), (e: any) => e.status_code === 400 && /^format: .*uniqueItems/.test(e.error));
  });

  it("returns a tool call in Ollama's shape (arguments an object), streamed and not, and continues after its result", async () => {
    const messages: Message[] = [{ role: "user", content: "What is the weather in Ipoh?" }];
    // Ollama has no tool_choice; Pustaka's extension forces the call with a grammar so even a 135M model makes it.
    const forced = { model: "chat", messages, tools: [WEATHER], tool_choice: "required", options: greedy(60) } as Parameters<Ollama["chat"]>[0];
    const reply = await ollama.chat({ ...forced, stream: false });
    const calls = reply.message.tool_calls ?? [];
    assert.equal(calls.length, 1, JSON.stringify(reply.message));
    assert.equal(calls[0]!.function.name, "get_weather");
    assert.equal(typeof calls[0]!.function.arguments, "object");
    assert.ok(["Ipoh", "Kuantan", "Kota Bharu"].includes(calls[0]!.function.arguments.city), JSON.stringify(calls[0]));
    assert.equal(reply.done_reason, "stop");
    const streamedCalls = [];
    for await (const part of await ollama.chat({ ...forced, stream: true })) streamedCalls.push(...(part.message.tool_calls ?? []));
    assert.deepEqual(streamedCalls.map((c) => c.function), calls.map((c) => c.function));
    // The client sends the call back as it got it, then the result by tool name, as Ollama's docs show.
    const answer = await ollama.chat({ model: "chat", messages: [...messages, reply.message, { role: "tool", tool_name: "get_weather", content: "Hujan lebat, 24°C" }], tools: [WEATHER], options: greedy(30) });
    assert.equal(answer.done, true);
    assert.ok(answer.message.content.trim().length > 0 || (answer.message.tool_calls?.length ?? 0) > 0);
    // Unforced, the model decides; either way the answer is well formed.
    const free = await ollama.chat({ model: "chat", messages, tools: [WEATHER], options: greedy(30) });
    assert.equal(free.done, true);
  });

  it("refuses keys without the inference scope (403) and requests without a key (401), in Ollama's shape", async () => {
    await ollamaError(await raw("/api/chat", { body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hi" }] }), key: noInferenceKey }), 403, /lacks the 'inference' scope/);
    await ollamaError(await raw("/api/tags", { key: noInferenceKey }), 403, /inference/);
    const none = await raw("/api/tags", { key: null });
    assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="pustaka"');
    await ollamaError(none, 401, /Missing API key/);
    await ollamaError(await raw("/api/version", { key: "psk-not-a-real-key-000000000000" }), 401, /./);
    const stranger = new Ollama({ host: t.url });
    await assert.rejects(stranger.list(), (e: any) => e.status_code === 401);
    const ragOnly = new Ollama({ host: t.url, headers: { Authorization: `Bearer ${noInferenceKey}` } });
    await assert.rejects(ragOnly.embed({ model: "embed", input: "x" }), (e: any) => e.status_code === 403);
  });

  it("answers bad input with a clear error in Ollama's shape, never a 500", async () => {
    const post = (route: string, body: unknown) => raw(route, { body: typeof body === "string" ? body : JSON.stringify(body) });
    await ollamaError(await post("/api/chat", '{"model": "chat", "messages": ['), 400, /not valid JSON/);
    await ollamaError(await post("/api/chat", "[]"), 400, /JSON object/);
    await ollamaError(await post("/api/chat", { messages: [] }), 400, /^model: /);
    await ollamaError(await post("/api/chat", { model: "x", messages: [{ role: "user", content: "hi" }] }), 404, /^model 'x' not found$/);
    await ollamaError(await post("/api/generate", { model: "nope:7b", prompt: "hi" }), 404, /^model 'nope:7b' not found$/);
    await ollamaError(await post("/api/embed", { model: "x", input: "hi" }), 404, /^model 'x' not found$/);
    await ollamaError(await post("/api/chat", { model: "chat", messages: [{ role: "wizard", content: "hi" }] }), 400, /^messages\.0\.role/);
    await ollamaError(await post("/api/chat", { model: "chat", messages: [{ role: "user", content: "hi" }], options: { temperature: "warm" } }), 400, /^options\.temperature/);
    await ollamaError(await post("/api/chat", { model: "chat", messages: [{ role: "user", content: "hi" }], think: true }), 400, /thinking/);
    await ollamaError(await post("/api/chat", { model: "embed", messages: [{ role: "user", content: "hi" }] }), 400, /embedding model/);
    await ollamaError(await post("/api/generate", { model: "chat", prompt: "x", template: "{{ .Prompt }}" }), 400, /^template/);
    await ollamaError(await post("/api/embed", { model: "embed", input: ["fine", ""] }), 400, /^input\.1 must not be an empty string/);
    await ollamaError(await post("/api/embed", { model: "embed", input: [1, 2] }), 400, /^input/);
    // Too long for the context, and too large to read at all.
    await ollamaError(await post("/api/chat", { model: "chat", messages: [{ role: "user", content: "kata ".repeat(150_000) }] }), 400, /^messages: .*context/);
    await ollamaError(await post("/api/generate", { model: "chat", prompt: "x".repeat(1_200_000) }), 413, /larger than/);
    await ollamaError(await post("/api/embed", { model: "embed", input: "perkataan ".repeat(20_000) }), 400, /context|tokens|long/);
    // An empty request is not an error in Ollama: it loads the model (and embeds nothing).
    assert.deepEqual((await ollama.embed({ model: "embed", input: [] })).embeddings, []);
    assert.deepEqual((await ollama.embeddings({ model: "embed", prompt: "" })).embedding, []);
    // Unknown paths under /api: the JSON 404 in Ollama's shape.
    await ollamaError(await raw("/api/pull", { body: "{}" }), 404, /Unknown request URL/);
  });

  it("refuses images with a clear 400: no model here has vision", async () => {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await assert.rejects(ollama.chat({ model: "chat", messages: [{ role: "user", content: "What is this?", images: [png] }] }), (e: any) => e.status_code === 400 && /^messages\.0\.images: model 'chat' does not support images/.test(e.error));
    await assert.rejects(ollama.generate({ model: "chat", prompt: "What is this?", images: [png] }), (e: any) => e.status_code === 400 && /^images: .*does not support images/.test(e.error));
    // An empty list is no image.
    assert.equal((await ollama.chat({ model: "chat", messages: [{ role: "user", content: "Hi", images: [] }], options: greedy(2) })).done, true);
  });

  it("sends the rate-limit headers and counts Ollama calls against the key's limit", async () => {
    const tags = await raw("/api/tags", { key: limitedKey });
    assert.equal(tags.status, 200);
    assert.equal(tags.headers.get("x-ratelimit-limit"), "60");
    const before = Number(tags.headers.get("x-ratelimit-remaining"));
    const chat = await raw("/api/chat", { key: limitedKey, body: JSON.stringify({ model: "chat", stream: false, messages: [{ role: "user", content: "Hi" }], options: greedy(2) }) });
    assert.equal(chat.status, 200, await chat.clone().text());
    assert.equal(Number(chat.headers.get("x-ratelimit-remaining")), before - 1, "a chat is one request of the key's 60");
    assert.equal(chat.headers.get("x-ratelimit-limit-tokens"), "100000");
    const refused = await raw("/api/chat", { key: limitedKey, body: "{" });
    assert.ok(refused.headers.get("x-ratelimit-limit"), "on errors too");
    await refused.body?.cancel();
  });

  it("records an audit entry per call with the prompt's hash, never its text", async () => {
    const secret = "Rahsia Ollama: kata laluan ialah nangka-biru";
    const messages = [{ role: "user", content: secret }];
    const calls: [string, Record<string, unknown>, string, string, unknown][] = [
      ["/api/chat", { model: "chat", stream: false, messages, options: greedy(3) }, "chat.completion", "prompt_sha256", messages],
      ["/api/generate", { model: "chat", stream: true, prompt: secret, options: greedy(3) }, "text.completion", "prompt_sha256", { system: null, prompt: secret, suffix: null }],
      ["/api/embed", { model: "embed", input: [secret] }, "embeddings.create", "input_sha256", [secret]],
      ["/api/embeddings", { model: "embed", prompt: secret }, "embeddings.create", "input_sha256", secret],
    ];
    for (const [route, body, type, field, hashed] of calls) {
      const res = await raw(route, { body: JSON.stringify(body) });
      assert.equal(res.status, 200, route);
      await res.text();
      const requestId = res.headers.get("x-request-id")!;
      // The entry is written when the response closes.
      let entries: any[] = [];
      for (let i = 0; i < 50 && entries.length === 0; i++) {
        entries = (await t.call("GET", `/v1/audit/events?request_id=${requestId}`)).json.data;
        if (entries.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(entries.length, 1, `${route}: one entry`);
      const [entry] = entries;
      assert.equal(entry.type, type, route);
      assert.equal(entry.outcome, "success");
      assert.equal(entry.data.api, "ollama");
      assert.equal(entry.data[field], typeof hashed === "string" ? sha256(hashed) : sha256(canonicalize(hashed)!), route);
      assert.ok(entry.data.prompt_tokens > 0, route);
      assert.doesNotMatch(JSON.stringify(entry), /nangka-biru/);
    }
    const refused = await raw("/api/chat", { body: JSON.stringify({ model: "missing", messages }) });
    await refused.text();
    const [failure] = (await t.call("GET", `/v1/audit/events?request_id=${refused.headers.get("x-request-id")}`)).json.data;
    assert.deepEqual([failure.outcome, failure.data.status, failure.data.error], ["failure", 404, "model_not_found"]);
    // Nowhere in the database either (its write-ahead log included).
    const db = path.join(t.dataDir, "pustaka.db");
    const bytes = Buffer.concat([readFileSync(db), readFileSync(`${db}-wal`)]);
    assert.equal(bytes.includes(Buffer.from("nangka-biru")), false);
  });
});
