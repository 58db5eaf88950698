/**
 * Hostile input at the door, over real HTTP (issue 30): a `Host` that smuggles a name
 * after an IPv6 literal or comes twice, two different keys in one request, and a
 * stranger guessing keys — throttled per source (429 with Retry-After, no key checked),
 * audited as a handful of counted entries in a chain that still verifies, while the
 * owner's key keeps working. Requests go over raw sockets, from several loopback
 * addresses (127.0.0.x), since fetch() can neither repeat a header nor pick its source.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

interface RawReply {
  status: number;
  headers: Map<string, string>;
  json: any;
}

/** Sends one HTTP/1.1 request as written (header lines in order, repeats kept) from `localAddress`; `host: null` sends no Host line of its own. */
function raw(base: string, options: { method?: string; path: string; headers?: [string, string][]; host?: string | null; from?: string }): Promise<RawReply> {
  const { hostname, port } = new URL(base);
  const lines = [`${options.method ?? "GET"} ${options.path} HTTP/1.1`];
  if (options.host !== null) lines.push(`Host: ${options.host ?? `${hostname}:${port}`}`);
  for (const [name, value] of options.headers ?? []) lines.push(`${name}: ${value}`);
  lines.push("Connection: close", "", "");
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: options.from ?? "127.0.0.1" });
    const chunks: Buffer[] = [];
    socket.setTimeout(30_000, () => socket.destroy(new Error(`no answer to ${options.path}`)));
    socket.on("connect", () => socket.write(lines.join("\r\n")));
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const [statusLine = "", ...headerLines] = text.slice(0, split).split("\r\n");
      const headers = new Map(headerLines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
      const body = text.slice(split + 4);
      let json: unknown = body;
      try {
        json = JSON.parse(body);
      } catch {
        // not JSON
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers, json });
    });
  });
}

/** A key that looks like ours (marker, length) but is not: each with its own prefix. */
const guess = () => `psk-${randomBytes(32).toString("base64url").replace(/[-_]/g, "A").slice(0, 43)}`;
const bearer = (key: string): [string, string][] => [["Authorization", `Bearer ${key}`]];

