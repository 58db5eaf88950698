/**
 * Prompts that must not freeze the server (issue 30): a multi-megabyte message is refused by
 * its length before anything tokenises it, on every generation route and in each route
 * family's error shape; a long prompt that can fit is tokenised off the event loop; and
 * counting tokens is a request like any other against the key's rate limit. The event loop
 * is watched in this process, where the server runs.
 */
import assert from "node:assert/strict";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { setTimeout } from "node:timers/promises";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

/** Gemma 3's longest vocabulary piece is 31 characters: at 32,768 tokens, 1,015,808 characters could fit. */
const CONTEXT = 32_768;
const MOST_CHARS = CONTEXT * 31;
/** The longest stall of the event loop allowed while hostile requests run (they took 4–6 s each before). */
const MAX_STALL_MS = 500;

function prose(chars: number): string {
  const sentence = "Pada suatu hari, seorang nelayan di Kuala Terengganu pulang dengan perahu yang penuh ikan. ";
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
}

/** Words between long runs of spaces: Gemma's tokenizer takes over 3 s for a million characters of it here (prose: 0.6 s). */
function spacey(chars: number): string {
  let text = "";
  for (let i = 0; text.length < chars; i++) text += "kata" + " ".repeat(20 + (i % 50));
  return text.slice(0, chars);
}

