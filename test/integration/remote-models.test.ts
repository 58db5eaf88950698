/**
 * Remote models against real upstreams on loopback: llama.cpp's own llama-server (built from
 * the llama.cpp source the install unpacked) serving chat, embeddings and reranking, and a
 * second Pustaka process as the upstream of another. Every endpoint, streamed and not, the
 * grounded-answer API through remote models, governance (usage settled to the upstream's
 * counts, the audit naming the replica, metrics per upstream), and what a client sees.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

/** Reads an SSE response into its `data:` payloads (JSON, or the raw `[DONE]`). */
async function sse(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: "))?.slice(6))
    .filter((data): data is string => data !== undefined)
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));

describe("remote models on llama-server", () => {
  let chatUp: LlamaServer;
  let embedUp: LlamaServer;
  let rerankUp: LlamaServer;
  let t: TestServer;
  const post = (route: string, body: unknown) => fetch(`${t.url}${route}`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const auditEntry = async (requestId: string): Promise<any> => {
    for (let i = 0; i < 50; i++) {
      const entry = (await t.call("GET", `/v1/audit/events?request_id=${requestId}`)).json.data[0];
      if (entry) return entry;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no audit entry for ${requestId}`);
  };
  const direct = async (up: LlamaServer, route: string, body: unknown) => (await fetch(`${up.url}${route}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json() as Promise<any>;

  before(async () => {
    [chatUp, embedUp, rerankUp] = await Promise.all([
      startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 4 }),
      startLlamaServer({ model: testModel("all-minilm-l6-v2"), alias: "minilm", kind: "embedding", parallel: 2, contextSize: 1024 }),
      startLlamaServer({ model: testModel("rerank-random"), alias: "ranker", kind: "rerank", parallel: 2, contextSize: 1024 }),
    ]);
    t = await startTestServer({
      // A local embedder beside the remote ones: the same weights, to compare vectors.
      bindings: { "local-minilm": testModel("all-minilm-l6-v2") },
      config: {
        models: {
          remote: {
            "team-chat": { upstreams: [{ url: chatUp.url, model: "smol" }] },
            "team-embed": { type: "embedding", upstreams: [{ url: embedUp.url, model: "minilm" }] },
            "team-rerank": { type: "rerank", upstreams: [{ url: rerankUp.url, model: "ranker" }] },
            // The alias promises 1024 dimensions; this upstream's model has 384.
            "svc-embed-1024": { upstreams: [{ url: embedUp.url, model: "minilm" }] },
          },
        },
        upstreams: { healthIntervalSeconds: 1 },
        rag: { minSimilarity: -1 },
      },
    });
  });
  after(async () => {
    await t?.close();
    await Promise.all([chatUp?.stop(), embedUp?.stop(), rerankUp?.stop()]);
  });

  it("lists remote models beside local ones, with where each runs and its replicas' health", async () => {
    await (t.server.engine as unknown as { remote: { checkNow(): Promise<void> } }).remote.checkNow();
    const list = (await t.call("GET", "/v1/models")).json.data as any[];
    const chat = list.find((m) => m.id === "team-chat");
    assert.equal(chat.type, "chat");
    assert.equal(chat.backing.kind, "remote");
    assert.deepEqual(
      chat.backing.upstreams.map((u: any) => [u.id, u.url, u.model, u.health]),
      [["r1", chatUp.url, "smol", "healthy"]],
    );
    // llama-server's context per slot, learnt from its /props.
    assert.equal(chat.context_length, 2048);
    assert.equal(list.find((m) => m.id === "team-embed").type, "embedding");
    assert.equal(list.find((m) => m.id === "local-minilm").backing.kind, "local");
    // A key without workspaces.manage sees no upstream URL.
    const user = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "user", scopes: ["inference"] })).json;
    const asUser = (await t.call("GET", "/v1/models/team-chat", undefined, user.secret)).json;
    assert.equal(asUser.backing.upstreams[0].url, null);
    assert.equal(asUser.backing.upstreams[0].health, "healthy");
  });

  it("chat completions pass through at temperature 0, with the upstream's usage", async () => {
    const body = { messages: [{ role: "user", content: "Name a colour." }], max_tokens: 12, temperature: 0 };
    const res = await post("/v1/chat/completions", { model: "team-chat", ...body });
    assert.equal(res.status, 200);
    const ours = (await res.json()) as any;
    const theirs = await direct(chatUp, "/chat/completions", { model: "smol", ...body });
    assert.equal(ours.model, "team-chat");
    assert.equal(ours.choices[0].message.content, theirs.choices[0].message.content);
    assert.equal(ours.usage.prompt_tokens, theirs.usage.prompt_tokens, "usage is the upstream's count, not the estimate");
    assert.equal(ours.usage.completion_tokens, theirs.usage.completion_tokens);
    // The audit entry (and the token limit, settled with the same figures) has the upstream's counts, not the estimate.
    const entry = await auditEntry(res.headers.get("x-request-id")!);
    assert.equal(entry.data.prompt_tokens, theirs.usage.prompt_tokens);
    assert.equal(entry.data.completion_tokens, theirs.usage.completion_tokens);
  });

  it("streams chat with usage, and the stream says the same as the non-streamed answer", async () => {
    const body = { model: "team-chat", messages: [{ role: "user", content: "Count from one to five." }], max_tokens: 16, temperature: 0 };
    const events = await sse(await post("/v1/chat/completions", { ...body, stream: true, stream_options: { include_usage: true } }));
    assert.equal(events.at(-1), "[DONE]");
    const chunks = events.slice(0, -1) as any[];
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    const usage = chunks.at(-1).usage;
    assert.equal(usage.completion_tokens, 16);
    const whole = (await (await post("/v1/chat/completions", body)).json()) as any;
    assert.equal(text, whole.choices[0].message.content);
    assert.equal(usage.prompt_tokens, whole.usage.prompt_tokens);
  });

  it("forces a tool call on an upstream whose template has no tools (the call's schema as structured output), streamed or not", async () => {
    const tools = [
      { type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
      { type: "function", function: { name: "get_time", description: "Local time in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
    ];
    const body = { model: "team-chat", messages: [{ role: "user", content: "What is the weather in Kuala Lumpur?" }], tools, max_tokens: 64, temperature: 0 };
    // llama-server itself ignores tool_choice for this template: it answers in prose.
    const plain = await direct(chatUp, "/chat/completions", { ...body, model: "smol", tool_choice: "required" });
    assert.equal(plain.choices[0].message.tool_calls, undefined);
    const res = await post("/v1/chat/completions", { ...body, tool_choice: "required" });
    const json = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(json));
    assert.equal(json.choices[0].finish_reason, "tool_calls");
    assert.equal(json.choices[0].message.content, null);
    const call = json.choices[0].message.tool_calls[0];
    assert.ok(["get_weather", "get_time"].includes(call.function.name));
    assert.equal(typeof JSON.parse(call.function.arguments).city, "string");
    const events = (await sse(await post("/v1/chat/completions", { ...body, tool_choice: { type: "function", function: { name: "get_time" } }, stream: true }))) as any[];
    const chunks = events.slice(0, -1);
    assert.ok(chunks.every((c) => !c.choices[0]?.delta?.content), "no JSON leaks as text");
    const streamed = chunks.find((c) => c.choices[0]?.delta?.tool_calls)?.choices[0].delta.tool_calls[0];
    assert.equal(streamed.function.name, "get_time");
    assert.equal(typeof JSON.parse(streamed.function.arguments).city, "string");
    assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
  });

  it("structured output: the upstream enforces the schema, Pustaka checks the JSON", async () => {
    const schema = { type: "object", properties: { colour: { type: "string" }, count: { type: "integer" } }, required: ["colour", "count"], additionalProperties: false };
    const res = await post("/v1/chat/completions", {
      model: "team-chat",
      messages: [{ role: "user", content: "Give a colour and a number." }],
      response_format: { type: "json_schema", json_schema: { name: "pick", schema } },
      max_tokens: 48,
      temperature: 0,
    });
    const json = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(json));
    const value = JSON.parse(json.choices[0].message.content);
    assert.equal(typeof value.colour, "string");
    assert.ok(Number.isInteger(value.count));
  });

  it("text completions, streamed and not", async () => {
    const body = { model: "team-chat", prompt: "The capital of Malaysia is", max_tokens: 8, temperature: 0 };
    const whole = (await (await post("/v1/completions", body)).json()) as any;
    assert.equal(whole.object, "text_completion");
    assert.ok(whole.choices[0].text.length > 0);
    const theirs = await direct(chatUp, "/completions", { ...body, model: "smol" });
    assert.equal(whole.choices[0].text, theirs.choices[0].text);
    assert.equal(whole.usage.prompt_tokens, theirs.usage.prompt_tokens);
    const events = await sse(await post("/v1/completions", { ...body, stream: true }));
    assert.equal(events.at(-1), "[DONE]");
    assert.equal((events.slice(0, -1) as any[]).map((e) => e.choices[0]?.text ?? "").join(""), whole.choices[0].text);
  });

  it("Anthropic Messages and the Responses API on a remote model, through the official clients", async () => {
    const anthropic = new Anthropic({ apiKey: t.key, baseURL: t.url, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: "team-chat", max_tokens: 8, messages: [{ role: "user", content: "Say hi." }] });
    assert.equal(message.type, "message");
    assert.ok(message.content[0]?.type === "text" && message.content[0].text.length > 0);
    assert.ok(message.usage.input_tokens > 0);
    const openai = new OpenAI({ apiKey: t.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    // greedy, and asked for more than 8 tokens: a sampled "Say hi." sometimes ended by itself (completed)
    const response = await openai.responses.create({ model: "team-chat", input: "Write a long story about a cat who sails to Penang.", max_output_tokens: 8, temperature: 0 });
    assert.equal(response.status, "incomplete");
    assert.ok(response.output_text.length > 0);
    const stream = await openai.chat.completions.create({ model: "team-chat", messages: [{ role: "user", content: "Hello" }], max_tokens: 4, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.ok(text.length > 0);
  });

  it("embeddings from the upstream equal the same model's run here", async () => {
    const input = ["Mahkamah Persekutuan ialah mahkamah tertinggi di Malaysia.", "The Federal Court is Malaysia's highest court."];
    const remote = (await (await post("/v1/embeddings", { model: "team-embed", input })).json()) as any;
    const local = (await (await post("/v1/embeddings", { model: "local-minilm", input })).json()) as any;
    assert.equal(remote.data.length, 2);
    assert.equal(remote.data[0].embedding.length, 384);
    for (const i of [0, 1]) assert.ok(cosine(remote.data[i].embedding, local.data[i].embedding) > 0.999, `input ${i}`);
    assert.ok(remote.usage.prompt_tokens > 0);
    // Many inputs are split across upstream requests and come back in order.
    const many = Array.from({ length: 150 }, (_, i) => `passage number ${i}`);
    const out = (await (await post("/v1/embeddings", { model: "team-embed", input: many })).json()) as any;
    assert.deepEqual(out.data.map((d: any) => d.index), many.map((_, i) => i));
    assert.ok(cosine(out.data[149].embedding, (await (await post("/v1/embeddings", { model: "local-minilm", input: [many[149]] })).json() as any).data[0].embedding) > 0.999);
    assert.equal((await (await post("/v1/embeddings", { model: "team-embed", input: "x", dimensions: 128 })).json() as any).error.code, "unsupported_dimensions");
    // An alias keeps its promise: svc-embed-1024 bound to an upstream that answers 384 dimensions is refused, not served.
    const broken = await post("/v1/embeddings", { model: "svc-embed-1024", input: ["x"] });
    assert.equal(broken.status, 502);
    assert.match(((await broken.json()) as any).error.message, /384-dimension embeddings, but 'svc-embed-1024' produces 1024/);
  });

  it("reranks with the upstream's cross-encoder, as probabilities", async () => {
    const documents = ["a court ruling", "a recipe for rendang", "the highest court"];
    const ours = (await (await post("/v1/rerank", { model: "team-rerank", query: "Which court is highest?", documents })).json()) as any;
    const theirs = await direct(rerankUp, "/rerank", { model: "ranker", query: "Which court is highest?", documents });
    assert.equal(ours.results.length, 3);
    for (const r of ours.results) {
      const raw = theirs.results.find((x: any) => x.index === r.index).relevance_score;
      assert.ok(Math.abs(r.relevance_score - 1 / (1 + Math.exp(-raw))) < 1e-6, `document ${r.index}: ${r.relevance_score} vs logit ${raw}`);
    }
    assert.ok(ours.results[0].relevance_score >= ours.results[1].relevance_score);
  });

  it("indexes a corpus with a remote embedder and answers it with a remote chat model, with citations", async () => {
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "remote", embedding_model: "team-embed" })).json;
    assert.equal(corpus.dimensions, 384);
    const uploaded = await upload(t, corpus.id, [{ name: "court.txt", content: "The Federal Court is the highest court in Malaysia. It sits in Putrajaya.\n\nMahkamah Persekutuan bersidang di Putrajaya." }]);
    assert.equal(uploaded.status, 202, JSON.stringify(uploaded.json));
    const done = await waitForStatus(t, corpus.id, 120_000);
    assert.equal(done.document_counts.indexed, 1, JSON.stringify(done));
    const answer = (await t.call("POST", `/v1/rag/corpora/${corpus.id}/query`, { question: "Where does the Federal Court sit?", model: "team-chat", max_tokens: 24, temperature: 0 })).json;
    assert.ok(answer.citations.length > 0, JSON.stringify(answer));
    assert.equal(answer.citations[0].filename, "court.txt");
    assert.ok(answer.usage.prompt_tokens > 0);
  });

  it("the audit trail names the replica that served, and /metrics counts per upstream", async () => {
    const res = await post("/v1/chat/completions", { model: "team-chat", messages: [{ role: "user", content: "Hi" }], max_tokens: 2 });
    assert.equal(res.status, 200);
    const entry = await auditEntry(res.headers.get("x-request-id")!);
    assert.deepEqual(entry.data.upstreams, ["team-chat@r1"]);
    assert.equal(entry.data.model, "team-chat");
    assert.ok(!JSON.stringify(entry).includes("Hi\""), "no prompt in the audit trail");
    const metrics = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.key}` } })).text();
    assert.match(metrics, /pustaka_upstream_requests_total\{model="team-chat",upstream="r1",op="chat",outcome="success"\} [1-9]/);
    assert.match(metrics, /pustaka_upstream_healthy\{model="team-chat",upstream="r1",state="healthy"\} 1/);
    assert.match(metrics, /pustaka_upstream_request_duration_seconds_count\{model="team-embed",upstream="r1",op="embed"\} [1-9]/);
  });

  it("a client that goes away cancels the upstream's generation", async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "team-chat", messages: [{ role: "user", content: "Write a very long story." }], max_tokens: 1500, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    controller.abort();
    // llama-server's slots are all idle again soon after (it noticed the closed connection).
    let busy = 1;
    for (let i = 0; i < 50 && busy > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      busy = ((await (await fetch(`${chatUp.url.replace(/\/v1$/, "")}/slots`)).json()) as any[]).filter((s) => s.is_processing).length;
    }
    assert.equal(busy, 0, "the upstream stopped generating");
    const upstream = (await t.call("GET", "/v1/models/team-chat")).json.backing.upstreams[0];
    assert.equal(upstream.in_flight, 0);
  });
});

describe("remote models through the admin API, served by another Pustaka", () => {
  let upstream: TestServer;
  let front: TestServer;
  let dataDir: string;
  const config = { upstreams: { healthIntervalSeconds: 1, allowed: ["gpu.example"] }, models: { remote: { configured: { upstreams: [{ url: "http://127.0.0.1:9/v1" }] } } } };

  before(async () => {
    upstream = await startTestServer({ bindings: { smol: testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2") }, rendererDir: null, config: { chat: { contextSize: 1024 } } });
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-front-"));
    front = await startTestServer({ bindings: {}, rendererDir: null, dataDir, config });
  });
  after(async () => {
    await front?.close();
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const body = (extra: Record<string, unknown> = {}) => ({ id: "team-smol", upstreams: [{ url: `${upstream.url}/v1#smol`, api_key: upstream.key }], ...extra });

  it("tests the connection before adding: the upstream's models, or why not", async () => {
    const ok = (await front.call("POST", "/v1/admin/remote-models/test", body())).json;
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(ok.upstreams[0].serves_model, true);
    assert.ok(ok.upstreams[0].models.includes("minilm"));
    const refused = (await front.call("POST", "/v1/admin/remote-models/test", body({ upstreams: [{ url: `${upstream.url}/v1#smol`, api_key: "psk-wrong-key-0000000000000000" }] }))).json;
    assert.equal(refused.ok, false);
    assert.match(refused.upstreams[0].error, /HTTP 401/);
    assert.ok(!JSON.stringify(refused).includes("psk-wrong-key"), "the key is not echoed");
  });

  it("adds a model whose key is sealed, never returned, and used for every request", async () => {
    const created = await front.call("POST", "/v1/admin/remote-models", body());
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.source, "admin");
    assert.equal(created.json.upstreams[0].api_key, true);
    assert.ok(!JSON.stringify(created.json).includes(upstream.key));
    const chat = await front.call("POST", "/v1/chat/completions", { model: "team-smol", messages: [{ role: "user", content: "Hello" }], max_tokens: 6, temperature: 0 });
    assert.equal(chat.status, 200, JSON.stringify(chat.json));
    const direct = await upstream.call("POST", "/v1/chat/completions", { model: "smol", messages: [{ role: "user", content: "Hello" }], max_tokens: 6, temperature: 0 });
    assert.equal(chat.json.choices[0].message.content, direct.json.choices[0].message.content);
    const listed = (await front.call("GET", "/v1/admin/remote-models")).json.data as any[];
    assert.deepEqual(listed.map((m) => [m.id, m.source]).sort(), [["configured", "config"], ["team-smol", "admin"]]);
    assert.ok(!JSON.stringify(listed).includes(upstream.key));
    // Sealed at rest: the key is nowhere in the database files.
    for (const file of readdirSync(dataDir).filter((f) => f.startsWith("pustaka.db"))) assert.ok(!readFileSync(path.join(dataDir, file)).includes(Buffer.from(upstream.key)), file);
    const audit = (await front.call("GET", "/v1/audit/events?type=remote_model.create")).json.data as any[];
    assert.equal(audit[0].data.model, "team-smol");
    assert.ok(!JSON.stringify(audit).includes(upstream.key));
  });

  it("serves it again after a restart, and tests it in place", async () => {
    await front.close();
    front = await startTestServer({ bindings: {}, rendererDir: null, dataDir, config });
    const chat = await front.call("POST", "/v1/chat/completions", { model: "team-smol", messages: [{ role: "user", content: "Hello" }], max_tokens: 4 });
    assert.equal(chat.status, 200, JSON.stringify(chat.json));
    const tested = (await front.call("POST", "/v1/admin/remote-models/team-smol/test")).json;
    assert.equal(tested.ok, true);
    assert.equal((await front.call("GET", "/v1/models/team-smol")).json.backing.upstreams[0].health, "healthy");
  });

  it("refuses upstreams beyond the allow-list, plain HTTP beyond loopback, non-admins, and removing configured models", async () => {
    const denied = await front.call("POST", "/v1/admin/remote-models", body({ id: "exfil", upstreams: [{ url: "https://collector.example/v1" }] }));
    assert.equal(denied.status, 403);
    assert.equal(denied.json.error.code, "upstream_not_allowed");
    const plain = await front.call("POST", "/v1/admin/remote-models", body({ id: "plain", upstreams: [{ url: "http://gpu.example/v1" }] }));
    assert.equal(plain.status, 400);
    assert.equal(plain.json.error.code, "insecure_upstream");
    const user = (await front.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "user", scopes: ["inference"] })).json;
    assert.equal((await front.call("POST", "/v1/admin/remote-models", body({ id: "sneaky" }), user.secret)).status, 403);
    assert.equal((await front.call("DELETE", "/v1/admin/remote-models/configured")).json.error.code, "model_configured");
    assert.equal((await front.call("POST", "/v1/admin/remote-models", body())).json.error.code, "model_id_taken");
  });

  it("removes a model added through the API, and its sealed key with it", async () => {
    assert.equal((await front.call("DELETE", "/v1/admin/remote-models/team-smol")).status, 200);
    assert.equal((await front.call("POST", "/v1/chat/completions", { model: "team-smol", messages: [{ role: "user", content: "Hi" }] })).json.error.code, "model_not_found");
    await front.close();
    front = await startTestServer({ bindings: {}, rendererDir: null, dataDir, config });
    assert.equal((await front.call("GET", "/v1/models/team-smol")).status, 404);
  });
});

