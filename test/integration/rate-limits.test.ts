/**
 * Rate limits per key and per workspace at once (spec: 60 requests and 100,000 tokens a
 * minute by default): exact under 200 parallel requests, headers on every authenticated
 * answer (errors included, OpenAI's too), 429 in the error shape with Retry-After, token
 * reservations settled to the real count, tiers set by the administrator, and counts that
 * survive a restart.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { testModel, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const config = {
  chat: { contextSize: 512, sequences: 2 },
  rateLimits: { defaultTier: "default", tiers: { tight: { requestsPerMinute: 0, tokensPerMinute: 300 } } },
};

describe("rate limits", () => {
  let t: TestServer;
  let dataDir: string;
  let keyA: string;
  let keyB: string;
  let keyBId: string;
  const start = () => startTestServer({ bindings: { tiny: tinyModel("stories260K"), chat: testModel("smollm2-135m-instruct") }, dataDir, config });
  const embed = (key: string) =>
    fetch(`${t.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "tiny", input: "Once upon a time" }) });

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-limits-"));
    t = await start();
    // The admin key itself stays out of the default tier, so setup never competes with the test.
    const me = (await t.call("GET", "/v1/me")).json;
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/api_keys/${me.key_id}`, { rate_limit_tier: "unlimited" })).status, 200);
    const ws = (await t.call("POST", "/v1/admin/workspaces", { name: "Limited team" })).json.id;
    keyA = (await t.call("POST", `/v1/admin/workspaces/${ws}/api_keys`, { name: "a", scopes: ["inference"] })).json.secret;
    const b = (await t.call("POST", `/v1/admin/workspaces/${ws}/api_keys`, { name: "b", scopes: ["inference"] })).json;
    keyB = b.secret;
    keyBId = b.id;
    assert.equal(b.rate_limit_tier, "default");
  });
  after(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("admits exactly 60 of 200 parallel requests, and answers the rest 429 with Retry-After and headers", { timeout: 120_000 }, async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, () => embed(keyA)));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    assert.equal(ok.length, 60, "exactly the limit is admitted");
    assert.equal(refused.length, 140);
    const body = (await refused[0]!.json()) as any;
    assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
    assert.equal(body.error.code, "rate_limit_exceeded");
    assert.equal(body.error.type, "rate_limit_error");
    const retryAfter = Number(refused[0]!.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    for (const res of [ok[0]!, refused[0]!]) {
      assert.equal(res.headers.get("x-ratelimit-limit"), "60");
      assert.equal(res.headers.get("x-ratelimit-limit-requests"), "60");
      assert.equal(res.headers.get("x-ratelimit-limit-tokens"), "100000");
      assert.match(res.headers.get("x-ratelimit-reset-requests") ?? "", /^\d+(m\d+)?s$/);
      assert.ok(Number(res.headers.get("x-ratelimit-reset")) >= Math.floor(Date.now() / 1000));
    }
    assert.equal(refused[0]!.headers.get("x-ratelimit-remaining"), "0");
    const remaining = ok.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b);
    assert.deepEqual(remaining, Array.from({ length: 60 }, (_, i) => i), "each admitted request saw one less");
    for (const r of responses) if (!r.bodyUsed) await r.body?.cancel();
  });

  it("limits the workspace as a whole: another key of it is refused, until the administrator raises the tier", async () => {
    const shared = await embed(keyB);
    assert.equal(shared.status, 429, "key b is fresh, but its workspace used its 60");
    const me = (await t.call("GET", "/v1/me", undefined, keyB)).json;
    assert.equal(me.rate_limits.key.remaining_requests, 60);
    assert.equal(me.rate_limits.workspace.remaining_requests, 0);
    assert.equal(me.rate_limits.workspace.requests_per_minute, 60);
    assert.ok((await t.call("GET", "/v1/me", undefined, keyB)).headers.get("x-ratelimit-remaining") === "0", "free routes carry the headers too");

    const denied = await t.call("PATCH", `/v1/admin/workspaces/${me.workspace_id}/api_keys/${keyBId}`, { rate_limit_tier: "unlimited" }, keyB);
    assert.equal(denied.status, 403, "a key cannot raise its own limits");
    const unknown = await t.call("PATCH", `/v1/admin/workspaces/${me.workspace_id}`, { rate_limit_tier: "platinum" });
    assert.equal(unknown.json.error.code, "unknown_tier");
    const raised = await t.call("PATCH", `/v1/admin/workspaces/${me.workspace_id}`, { rate_limit_tier: "unlimited" });
    assert.equal(raised.json.rate_limit_tier, "unlimited");
    assert.equal((await embed(keyB)).status, 200);
    assert.equal((await embed(keyA)).status, 429, "key a still has its own limit");
  });

  it("reserves prompt + max_tokens before generating and settles to what was used", { timeout: 60_000 }, async () => {
    const me = (await t.call("GET", "/v1/me", undefined, keyB)).json;
    await t.call("PATCH", `/v1/admin/workspaces/${me.workspace_id}/api_keys/${keyBId}`, { rate_limit_tier: "tight" });
    const ask = (maxTokens: number) => t.call("POST", "/v1/chat/completions", { model: "chat", messages: [{ role: "user", content: "Say hello." }], max_tokens: maxTokens, temperature: 0 }, keyB);
    const before = (await t.call("GET", "/v1/me", undefined, keyB)).json.rate_limits.key.remaining_tokens;
    assert.ok(before > 250 && before <= 300, `the earlier embedding counted its tokens: ${before}`);
    const tooBig = await ask(400);
    assert.equal(tooBig.status, 429);
    assert.match(tooBig.json.error.message, /more than the key's whole limit of 300/);
    const small = await ask(8);
    assert.equal(small.status, 200, JSON.stringify(small.json));
    const used = small.json.usage.prompt_tokens + small.json.usage.completion_tokens;
    const after = (await t.call("GET", "/v1/me", undefined, keyB)).json;
    assert.equal(after.rate_limits.key.remaining_tokens, before - used, "the refused request took nothing, and the reservation was settled to the real count");
    assert.equal((await t.call("GET", "/v1/me", undefined, keyB)).headers.get("x-ratelimit-limit-tokens"), "300");
  });

  it("remembers what was used across a restart", async () => {
    await t.close();
    t = await start();
    assert.equal((await embed(keyA)).status, 429, "key a's minute is not forgotten");
    const me = (await t.call("GET", "/v1/me", undefined, keyA)).json;
    assert.equal(me.rate_limits.key.remaining_requests, 0);
  });
});