describe("hostile input at authentication and the Host header", () => {
  let t: TestServer;
  let dataDir: string;
  /** Failed authentications sent from the attacker's address (127.0.0.2), whatever the answer. */
  let attackerFailures = 0;

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-hostile-auth-"));
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, dataDir });
  });
  after(async () => {
    try {
      await t?.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a Host with a name after an IPv6 literal, or two Host headers (400 invalid_host_header)", async () => {
    for (const host of ["[::1].evil.com", `[::1].evil.com:${new URL(t.url).port}`, "[::1]evil.com", "localhost:80 evil.com"]) {
      const res = await raw(t.url, { path: "/healthz", host });
      assert.equal(res.status, 400, host);
      assert.deepEqual(res.json.error, { message: res.json.error.message, type: "invalid_request_error", param: null, code: "invalid_host_header" }, host);
    }
    const ours = `127.0.0.1:${new URL(t.url).port}`;
    for (const second of [ours, "evil.example.com", "[::1].evil.com"]) {
      const res = await raw(t.url, { path: "/v1/models", headers: [["Host", second], ...bearer(t.key)] });
      assert.equal(res.status, 400, `a second Host: ${second}`);
      assert.equal(res.json.error.code, "invalid_host_header");
    }
    assert.equal((await raw(t.url, { path: "/healthz", host: null })).status, 400, "no Host at all");
    // Well-formed hosts are decided by the allow-list, as before.
    assert.equal((await raw(t.url, { path: "/healthz", host: `[::1]:${new URL(t.url).port}` })).status, 200);
    assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(t.key) })).status, 200);
    const foreign = await raw(t.url, { path: "/healthz", host: "evil.example.com" });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.json.error.code, "host_not_allowed");
  });

  it("refuses two different keys in Authorization and x-api-key, or either header twice (401 ambiguous_credentials); the same key in both is fine", async () => {
    const from = "127.0.0.11";
    const other = guess();
    const cases: [string, [string, string][]][] = [
      ["Authorization good, x-api-key other", [...bearer(t.key), ["x-api-key", other]]],
      ["Authorization other, x-api-key good", [...bearer(other), ["x-api-key", t.key]]],
      ["Authorization twice (good first)", [...bearer(t.key), ...bearer(other)]],
      ["x-api-key twice, the same key", [["x-api-key", t.key], ["x-api-key", t.key]]],
    ];
    for (const [name, headers] of cases) {
      const res = await raw(t.url, { path: "/v1/models", headers, from });
      assert.equal(res.status, 401, name);
      assert.equal(res.json.error.type, "authentication_error", name);
      assert.equal(res.json.error.code, "ambiguous_credentials", name);
      assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="pustaka"');
    }
    const same = await raw(t.url, { path: "/v1/models", headers: [...bearer(t.key), ["x-api-key", t.key]], from });
    assert.equal(same.status, 200, "Anthropic clients may send the same key both ways");
    assert.equal((await raw(t.url, { path: "/v1/models", headers: [["x-api-key", t.key]], from })).status, 200);
  });

  it("throttles a source guessing 500 keys (429 too_many_auth_failures, Retry-After, no key checked), in a handful of audit entries, while other sources and known keys keep working", { timeout: 300_000 }, async () => {
    // 127.0.0.3 uses the admin key once before it starts failing; 127.0.0.2 never has.
    assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(t.key), from: "127.0.0.3" })).status, 200);
    const statuses: number[] = [];
    let firstRefusal: RawReply | undefined;
    for (let i = 0; i < 500; i++) {
      const res = await raw(t.url, { path: "/v1/models", headers: bearer(guess()), from: "127.0.0.2" });
      attackerFailures += 1;
      statuses.push(res.status);
      if (res.status === 429) firstRefusal ??= res;
      else assert.equal(res.json.error.code, "invalid_api_key");
    }
    assert.deepEqual(statuses.slice(0, 11), [...Array<number>(10).fill(401), 429], "ten failures, then refused");
    const checked = statuses.filter((s) => s === 401).length;
    assert.ok(checked <= 20, `only a few keys were checked between ever longer blocks (${checked})`);
    assert.equal(firstRefusal!.json.error.type, "rate_limit_error");
    assert.equal(firstRefusal!.json.error.code, "too_many_auth_failures");
    assert.match(firstRefusal!.headers.get("retry-after") ?? "", /^[1-9]\d*$/);

    // The attacker's address gets no answer about any key, even a good one...
    const goodFromAttacker = await raw(t.url, { path: "/v1/models", headers: bearer(t.key), from: "127.0.0.2" });
    attackerFailures += 1;
    assert.equal(goodFromAttacker.status, 429);
    // ...while other addresses are unaffected,
    assert.equal((await t.call("GET", "/v1/models")).status, 200);
    assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(t.key), from: "127.0.0.5" })).status, 200);
    // and a blocked address keeps the key that already worked there.
    for (let i = 0; i < 12; i++) await raw(t.url, { path: "/v1/models", headers: bearer(guess()), from: "127.0.0.3" });
    assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(guess()), from: "127.0.0.3" })).status, 429);
    assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(t.key), from: "127.0.0.3" })).status, 200);

    const failed = (await t.call("GET", "/v1/audit/events?chain=instance&type=auth.failed&limit=100")).json.data.filter((e: any) => e.data.remote === "127.0.0.2");
    assert.ok(failed.length >= 1 && failed.length <= checked + 3, `${attackerFailures} failures cost ${failed.length} audit entries`);
    const verified = (await t.call("GET", "/v1/audit/verify")).json;
    assert.equal(verified.valid, true, JSON.stringify(verified.problems));
  });

  it("lets the good key in from a blocked source once the backoff has passed", async () => {
    const from = "127.0.0.4";
    for (let i = 0; i < 10; i++) assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(guess()), from })).status, 401);
    const blocked = await raw(t.url, { path: "/v1/models", headers: bearer(t.key), from });
    assert.equal(blocked.status, 429);
    const wait = Number(blocked.headers.get("retry-after"));
    assert.ok(wait >= 1 && wait <= 2, `a first block is short (${wait} s)`);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 200));
    assert.equal((await raw(t.url, { path: "/v1/models", headers: bearer(t.key), from })).status, 200);
  });

  it("loses no failure: the coalesced counts are written on close, add up to every attempt, and the chain verifies after a restart", { timeout: 300_000 }, async () => {
    assert.ok(attackerFailures > 0, "runs after the attack above");
    await t.close();
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, dataDir });
    const entries: any[] = [];
    for (let after = ""; ; ) {
      const page = (await t.call("GET", `/v1/audit/events?chain=instance&type=auth.failed&order=asc&limit=100${after}`)).json;
      entries.push(...page.data);
      if (!page.has_more) break;
      after = `&after=${page.last_id}`;
    }
    const fromAttacker = entries.filter((e) => e.data.remote === "127.0.0.2");
    const counted = fromAttacker.reduce((sum, e) => sum + (e.data.count ?? 1), 0);
    assert.equal(counted, attackerFailures, `${fromAttacker.length} entries`);
    assert.ok(fromAttacker.some((e) => e.data.reason === "too_many_auth_failures" && e.data.count > 400 && e.data.key_prefix === null));
    const verified = (await t.call("GET", "/v1/audit/verify")).json;
    assert.equal(verified.valid, true, JSON.stringify(verified.problems));
    const exported = await fetch(`${t.url}/v1/audit/export?chain=instance&format=jsonl`, { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(exported.status, 200);
    const lines = (await exported.text()).trimEnd().split("\n");
    assert.equal(JSON.parse(lines.at(-1)!).count, lines.length - 1);
  });
});
