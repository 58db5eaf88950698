/**
 * Parallel sequences of one context: concurrent requests complete without mixing
 * tokens, extra requests queue, and a client that disconnects frees its sequence.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { testModel, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const PROMPTS = [
  "Once upon a time, there was a dog",
  "Tom and Lily went to the park",
  "The little bird wanted to fly",
  "One day, a big red ball",
  "Sue had a small cat named",
  "The sun was hot and the boy",
  "Mom made a cake for",
  "There was a tall tree near the",
];

describe("concurrency", () => {
  let t: TestServer;
  before(async () => {
    // 4 sequences for 8 requests: half of them must queue.
    t = await startTestServer({ bindings: { "svc-merlion-13b": tinyModel("stories260K") }, config: { chat: { sequences: 4, contextSize: 512 } } });
  });
  after(() => t.close());

  const complete = (content: string, maxTokens = 40) =>
    t.call("POST", "/v1/chat/completions", { messages: [{ role: "user", content }], max_tokens: maxTokens, temperature: 0 });

  it("runs 8 parallel chats on 4 sequences; each gets exactly its own greedy answer", async () => {
    const alone: string[] = [];
    for (const prompt of PROMPTS) {
      const res = await complete(prompt);
      assert.equal(res.status, 200);
      alone.push(res.json.choices[0].message.content);
    }
    assert.ok(new Set(alone).size >= 6, "prompts should give distinct answers, or the test proves nothing");
    const together = await Promise.all(PROMPTS.map((p) => complete(p)));
    together.forEach((res, i) => {
      assert.equal(res.status, 200);
      assert.equal(res.json.choices[0].message.content, alone[i], `request ${i} got another request's tokens`);
    });
  });

  it("frees the sequence when a streaming client disconnects mid-generation", async () => {
    // Gemma 3 270M at ~40 tokens/s: the aborted 1,900-token run would hold the only sequence for ~45 s.
    const small = await startTestServer({ bindings: { "svc-merlion-13b": testModel("gemma3-270m") }, config: { chat: { sequences: 1, contextSize: 2048 } } });
    try {
      const controller = new AbortController();
      const response = await fetch(`${small.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${small.key}`, "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 1900, temperature: 1, stream: true }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read(); // the stream has started: the only sequence is busy
      controller.abort();
      // With the sequence freed, the next request gets it; had it stayed busy, this would queue behind ~1900 tokens.
      const started = Date.now();
      const next = await small.call("POST", "/v1/chat/completions", { messages: [{ role: "user", content: "Tom" }], max_tokens: 5, temperature: 0 });
      assert.equal(next.status, 200);
      assert.equal(next.json.usage.completion_tokens, 5);
      const health = await small.call("GET", "/healthz", undefined, null);
      const loaded = health.json.engine.loadedModels[0];
      assert.equal(loaded.activeLeases, 0, "the aborted run still holds the model");
      assert.ok(Date.now() - started < 20_000, "the next request waited for the aborted generation");
    } finally {
      await small.close();
    }
  });

  it("refuses with 503 server_busy when the queue is full, and serves again afterwards", async () => {
    const tiny = await startTestServer({ bindings: { "svc-merlion-13b": tinyModel("stories260K") }, config: { chat: { sequences: 1, maxQueued: 1, contextSize: 512 } } });
    try {
      const body = { messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 400, temperature: 1 };
      const results = await Promise.all([0, 1, 2, 3].map(() => tiny.call("POST", "/v1/chat/completions", body)));
      const statuses = results.map((r) => r.status).sort();
      assert.ok(statuses.includes(503), `expected some 503s, got ${statuses.join(",")}`);
      const busy = results.find((r) => r.status === 503)!;
      assert.equal(busy.json.error.code, "server_busy");
      assert.equal(busy.headers.get("retry-after"), "1");
      assert.equal(statuses.filter((s) => s === 200).length, 2, "one running + one queued must complete");
    } finally {
      await tiny.close();
    }
  });
});
