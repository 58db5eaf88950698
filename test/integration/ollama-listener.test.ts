/**
 * The Ollama-compatible listener against the real server with real models: an administrator
 * opens it on a loopback port bound to one API key, and the official `ollama` npm client,
 * sending no header at all, chats, embeds and lists through it as that key (its scopes, its
 * rate limits, its audit trail, `via: "ollama_listener"`). Nothing but Ollama's API is served
 * there; web pages and other Host names are refused; a revoked key makes it answer 401; a busy
 * port is a 409; closing frees the port; and it opens again after a restart.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Ollama } from "ollama";
import { freePort } from "../helpers/llama-server.js";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const LISTENER = "/v1/admin/ollama-listener";
const greedy = (numPredict: number) => ({ temperature: 0, num_predict: numPredict });

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** A request to the listener with exactly these headers (Host, Origin and Sec-Fetch-Site included), through node:http. */
function rawRequest(port: number, method: string, route: string, headers: Record<string, string> = {}, body?: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: route, headers: { host: `127.0.0.1:${port}`, ...headers, ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }) }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** An error answer in Ollama's shape: `{"error": "…"}` and nothing else. */
function assertOllamaError(reply: RawReply, status: number, pattern: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.match(String(reply.headers["content-type"]), /^application\/json/);
  assert.deepEqual(Object.keys(reply.json ?? {}), ["error"], reply.text);
  assert.match(reply.json.error, pattern);
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Takes 127.0.0.1:`port` with a plain TCP server (another program holding it). */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return server;
}
const release = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("the Ollama-compatible listener", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-ollama-listener-"));
  const start = () =>
    startTestServer({
      dataDir,
      bindings: { chat: testModel("smollm2-135m-instruct"), embed: testModel("all-minilm-l6-v2") },
      config: { chat: { contextSize: 1024, sequences: 2, promptCache: false }, rateLimits: { defaultTier: "unlimited", tiers: { two: { requestsPerMinute: 2, tokensPerMinute: 0 } } } },
    });
  let t: TestServer;
  let port: number;
  /** Keys of the default workspace: inference only (the one the listener lends), rag.read only, another inference key on a 2-a-minute tier, and a non-administrator with keys.manage. */
  const keys: Record<"ollama" | "ragOnly" | "limited" | "manager", { id: string; secret: string; prefix: string }> = {} as never;
  /** Headers the ollama client sent, to show it sent no credential. */
  const sent: Headers[] = [];
  const client = (listenerPort: number) =>
    new Ollama({
      host: `http://127.0.0.1:${listenerPort}`,
      fetch: (input, init) => {
        sent.push(new Headers(init?.headers));
        return fetch(input, init);
      },
    });
  const open = (body: unknown, key?: string) => t.call("POST", LISTENER, body, key);
  /** Audit entries matching `query` once `ready` holds (an entry is written as its response closes, in a batch a moment later). */
  const events = async (query: string, ready: (entries: any[]) => boolean = (entries) => entries.length > 0): Promise<any[]> => {
    let entries: any[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await t.call("GET", `/v1/audit/events?${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      entries = res.json.data;
      if (ready(entries)) return entries;
      await new Promise((r) => setTimeout(r, 100));
    }
    return entries;
  };
  const auditOf = (requestId: string) => events(`request_id=${encodeURIComponent(requestId)}`);

  before(async () => {
    t = await start();
    port = await freePort();
    const create = async (name: string, scopes: string[]) => {
      const res = await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name, scopes });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      return { id: res.json.id as string, secret: res.json.secret as string, prefix: res.json.prefix as string };
    };
    keys.ollama = await create("ollama-clients", ["inference"]);
    keys.ragOnly = await create("rag-only", ["rag.read"]);
    keys.limited = await create("ollama-limited", ["inference"]);
    keys.manager = await create("key-manager", ["inference", "keys.manage"]);
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/api_keys/${keys.limited.id}`, { rate_limit_tier: "two" })).status, 200);
  });
  after(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is closed until an administrator opens it", async () => {
    const state = await t.call("GET", LISTENER);
    assert.equal(state.status, 200);
    assert.deepEqual(
      { status: state.json.status, listening: state.json.listening, port: state.json.port, key: state.json.key, host: state.json.host, default_port: state.json.default_port },
      { status: "closed", listening: false, port: null, key: null, host: "127.0.0.1", default_port: 11434 },
    );
  });

  it("refuses to open for a key without workspaces.manage, for an administrative key, off loopback, and on bad input", async () => {
    const refused = await open({ key_id: keys.ollama.id, port }, keys.manager.secret);
    assert.equal(refused.status, 403, JSON.stringify(refused.json));
    assert.equal(refused.json.error.code, "insufficient_scope");
    assert.equal((await t.call("GET", LISTENER, undefined, keys.manager.secret)).status, 403);
    assert.equal((await t.call("DELETE", LISTENER, undefined, keys.manager.secret)).status, 403);

    const admins = (await t.call("GET", "/v1/admin/workspaces/ws_default/api_keys")).json.data.filter((k: any) => k.scopes.includes("workspaces.manage"));
    const tooPowerful = await open({ key_id: admins[0].id, port });
    assert.equal(tooPowerful.status, 400);
    assert.equal(tooPowerful.json.error.code, "api_key_too_powerful");
    assert.equal((await open({ key_id: keys.manager.id, port })).json.error.code, "api_key_too_powerful", "keys.manage is administrative too");

    for (const host of ["0.0.0.0", "192.168.1.10", "::", "::1", "example.com", ""]) {
      const res = await open({ key_id: keys.ollama.id, port, host });
      assert.equal(res.status, 400, host);
      assert.equal(res.json.error.code, "host_not_loopback", host);
    }
    const bad: [unknown, number, string][] = [
      [{}, 400, "key_id"],
      [{ key_id: "" }, 400, "key_id"],
      [{ key_id: "k".repeat(100_000) }, 400, "key_id"],
      [{ key_id: keys.ollama.id, port: 0 }, 400, "port"],
      [{ key_id: keys.ollama.id, port: 70_000 }, 400, "port"],
      [{ key_id: keys.ollama.id, port: 11434.5 }, 400, "port"],
      [{ key_id: keys.ollama.id, port: "11434" }, 400, "port"],
      [{ key_id: keys.ollama.id, bind: "0.0.0.0" }, 400, ""],
      [[keys.ollama.id], 400, ""],
      ["{not json", 400, ""],
      [{ key_id: "key_doesnotexist" }, 404, ""],
    ];
    for (const [body, status, param] of bad) {
      const res = await open(body);
      assert.equal(res.status, status, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(res.json)}`);
      assert.equal(typeof res.json.error.message, "string");
      if (param) assert.match(String(res.json.error.param ?? res.json.error.message), new RegExp(param));
    }
    assert.equal((await t.call("GET", LISTENER)).json.status, "closed", "nothing refused opened anything");
    assert.equal(await accepting(port), false);
  });

  it("opens on a loopback port; the official ollama client, sending no key, chats, embeds and lists as the bound key", async () => {
    const opened = await open({ key_id: keys.ollama.id, port, host: "localhost" });
    assert.equal(opened.status, 200, JSON.stringify(opened.json));
    assert.equal(opened.json.object, "ollama_listener");
    assert.equal(opened.json.status, "open");
    assert.equal(opened.json.listening, true);
    assert.equal(opened.json.url, `http://127.0.0.1:${port}`);
    assert.deepEqual(opened.json.key, { id: keys.ollama.id, name: "ollama-clients", prefix: keys.ollama.prefix, scopes: ["inference"], expires_at: null, revoked_at: null });
    assert.deepEqual(opened.json.workspace, { id: "ws_default", name: "Default" });
    assert.equal(opened.json.problem, null);
    assert.deepEqual((await t.call("GET", LISTENER)).json, opened.json);

    const ollama = client(port);
    const reply = await ollama.chat({ model: "chat", messages: [{ role: "user", content: "Name a fruit that grows in Malaysia." }], options: greedy(8) });
    assert.equal(reply.done, true);
    assert.equal(reply.eval_count, 8);
    assert.ok(reply.message.content.length > 0);
    const parts: string[] = [];
    for await (const part of await ollama.chat({ model: "chat", messages: [{ role: "user", content: "Hi" }], options: greedy(4), stream: true })) parts.push(part.message.content);
    assert.ok(parts.length >= 2);

    const embedded = await ollama.embed({ model: "embed", input: ["Selamat pagi", "Good morning"] });
    assert.equal(embedded.embeddings.length, 2);
    // The same vectors as on the main port with a key.
    const direct = await t.call("POST", "/api/embed", { model: "embed", input: ["Selamat pagi", "Good morning"] }, keys.ollama.secret);
    assert.equal(direct.status, 200);
    assert.deepEqual(embedded.embeddings, direct.json.embeddings);

    const listed = await ollama.list();
    const names = listed.models.map((m) => m.name);
    for (const name of ["chat:latest", "embed:latest"]) assert.ok(names.includes(name), names.join(", "));
    assert.equal((await ollama.version()).version.length > 0, true);

    assert.ok(sent.length >= 5);
    for (const headers of sent) {
      assert.equal(headers.get("authorization"), null, "the client sent no key");
      assert.equal(headers.get("x-api-key"), null);
    }
  });

  it("serves nothing but Ollama's API, and answers everything else 404 in Ollama's shape", async () => {
    for (const route of ["/v1/models", "/v1/chat/completions", "/v1/admin/ollama-listener", "/v1/me", "/healthz", "/readyz", "/metrics", "/mcp", "/.well-known/jwks.json", "/index.html", "/v1", "/api-docs"]) {
      for (const method of ["GET", "POST"]) assertOllamaError(await rawRequest(port, method, route, {}, method === "POST" ? "{}" : undefined), 404, /Unknown request URL/);
    }
    assertOllamaError(await rawRequest(port, "GET", "/api/nope"), 404, /Unknown request URL/);
    const root = await rawRequest(port, "GET", "/");
    assert.deepEqual([root.status, root.text], [200, "Ollama is running"]);
    assert.equal((await rawRequest(port, "HEAD", "/")).status, 200);
    // A key sent anyway changes nothing: the listener always acts as its own key.
    const withKey = await rawRequest(port, "GET", "/api/tags", { authorization: "Bearer psk-not-a-real-key-at-all" });
    assert.equal(withKey.status, 200);
    // Bad input is answered in Ollama's shape, never a 500.
    assertOllamaError(await rawRequest(port, "POST", "/api/chat", {}, "{not json"), 400, /JSON/);
    assertOllamaError(await rawRequest(port, "POST", "/api/chat", {}, JSON.stringify({ model: "missing", messages: [{ role: "user", content: "x" }] })), 404, /not found/);
    assertOllamaError(await rawRequest(port, "POST", "/api/embed", {}, `{"model":"embed","input":${"[".repeat(500)}${"]".repeat(500)}}`), 400, /nested/);
  });

  it("audits every request as on the main port, with the bound key as actor and via ollama_listener", async () => {
    const body = JSON.stringify({ model: "chat", stream: false, messages: [{ role: "user", content: "Rahsia: durian-merah" }], options: greedy(3) });
    const viaListener = await rawRequest(port, "POST", "/api/chat", { "x-request-id": `listener-${Date.now()}` }, body);
    assert.equal(viaListener.status, 200, viaListener.text);
    const viaMain = await fetch(`${t.url}/api/chat`, { method: "POST", headers: { authorization: `Bearer ${keys.ollama.secret}`, "content-type": "application/json" }, body });
    assert.equal(viaMain.status, 200);
    await viaMain.text();
    const [listenerEntry] = await auditOf(String(viaListener.headers["x-request-id"]));
    const [mainEntry] = await auditOf(viaMain.headers.get("x-request-id")!);
    assert.ok(listenerEntry && mainEntry);
    assert.equal(listenerEntry.actor, `api_key:${keys.ollama.id}`);
    assert.equal(listenerEntry.chain, "ws_default");
    assert.equal(listenerEntry.type, "chat.completion");
    assert.equal(listenerEntry.outcome, "success");
    assert.equal(listenerEntry.data.via, "ollama_listener");
    assert.equal(listenerEntry.data.prompt_sha256, mainEntry.data.prompt_sha256, "the same prompt, the same hash");
    // The same facts as on the main port, plus where it came in.
    const { latency_ms: _a, via, ...listenerFacts } = listenerEntry.data;
    const { latency_ms: _b, ...mainFacts } = mainEntry.data;
    assert.equal(via, "ollama_listener");
    assert.equal(mainEntry.data.via, undefined);
    assert.deepEqual(Object.keys(listenerFacts).sort(), Object.keys(mainFacts).sort());
    assert.deepEqual([listenerEntry.type, listenerEntry.actor, listenerEntry.outcome], [mainEntry.type, mainEntry.actor, mainEntry.outcome]);
    assert.doesNotMatch(JSON.stringify(listenerEntry), /durian-merah/);

    // Opening was audited as its own event, by the administrator, in the key's workspace.
    const [last] = await events("type=ollama_listener.open&outcome=success");
    assert.equal(last.chain, "ws_default");
    assert.match(last.actor, /^api_key:key_/);
    assert.notEqual(last.actor, `api_key:${keys.ollama.id}`);
    assert.deepEqual([last.data.key_id, last.data.port, last.data.key_prefix], [keys.ollama.id, port, keys.ollama.prefix]);
    const refusedOpens = await events("type=ollama_listener.open&outcome=failure");
    assert.ok(refusedOpens.some((e) => e.data.error === "insufficient_scope" && e.data.status === 403), "refused attempts are audited too");
  });

  it("applies the bound key's scopes and rate limits; moving it to another key on the same port takes effect at once", async () => {
    const moved = await open({ key_id: keys.ragOnly.id, port });
    assert.equal(moved.status, 200, JSON.stringify(moved.json));
    assert.equal(moved.json.key.id, keys.ragOnly.id);
    assertOllamaError(await rawRequest(port, "POST", "/api/chat", {}, JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Hi" }] })), 403, /inference/);
    await assert.rejects(client(port).list(), /inference/);

    assert.equal((await open({ key_id: keys.limited.id, port })).status, 200);
    const embed = () => rawRequest(port, "POST", "/api/embed", {}, JSON.stringify({ model: "embed", input: "satu" }));
    const first = await embed();
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers["x-ratelimit-limit-requests"], "2", "the key's tier, not the workspace's unlimited one");
    assert.equal((await embed()).status, 200);
    const third = await embed();
    assertOllamaError(third, 429, /rate limit/i);
    assert.ok(Number(third.headers["retry-after"]) > 0);
    // The same budget as the key's own requests on the main port.
    const main = await fetch(`${t.url}/api/embed`, { method: "POST", headers: { authorization: `Bearer ${keys.limited.secret}`, "content-type": "application/json" }, body: JSON.stringify({ model: "embed", input: "dua" }) });
    assert.equal(main.status, 429);
    await main.text();

    assert.equal((await open({ key_id: keys.ollama.id, port })).json.key.id, keys.ollama.id);
    assert.equal((await embed()).status, 200);
  });

  it("refuses web pages and other Host names (no key protects it)", async () => {
    const tags = (headers: Record<string, string>) => rawRequest(port, "GET", "/api/tags", headers);
    const chat = (headers: Record<string, string>) => rawRequest(port, "POST", "/api/chat", { "content-type": "text/plain", ...headers }, JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Hi" }], options: greedy(2), stream: false }));
    for (const origin of ["https://evil.example", "http://evil.example", "null", "http://localhost:3000", "http://127.0.0.1:7780"]) {
      assertOllamaError(await chat({ origin }), 403, /web page/);
      assertOllamaError(await tags({ origin, "sec-fetch-site": "cross-site" }), 403, /web page/);
    }
    assertOllamaError(await tags({ "sec-fetch-site": "cross-site" }), 403, /web page/);
    assertOllamaError(await tags({ "sec-fetch-site": "same-site" }), 403, /web page/);
    assertOllamaError(await rawRequest(port, "OPTIONS", "/api/chat", { origin: "https://evil.example", "access-control-request-method": "POST" }), 403, /web page/);
    // DNS rebinding: a name that is not loopback.
    assertOllamaError(await tags({ host: `evil.example:${port}` }), 403, /not allowed/);
    assertOllamaError(await tags({ host: `192.168.1.10:${port}` }), 403, /not allowed/);
    // What is allowed: no browser at all, the address typed in the browser's bar, installed apps.
    assert.equal((await tags({})).status, 200);
    assert.equal((await tags({ "sec-fetch-site": "none" })).status, 200);
    assert.equal((await tags({ host: `localhost:${port}` })).status, 200);
    assert.equal((await chat({ origin: "app://obsidian.md", "sec-fetch-site": "cross-site" })).status, 200);
  });

  it("opening on a busy port is a 409 that changes nothing", async () => {
    const busyPort = await freePort();
    const other = await occupy(busyPort);
    try {
      const res = await open({ key_id: keys.ollama.id, port: busyPort });
      assert.equal(res.status, 409, JSON.stringify(res.json));
      assert.equal(res.json.error.code, "port_in_use");
      assert.match(res.json.error.message, new RegExp(`port ${busyPort}`));
      // The server's own port is busy too.
      const own = Number(new URL(t.url).port);
      assert.equal((await open({ key_id: keys.ollama.id, port: own })).status, 409);
    } finally {
      await release(other);
    }
    const state = (await t.call("GET", LISTENER)).json;
    assert.deepEqual([state.status, state.port, state.key.id], ["open", port, keys.ollama.id]);
    assert.equal((await rawRequest(port, "GET", "/api/tags")).status, 200);
  });

  it("moves to another port: the new one is taken before the old one is let go", async () => {
    const next = await freePort();
    const moved = await open({ key_id: keys.ollama.id, port: next });
    assert.equal(moved.status, 200);
    assert.equal(moved.json.url, `http://127.0.0.1:${next}`);
    assert.equal(await accepting(port), false, "the old port is free");
    assert.equal((await client(next).list()).models.length > 0, true);
    assert.equal((await open({ key_id: keys.ollama.id, port })).status, 200, "and back");
    assert.equal(await accepting(next), false);
  });

  it("answers 401 once its key is revoked, shown as broken, until it is opened with another key", async () => {
    const spare = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "to-revoke", scopes: ["inference"] })).json;
    assert.equal((await open({ key_id: spare.id, port })).status, 200);
    assert.equal((await rawRequest(port, "GET", "/api/tags")).status, 200);
    assert.equal((await t.call("DELETE", `/v1/admin/workspaces/ws_default/api_keys/${spare.id}`)).status, 200);

    const refused = await rawRequest(port, "GET", "/api/tags");
    assertOllamaError(refused, 401, /revoked/);
    await assert.rejects(client(port).chat({ model: "chat", messages: [{ role: "user", content: "Hi" }] }), /revoked/);
    assert.equal((await rawRequest(port, "GET", "/")).status, 401, "the probe tells a client it will not work");
    const state = (await t.call("GET", LISTENER)).json;
    assert.deepEqual([state.status, state.listening, state.problem?.code, state.key.revoked_at !== null], ["broken", true, "revoked_api_key", true]);
    const viaListener = (entries: any[]) => entries.some((e) => e.data.via === "ollama_listener" && e.data.reason === "revoked_api_key");
    const failures = await events("type=auth.failed&chain=instance", viaListener);
    assert.equal(failures[0].actor, "anonymous", "as a failed authentication on the main port");
    assert.ok(failures.some((e) => e.data.via === "ollama_listener" && e.data.reason === "revoked_api_key"), "the refusal is audited");

    const reopen = await open({ key_id: spare.id, port });
    assert.equal(reopen.status, 400);
    assert.equal(reopen.json.error.code, "revoked_api_key");
    assert.equal((await open({ key_id: keys.ollama.id, port })).json.status, "open");
    assert.equal((await rawRequest(port, "GET", "/api/tags")).status, 200);
  });

  it("closes, freeing the port, and stays closed", async () => {
    const closed = await t.call("DELETE", LISTENER);
    assert.equal(closed.status, 200);
    assert.deepEqual([closed.json.status, closed.json.listening, closed.json.port, closed.json.key], ["closed", false, null, null]);
    assert.equal(await accepting(port), false);
    await release(await occupy(port));
    const again = await t.call("DELETE", LISTENER);
    assert.equal(again.status, 200, "closing twice is fine");
    const closes = await events("type=ollama_listener.close&outcome=success", (entries) => entries.length >= 2);
    assert.deepEqual(
      closes.map((e) => [e.data.was_open, e.chain, e.data.previous_key_id]),
      [
        [false, "ws_default", undefined],
        [true, "ws_default", keys.ollama.id],
      ],
    );
  });

  it("opens again after a restart, and a port taken meanwhile leaves it broken, the server up", async () => {
    assert.equal((await open({ key_id: keys.ollama.id, port })).status, 200);
    await t.close();
    assert.equal(await accepting(port), false, "the server's close closes the listener");
    t = await start();
    const restored = (await t.call("GET", LISTENER)).json;
    assert.deepEqual([restored.status, restored.listening, restored.port, restored.key.id], ["open", true, port, keys.ollama.id]);
    const reply = await client(port).chat({ model: "chat", messages: [{ role: "user", content: "Hi" }], options: greedy(2) });
    assert.equal(reply.done, true);

    await t.close();
    const squatter = await occupy(port);
    try {
      t = await start();
      const broken = (await t.call("GET", LISTENER)).json;
      assert.deepEqual([broken.status, broken.listening, broken.problem?.code], ["broken", false, "port_in_use"]);
      assert.equal((await t.call("GET", "/v1/me")).status, 200, "the server itself is up");
    } finally {
      await release(squatter);
    }
    const reopened = await open({ key_id: keys.ollama.id, port });
    assert.equal(reopened.json.status, "open");
    assert.equal((await client(port).list()).models.length > 0, true);
    assert.equal((await t.call("DELETE", LISTENER)).json.status, "closed");
  });
});
