/** `GET /metrics`: what an operator's Prometheus scrapes, after real requests. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { testModel, tinyModel } from "../helpers/models.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

/** `name{labels} value` lines of the exposition, by name and label set. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const found = Object.fromEntries([...(match[1] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[2]);
  }
  return undefined;
}

describe("Prometheus metrics", () => {
  let t: TestServer;
  const scrape = async (key = t.key) => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
  };
  before(async () => {
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K"), minilm: testModel("all-minilm-l6-v2") }, config: { chat: { contextSize: 512, sequences: 1 } } });
  });
  after(() => t.close());

  it("counts requests by route template and status, with latency", async () => {
    await t.call("GET", "/v1/models");
    await t.call("GET", "/v1/models/tiny");
    await t.call("GET", "/v1/models/nope");
    const { status, type, text } = await scrape();
    assert.equal(status, 200);
    assert.match(type, /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(text, "pustaka_http_requests_total", { method: "GET", route: "/v1/models", status: "200" }), 1);
    assert.equal(sample(text, "pustaka_http_requests_total", { method: "GET", route: "/v1/models/{*id}", status: "200" }), 1);
    assert.equal(sample(text, "pustaka_http_requests_total", { method: "GET", route: "/v1/models/{*id}", status: "404" }), 1);
    assert.equal(sample(text, "pustaka_http_request_duration_seconds_count", { method: "GET", route: "/v1/models" }), 1);
    assert.ok(sample(text, "pustaka_process_resident_memory_bytes", {})! > 0);
  });

  it("counts tokens in and out and times the first token, as the responses reported them", async () => {
    const messages = [{ role: "user", content: "Once upon a time" }];
    const whole = await t.call("POST", "/v1/chat/completions", { model: "tiny", messages, max_tokens: 12, temperature: 0 });
    const streamed = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny", messages, max_tokens: 12, temperature: 0, stream: true, stream_options: { include_usage: true } }),
    });
    const usage = ((await readSse(streamed)).at(-2) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    const text = (await scrape()).text;
    const labels = { route: "/v1/chat/completions", model: "tiny" };
    assert.equal(sample(text, "pustaka_tokens_total", { ...labels, direction: "prompt" }), whole.json.usage.prompt_tokens + usage.prompt_tokens);
    assert.equal(sample(text, "pustaka_tokens_total", { ...labels, direction: "completion" }), whole.json.usage.completion_tokens + usage.completion_tokens);
    assert.equal(sample(text, "pustaka_time_to_first_token_seconds_count", labels), 2);
    assert.ok(sample(text, "pustaka_time_to_first_token_seconds_sum", labels)! > 0);
    assert.equal(sample(text, "pustaka_models_loaded", { model: "tiny", kinds: "chat" }), 1);
    assert.equal(sample(text, "pustaka_queue_depth", { model: "tiny" }), 0);
    assert.equal(sample(text, "pustaka_busy_slots", { model: "tiny" }), 0);
  });

  it("reports the indexing queue and failed documents", async () => {
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "metrics", embedding_model: "minilm" })).json;
    const form = new FormData();
    form.append("file", new Blob(["Banjir di Kelantan memaksa ribuan penduduk berpindah."]), "banjir.txt");
    form.append("file", new Blob([Buffer.from("%PDF-1.7\ngarbage")], { type: "application/pdf" }), "rosak.pdf");
    await fetch(`${t.url}/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: form });
    for (let i = 0; i < 200 && (await t.call("GET", `/v1/rag/corpora/${corpus.id}`)).json.status === "indexing"; i++) await new Promise((r) => setTimeout(r, 50));
    const text = (await scrape()).text;
    assert.equal(sample(text, "pustaka_documents", { status: "indexed" }), 1);
    assert.equal(sample(text, "pustaka_documents", { status: "failed" }), 1);
    assert.equal(sample(text, "pustaka_documents", { status: "queued" }), 0);
  });

  it("needs a key with metrics.read", async () => {
    const ws = (await t.call("GET", "/v1/me")).json.workspace_id as string;
    const plain = (await t.call("POST", `/v1/admin/workspaces/${ws}/api_keys`, { name: "no metrics", scopes: ["inference"] })).json;
    assert.equal((await scrape(plain.secret)).status, 403);
    const res = await fetch(`${t.url}/metrics`);
    assert.equal(res.status, 401);
    const scraper = (await t.call("POST", `/v1/admin/workspaces/${ws}/api_keys`, { name: "prometheus", scopes: ["metrics.read"] })).json;
    assert.equal((await scrape(scraper.secret)).status, 200);
    const v1 = await fetch(`${t.url}/v1/metrics`, { headers: { authorization: `Bearer ${scraper.secret}` } });
    assert.equal(v1.status, 200);
  });
});