describe("token estimates for remote models", () => {
  it("never fall below the upstream's own count, English or Malay, once calibrated on its tokenizer", async () => {
    const { readdirSync: list, readFileSync: read } = await import("node:fs");
    const { EVAL_DOCS } = await import("../helpers/rag.js");
    const docs = list(EVAL_DOCS).filter((f) => /\.(md|txt)$/.test(f));
    const summary: string[] = [];
    for (const model of ["smollm2-135m-instruct", "gemma3-270m", "qwen2.5-coder-1.5b"] as const) {
      const up = await startLlamaServer({ model: testModel(model), parallel: 1, contextSize: 512 });
      const t = await startTestServer({ bindings: {}, rendererDir: null, config: { models: { remote: { m: { upstreams: [{ url: up.url }] } } }, upstreams: { healthIntervalSeconds: 0 } } });
      try {
        const engine = t.server.engine as unknown as { remote: { checkNow(): Promise<void>; estimatorFor(e: unknown): { calibrated: boolean; text(s: string): number } } };
        await engine.remote.checkNow();
        const estimator = engine.remote.estimatorFor(t.server.registry.resolve("m"));
        assert.equal(estimator.calibrated, true, `${model}: calibrated on llama-server's /tokenize`);
        const ratios: number[] = [];
        for (const file of docs) {
          const text = read(path.join(EVAL_DOCS, file), "utf8").slice(0, 8000);
          const counted = ((await (await fetch(`${up.url.replace(/\/v1$/, "")}/tokenize`, { method: "POST", body: JSON.stringify({ content: text }) })).json()) as { tokens: unknown[] }).tokens.length;
          ratios.push(estimator.text(text) / counted);
        }
        assert.ok(Math.min(...ratios) >= 1, `${model}: an estimate below the true count (${Math.min(...ratios).toFixed(2)}×)`);
        assert.ok(Math.max(...ratios) < 2.5, `${model}: estimates too loose (${Math.max(...ratios).toFixed(2)}×)`);
        summary.push(`${model} ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`);
      } finally {
        await t.close();
        await up.stop();
      }
    }
    console.log(`estimate / true token count over ${docs.length} documents: ${summary.join(", ")}`);
  });
});