describe("hostile prompts", () => {
  let t: TestServer;
  let idleHealthMs: number;

  /**
   * POST with a body already encoded: this process is also the client, and encoding seven
   * 7.5 MB strings at once (fetch does it in one go) is a stall of its own, not the server's.
   */
  const post = async (route: string, body: Buffer, key = t.key) => {
    const response = await fetch(t.url + route, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  };

  /** Runs the requests while timing GET /healthz and the event loop's longest stall. */
  async function watched<T>(work: () => Promise<T>): Promise<{ result: T; maxStallMs: number; maxHealthMs: number }> {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    let done = false;
    const health: number[] = [];
    // A probe is due every 25 ms; its latency counts from when it was due, so a stall that
    // holds back the probe's own timer counts too.
    const poll = (async () => {
      for (let due = performance.now(); !done; due = Math.max(due + 25, performance.now())) {
        await setTimeout(Math.max(0, due - performance.now()));
        const response = await fetch(`${t.url}/healthz`);
        await response.arrayBuffer();
        assert.equal(response.status, 200);
        health.push(performance.now() - due);
      }
    })();
    try {
      const result = await work();
      await setTimeout(50);
      return { result, maxStallMs: loop.max / 1e6, maxHealthMs: Math.max(...health) };
    } finally {
      done = true;
      await poll;
      loop.disable();
    }
  }

  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("gemma3-270m") },
      config: { chat: { contextSize: CONTEXT, sequences: 1 }, rateLimits: { defaultTier: "unlimited", tiers: { trickle: { requestsPerMinute: 2, tokensPerMinute: 0 } } } },
    });
    // Load the model and its chat context first: what is measured is the requests, not a model load.
    assert.equal((await t.call("POST", "/v1/messages/count_tokens", { model: "chat", messages: [{ role: "user", content: "Hello" }] })).status, 200);
    assert.equal((await t.call("POST", "/v1/chat/completions", { model: "chat", max_tokens: 1, messages: [{ role: "user", content: "Hello" }] })).status, 200);
    const idle: number[] = [];
    for (let i = 0; i < 7; i++) {
      const started = performance.now();
      await (await fetch(`${t.url}/healthz`)).arrayBuffer();
      idle.push(performance.now() - started);
    }
    idleHealthMs = idle.sort((a, b) => a - b)[3]!;
  });
  after(() => t.close());

  it("refuses a 7.5 MB message by its length on every generation route, in each family's shape, while /healthz answers", { timeout: 300_000 }, async (ctx) => {
    const huge = prose(7_500_000);
    const encode = (body: unknown) => Buffer.from(JSON.stringify(body));
    const messages = [{ role: "user", content: huge }];
    const openAi = [
      { route: "/v1/chat/completions", body: encode({ model: "chat", max_tokens: 16, messages }), param: "messages" },
      { route: "/v1/completions", body: encode({ model: "chat", max_tokens: 16, prompt: huge }), param: "prompt" },
      { route: "/v1/responses", body: encode({ model: "chat", max_output_tokens: 16, input: huge }), param: null },
    ];
    const count = encode({ model: "chat", messages });
    const anthropic = [
      { route: "/v1/messages/count_tokens", body: count },
      { route: "/v1/messages/count_tokens", body: count },
      { route: "/v1/messages/count_tokens", body: count },
      { route: "/v1/messages", body: encode({ model: "chat", max_tokens: 16, messages }) },
    ];
    const { result, maxStallMs, maxHealthMs } = await watched(() => Promise.all([...openAi, ...anthropic].map((c) => post(c.route, c.body))));
    ctx.diagnostic(`event loop's longest stall ${maxStallMs.toFixed(0)} ms; /healthz at most ${maxHealthMs.toFixed(0)} ms (idle ${idleHealthMs.toFixed(1)} ms)`);

    openAi.forEach((c, i) => {
      const res = result[i]!;
      assert.equal(res.status, 400, `${c.route}: ${JSON.stringify(res.json).slice(0, 300)}`);
      assert.equal(res.json.error.code, "context_length_exceeded", c.route);
      assert.equal(res.json.error.type, "invalid_request_error");
      if (c.param) assert.equal(res.json.error.param, c.param);
      assert.match(res.json.error.message, new RegExp(`at most ${MOST_CHARS} characters`));
    });
    for (const res of result.slice(openAi.length)) {
      assert.equal(res.status, 400, JSON.stringify(res.json).slice(0, 300));
      assert.equal(res.json.type, "error", "Anthropic's error shape");
      assert.equal(res.json.error.type, "invalid_request_error");
      assert.match(res.json.error.message, /^messages: This model's context is 32768 tokens per request/);
    }
    assert.ok(maxStallMs < MAX_STALL_MS, `the event loop stalled for ${maxStallMs} ms`);
    assert.ok(maxHealthMs < idleHealthMs + MAX_STALL_MS, `/healthz took ${maxHealthMs} ms (idle: ${idleHealthMs} ms)`);
  });

  it("counts a long message that can fit off the event loop, as chat completions counts it", { timeout: 300_000 }, async (ctx) => {
    const long = Buffer.from(JSON.stringify({ model: "chat", messages: [{ role: "user", content: spacey(MOST_CHARS - 10_000) }] }));
    const { result, maxStallMs, maxHealthMs } = await watched(async () => [await post("/v1/messages/count_tokens", long), await post("/v1/chat/completions", long)]);
    ctx.diagnostic(`event loop's longest stall ${maxStallMs.toFixed(0)} ms; /healthz at most ${maxHealthMs.toFixed(0)} ms (idle ${idleHealthMs.toFixed(1)} ms)`);
    const [counted, chat] = result;
    assert.equal(counted!.status, 200, JSON.stringify(counted!.json).slice(0, 300));
    const tokens = counted!.json.input_tokens as number;
    assert.ok(tokens > CONTEXT, `${tokens} tokens`);
    // Too many tokens for the context, found by the model's tokenizer: the same count in the refusal.
    assert.equal(chat!.status, 400);
    assert.equal(chat!.json.error.code, "context_length_exceeded");
    assert.match(chat!.json.error.message, new RegExp(`the messages take ${tokens} tokens`));
    assert.ok(maxStallMs < MAX_STALL_MS, `the event loop stalled for ${maxStallMs} ms`);
    assert.ok(maxHealthMs < idleHealthMs + MAX_STALL_MS, `/healthz took ${maxHealthMs} ms (idle: ${idleHealthMs} ms)`);
  });

  it("counts token counting against the key's request limit, and answers 429 in Anthropic's shape", async () => {
    const key = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "counter", scopes: ["inference"] })).json;
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/api_keys/${key.id}`, { rate_limit_tier: "trickle" })).status, 200);
    const count = () => post("/v1/messages/count_tokens", Buffer.from(JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Berapa token?" }] })), key.secret);
    const first = await count();
    const second = await count();
    const third = await count();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("x-ratelimit-limit"), "2");
    assert.equal(first.headers.get("x-ratelimit-remaining"), "1");
    assert.equal(first.headers.get("x-ratelimit-limit-requests"), "2");
    assert.equal(second.status, 200);
    assert.equal(second.headers.get("x-ratelimit-remaining"), "0");
    assert.equal(second.json.input_tokens, first.json.input_tokens);
    assert.equal(third.status, 429);
    assert.deepEqual(Object.keys(third.json).sort(), ["error", "type"]);
    assert.equal(third.json.type, "error");
    assert.equal(third.json.error.type, "rate_limit_error");
    assert.equal(third.headers.get("x-ratelimit-remaining"), "0");
    const retryAfter = Number(third.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  });
});
