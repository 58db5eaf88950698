/**
 * A stranger guessing client secrets at the OAuth token endpoint, over real HTTP: the
 * source is throttled (429 `slow_down` in OAuth's error shape, with Retry-After, no
 * secret checked) in the same backoff as bad API keys, its failures are audited as a
 * handful of counted entries in a chain that still verifies (also after a restart, when
 * the pending counts have been written), and good clients elsewhere still get tokens.
 * Requests come from several loopback addresses (127.0.0.x), which fetch() cannot pick.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
}

/** One request from `from` (a loopback address), with a form body when `form` is given. */
function send(base: string, options: { method: string; path: string; from: string; headers?: Record<string, string>; form?: Record<string, string> }): Promise<Reply> {
  const { hostname, port } = new URL(base);
  const body = options.form ? new URLSearchParams(options.form).toString() : "";
  const headers: http.OutgoingHttpHeaders = { ...options.headers, "content-length": Buffer.byteLength(body) };
  if (options.form) headers["content-type"] = "application/x-www-form-urlencoded";
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port: Number(port), method: options.method, path: options.path, localAddress: options.from, headers, agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown = text;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
      });
    });
    req.on("timeout", () => req.destroy(new Error(`no answer to ${options.path}`)));
    req.on("error", reject);
    req.end(body);
  });
}

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` });
/** A secret that looks like ours (marker, length) but is not. */
const guess = () => `pss-${randomBytes(32).toString("base64url").replace(/[-_]/g, "A").slice(0, 43)}`;
const ATTACKER = "127.0.0.20";

describe("OAuth token endpoint under a guessing attack", () => {
  let t: TestServer;
  let dataDir: string;
  let account: { id: string; client_secret: string };
  /** Token requests sent from the attacker's address, whatever the answer. */
  let attackerAttempts = 0;
  const token = (from: string, id: string, secret: string) => send(t.url, { method: "POST", path: "/v1/oauth/token", from, headers: basic(id, secret), form: { grant_type: "client_credentials" } });
  const failures = async () => {
    const entries: any[] = [];
    for (let after = ""; ; ) {
      const page = (await t.call("GET", `/v1/audit/events?chain=instance&type=service_account.token&outcome=failure&order=asc&limit=100${after}`)).json;
      entries.push(...page.data);
      if (!page.has_more) return entries;
      after = `&after=${page.last_id}`;
    }
  };

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-oauth-throttle-"));
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, dataDir });
    const created = await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "nightly import", scopes: ["inference", "rag.read"] });
    assert.equal(created.status, 201);
    account = created.json;
  });
  after(async () => {
    try {
      await t?.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("throttles a source sending 200 bad client secrets (429 slow_down, Retry-After, none checked), in a handful of audit entries, while a good client elsewhere gets a token", { timeout: 300_000 }, async () => {
    const statuses: number[] = [];
    let firstRefusal: Reply | undefined;
    for (let i = 0; i < 200; i++) {
      // Half by HTTP Basic, half in the form (client_secret_post): one budget.
      const res = i % 2 === 0 ? await token(ATTACKER, account.id, guess()) : await send(t.url, { method: "POST", path: "/v1/oauth/token", from: ATTACKER, form: { grant_type: "client_credentials", client_id: account.id, client_secret: guess() } });
      attackerAttempts += 1;
      statuses.push(res.status);
      if (res.status === 429) firstRefusal ??= res;
      else assert.equal(res.json.error, "invalid_client");
    }
    assert.deepEqual(statuses.slice(0, 11), [...Array<number>(10).fill(401), 429], "ten failures, then refused");
    const checked = statuses.filter((s) => s === 401).length;
    assert.ok(checked <= 20, `only a few secrets were checked between ever longer blocks (${checked})`);
    assert.equal(firstRefusal!.json.error, "slow_down");
    assert.equal(typeof firstRefusal!.json.error_description, "string");
    assert.deepEqual(Object.keys(firstRefusal!.json).sort(), ["error", "error_description"], "OAuth's error shape");
    assert.match(String(firstRefusal!.headers["retry-after"]), /^[1-9]\d*$/);
    assert.equal(firstRefusal!.headers["cache-control"], "no-store");

    // The attacker's address gets no answer about any secret, even the right one...
    assert.equal((await token(ATTACKER, account.id, account.client_secret)).status, 429);
    attackerAttempts += 1;
    // ...nor about API keys: the token endpoint and the API share one backoff per source.
    const api = await send(t.url, { method: "GET", path: "/v1/models", from: ATTACKER, headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(api.status, 429);
    assert.equal(api.json.error.code, "too_many_auth_failures");
    // A good client from another address still gets a token, and it works.
    const granted = await token("127.0.0.21", account.id, account.client_secret);
    assert.equal(granted.status, 200, JSON.stringify(granted.json));
    assert.equal(granted.json.token_type, "Bearer");
    assert.equal((await t.call("GET", "/v1/rag/corpora", undefined, granted.json.access_token)).status, 200);

    const fromAttacker = (await failures()).filter((e) => e.data.remote === ATTACKER);
    assert.ok(fromAttacker.length >= 1 && fromAttacker.length <= checked + 3, `${attackerAttempts} failures cost ${fromAttacker.length} audit entries`);
    assert.ok(!JSON.stringify(fromAttacker).includes("pss-"), "no secret in the trail");
    const verified = (await t.call("GET", "/v1/audit/verify")).json;
    assert.equal(verified.valid, true, JSON.stringify(verified.problems));
  });

  it("keeps a client secret that already worked from a blocked source, and never blocks a disabled client retrying its right secret", { timeout: 120_000 }, async () => {
    const from = "127.0.0.22";
    assert.equal((await token(from, account.id, account.client_secret)).status, 200);
    for (let i = 0; i < 12; i++) await token(from, account.id, guess());
    assert.equal((await token(from, account.id, guess())).status, 429);
    assert.equal((await token(from, account.id, account.client_secret)).status, 200, "the secret that worked here still does");

    const disabled = (await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "retired", scopes: ["inference"] })).json;
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${disabled.id}`, { disabled: true })).status, 200);
    for (let i = 0; i < 15; i++) {
      const res = await token("127.0.0.23", disabled.id, disabled.client_secret);
      assert.deepEqual([res.status, res.json.error, res.json.error_description], [401, "invalid_client", "this service account is disabled"]);
    }
    assert.equal((await token("127.0.0.23", account.id, account.client_secret)).status, 200, "a stale client is not a guess: its source is not blocked");
  });

  it("loses no failure: the coalesced counts are written on close, add up to every attempt, and the chain verifies after a restart", { timeout: 300_000 }, async () => {
    assert.ok(attackerAttempts > 0, "runs after the attack above");
    await t.close();
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, dataDir });
    const fromAttacker = (await failures()).filter((e) => e.data.remote === ATTACKER);
    const counted = fromAttacker.reduce((sum, e) => sum + (e.data.count ?? 1), 0);
    assert.equal(counted, attackerAttempts, `${fromAttacker.length} entries`);
    assert.ok(fromAttacker.length <= 25, `a bounded number of entries (${fromAttacker.length})`);
    assert.ok(fromAttacker.some((e) => e.data.error === "slow_down" && e.data.count > 150 && e.data.client_id === null));
    const verified = (await t.call("GET", "/v1/audit/verify")).json;
    assert.equal(verified.valid, true, JSON.stringify(verified.problems));
  });
});
