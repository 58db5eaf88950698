/**
 * The server as `npm start` runs it, the built workbench mounted at `/`: every URL in the
 * API reference's route tables (parsed from docs/api.md, so a new row is covered without
 * touching this file) answers as the API — JSON, Prometheus text or an event stream, never the
 * workbench's page — and so do the discovery URLs and unknown paths under the API's
 * prefixes; page paths get the workbench. Requests ask for HTML first, as a browser does,
 * so a page fallback that takes an API path cannot hide.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { packageLayout } from "../../src-server/index.js";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

/** The API's path prefixes (the contract: everything else is the workbench's). */
const API_PREFIXES = ["/v1", "/metrics", "/healthz", "/readyz", "/.well-known", "/api", "/mcp"];
const isApiPath = (p: string) => API_PREFIXES.some((prefix) => p === prefix || p.startsWith(`${prefix}/`));

/** What a browser sends on navigation: HTML first. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** The page whose route tables are read. */
const API_DOC = path.join("docs", "api.md");

/** One method and path of a route table of docs/api.md, as written (`{id}` placeholders, `?query`). */
interface DocRoute {
  method: string;
  path: string;
  /** The row it came from (file, line number and text), for failure messages. */
  row: string;
  /** Which methods and paths are written together: a row's Method cell with the paths up to the first inline method, then each inline method with the paths after it. */
  group: number;
}

/**
 * The rows of every `| Method | Path | |` table in docs/api.md, expanded: each backticked path
 * in the Path cell takes the methods written just before it (or the row's Method cell);
 * `[/{x}]` is an optional segment (both forms); `…/` continues the previous path before
 * the parameter that follows it (`/v1/responses/{id}` then `…/{id}/input_items`); `(= …)`
 * is an alias with the same methods.
 */
function docRoutes(markdown: string): DocRoute[] {
  const lines = markdown.split("\n");
  const routes: DocRoute[] = [];
  let group = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!/^\|\s*Method\s*\|\s*Path\s*\|/.test(lines[i]!)) continue;
    for (let j = i + 2; j < lines.length && lines[j]!.startsWith("|"); j++) {
      const row = `${API_DOC}:${j + 1}: ${lines[j]!.slice(0, 140)}`;
      const [, methodCell = "", pathCell = ""] = lines[j]!.split("|").map((c) => c.trim());
      assert.match(methodCell, /^[A-Z]+(\/[A-Z]+)*$/, `a Method cell: ${row}`);
      let methods = methodCell.split("/");
      let previous: string | undefined;
      group++;
      for (const m of pathCell.matchAll(/(?:\b([A-Z]+(?:\/[A-Z]+)*)\s+)?`([^`]+)`/g)) {
        if (m[1]) {
          methods = m[1].split("/");
          group++;
        }
        let written = m[2]!;
        if (!written.startsWith("/") && !written.startsWith("…/")) continue;
        if (written.startsWith("…/")) {
          assert.ok(previous, `'…' needs a path before it: ${row}`);
          const rest = written.slice(1);
          const first = rest.split("/")[1]!.split("?")[0]!;
          const base = previous.replace(/[[\]]/g, "");
          const at = base.indexOf(`/${first}`);
          written = (at >= 0 ? base.slice(0, at) : base) + rest;
        }
        previous = written;
        const variants = /\[[^\]]+\]/.test(written) ? [written.replace(/\[[^\]]+\]/, ""), written.replace(/[[\]]/g, "")] : [written];
        for (const method of methods) for (const variant of variants) routes.push({ method, path: variant, row, group });
      }
    }
  }
  return routes;
}

/** `{id}`, `{key_id}`, … → an id nothing has. */
const withUnknownIds = (route: string) => route.replace(/\{[A-Za-z_]+\}/g, "x_doesnotexist0000");

interface Reply {
  status: number;
  type: string;
  text: string;
  json: any;
}

describe("the server as `npm start` runs it (workbench at /)", () => {
  let t: TestServer;
  const apiDoc = readFileSync(path.join(REPO_ROOT, API_DOC), "utf8");
  const routes = docRoutes(apiDoc);

  /** A request as a browser would send it (HTML first) with the admin key (or `key`); an event stream is closed once its head arrives. */
  const probe = async (method: string, route: string, key: string | null = t.key, accept = BROWSER_ACCEPT): Promise<Reply> => {
    const headers: Record<string, string> = { accept };
    if (key) headers.authorization = `Bearer ${key}`;
    const hasBody = method === "POST" || method === "PATCH" || method === "PUT";
    if (hasBody) headers["content-type"] = "application/json";
    const res = await fetch(t.url + route, { method, headers, body: hasBody ? "{}" : undefined });
    const type = res.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream")) {
      await res.body?.cancel();
      return { status: res.status, type, text: "", json: undefined };
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, type, text, json };
  };

  /** Ollama's API (`/api`), answering errors in Ollama's shape, `{"error":"…"}`; `where` starts with the method and path. */
  const isOllama = (where: string) => /^[A-Z]+ \/api(\/|\s|$)/i.test(where);
  /** MCP (`/mcp`), answering errors as JSON-RPC errors (`{"jsonrpc":"2.0","error":{"code","message","data"}}`). */
  const isMcp = (where: string) => /^[A-Z]+ \/mcp(\/|\s|$)/i.test(where);
  /** Not the workbench, never a 5xx; an error is JSON in the OpenAI shape (Anthropic's on `/v1/messages`, Ollama's under `/api`). */
  const assertApiAnswer = (where: string, reply: Reply) => {
    const detail = `${where} → ${reply.status} ${reply.type} ${reply.text.slice(0, 200)}`;
    assert.doesNotMatch(reply.type, /text\/html/, `an API URL answered with a page: ${detail}`);
    assert.ok(!/^\s*<!doctype html/i.test(reply.text), `an API URL answered with a page: ${detail}`);
    assert.ok(reply.status < 500, detail);
    if (reply.status >= 400) {
      assert.match(reply.type, /^application\/json/, `errors are JSON: ${detail}`);
      if (isOllama(where)) {
        assert.equal(typeof reply.json?.error, "string", `Ollama's error shape: ${detail}`);
        return;
      }
      if (isMcp(where)) {
        assert.equal(reply.json?.jsonrpc, "2.0", `JSON-RPC's error shape: ${detail}`);
        assert.equal(typeof reply.json?.error?.code, "number", `JSON-RPC's error shape: ${detail}`);
        assert.equal(typeof reply.json?.error?.message, "string", `JSON-RPC's error shape: ${detail}`);
        return;
      }
      assert.equal(typeof reply.json?.error?.message, "string", `the error shape: ${detail}`);
      assert.equal(typeof reply.json?.error?.type, "string", `the error shape: ${detail}`);
    }
  };
  const unknownUrl = (reply: Reply) => reply.status === 404 && /^Unknown request URL/.test(String(reply.json?.error?.message ?? reply.json?.error));

  before(async () => {
    // No rendererDir: the test server mounts the built workbench by default, as `npm start` does.
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") } });
  });
  after(() => t?.close());

  it("reads the route tables of docs/api.md", () => {
    assert.ok(routes.length >= 60, `only ${routes.length} method/path pairs read from ${API_DOC}'s tables`);
    const paths = new Set(routes.map((r) => r.path));
    for (const expected of ["/metrics", "/v1/metrics", "/v1/openapi.json", "/healthz", "/v1/chat/completions", "/v1/responses/{id}/input_items", "/v1/conversations/{id}/export?format=markdown", "/v1/admin/workspaces/{id}/api_keys/{key_id}", "/v1/rag/corpora/{id}/documents/{doc_id}/content", "/v1/admin/tombstones/purge"]) {
      assert.ok(paths.has(expected), `${expected} read from ${API_DOC} (got ${[...paths].join(", ")})`);
    }
    for (const r of routes) assert.ok(isApiPath(r.path.split("?")[0]!), `${API_DOC} lists ${r.path}, outside the API's prefixes (${API_PREFIXES.join(", ")}): ${r.row}`);
  });

  it("answers every URL in the route tables of docs/api.md as the API, and serves each one listed", async () => {
    const replies = new Map<DocRoute, Reply>();
    for (const r of routes) {
      const reply = await probe(r.method, withUnknownIds(r.path));
      assertApiAnswer(`${r.method} ${r.path} (${r.row})`, reply);
      replies.set(r, reply);
      // A collection or a single URL read with a valid key succeeds; with an id nothing has, it is not found.
      if (r.method === "GET" && !unknownUrl(reply)) assert.equal(reply.status, /\{/.test(r.path) ? 404 : 200, `${r.method} ${r.path}: ${reply.text.slice(0, 200)} (${r.row})`);
    }
    // Rows write methods and paths together (`POST/GET/DELETE /a[/{b}]`): each path must be
    // served by one of its methods, and each method must serve one of its paths.
    const groups = new Map<number, DocRoute[]>();
    for (const r of routes) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
    for (const group of groups.values()) {
      const served = group.filter((r) => !unknownUrl(replies.get(r)!));
      for (const p of new Set(group.map((r) => r.path))) assert.ok(served.some((r) => r.path === p), `no method of the row serves ${p}: ${group[0]!.row}`);
      for (const m of new Set(group.map((r) => r.method))) assert.ok(served.some((r) => r.method === m), `${m} serves none of ${[...new Set(group.map((r) => r.path))].join(", ")}: ${group[0]!.row}`);
    }
  });

  it("serves /metrics (and /v1/metrics) as Prometheus text, never the workbench", async () => {
    for (const route of ["/metrics", "/v1/metrics", "/metrics/"]) {
      for (const accept of [BROWSER_ACCEPT, "*/*", "text/plain"]) {
        const reply = await probe("GET", route, t.key, accept);
        assert.equal(reply.status, 200, `${route} (${accept}): ${reply.text.slice(0, 200)}`);
        assert.match(reply.type, /^text\/plain; version=0\.0\.4/, `${route} (${accept})`);
        assert.match(reply.text, /^# HELP pustaka_/m);
      }
    }
    const stranger = await probe("GET", "/metrics", null);
    assert.equal(stranger.status, 401);
    assertApiAnswer("GET /metrics without a key", stranger);
  });

  it("generates /v1/openapi.json with the workbench mounted: valid OpenAPI 3.1, API routes only", async () => {
    const reply = await probe("GET", "/v1/openapi.json");
    assert.equal(reply.status, 200, reply.text.slice(0, 500));
    assert.match(reply.type, /^application\/json/);
    const result = await new Validator().validate(structuredClone(reply.json));
    assert.equal(result.valid, true, String(JSON.stringify(result.errors ?? null)).slice(0, 2000));
    const paths = Object.keys(reply.json.paths);
    assert.ok(paths.length >= 50, `${paths.length} paths`);
    assert.deepEqual(paths.filter((p) => !isApiPath(p)), [], "only API routes are documented");
    for (const p of ["/metrics", "/v1/metrics", "/healthz", "/v1/openapi.json", "/.well-known/jwks.json", "/v1/session"]) assert.ok(reply.json.paths[p], `${p} is documented`);
    // Every documented read answers as the API (an id nothing has: the JSON 404); one the
    // document says is an HTML page (the API reference, /v1/docs) answers as that page.
    for (const [p, ops] of Object.entries<Record<string, any>>(reply.json.paths)) {
      if (!ops.get) continue;
      const answer = await probe("GET", withUnknownIds(p));
      if (Object.keys(ops.get.responses?.["200"]?.content ?? {}).includes("text/html")) {
        assert.equal(answer.status, 200, `GET ${p}: ${answer.text.slice(0, 200)}`);
        assert.match(answer.type, /^text\/html/, `GET ${p} is documented as a page`);
        continue;
      }
      assertApiAnswer(`GET ${p} (from the OpenAPI document)`, answer);
      assert.ok(!unknownUrl(answer), `GET ${p} is documented but not served`);
    }
  });

  it("serves the discovery URLs as JSON", async () => {
    for (const [route, key] of [
      ["/healthz", null],
      ["/readyz", null],
      ["/.well-known/oauth-authorization-server", null],
      ["/.well-known/jwks.json", null],
      ["/v1/me", t.key],
    ] as const) {
      const reply = await probe("GET", route, key);
      assert.equal(reply.status, 200, `${route}: ${reply.text.slice(0, 200)}`);
      assert.match(reply.type, /^application\/json/, route);
      assert.equal(typeof reply.json, "object", route);
    }
    assert.equal((await probe("GET", "/healthz", null)).json.status, "ok");
    assert.equal((await probe("GET", "/readyz", null)).json.status, "ready");
    assert.ok(Array.isArray((await probe("GET", "/.well-known/jwks.json", null)).json.keys));
  });

  it("serves the workbench at / and on its page paths, with its CSP", async () => {
    for (const route of ["/", "/corpora/corp_x", "/keys", "/some/unknown/page", "/index.html", "/healthzz", "/v1x", "/apis", "/metricsx"]) {
      const res = await fetch(t.url + route, { headers: { accept: BROWSER_ACCEPT } });
      assert.equal(res.status, 200, route);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/, route);
      assert.match(res.headers.get("content-security-policy") ?? "", /script-src 'self'/, route);
      assert.match(await res.text(), /<div id="root"><\/div>/, route);
    }
    const layout = packageLayout();
    const asset = readdirSync(path.join(layout.rendererDir!, "assets")).find((f) => f.endsWith(".js"))!;
    const res = await fetch(`${t.url}/assets/${asset}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /javascript/);
    assert.match(res.headers.get("cache-control") ?? "", /immutable/);
  });

  it("answers unknown paths under the API's prefixes with the JSON 404, never the page", async () => {
    const unknown = ["/v1/nope", "/v1/nope/deeper", "/v1/", "/metrics/x", "/v1/metrics/x", "/healthz/x", "/api/nope", "/api", "/mcp/x", "/.well-known/nope", "/V1/NOPE", "/Metrics/x", "/%761/nope", "/v1/openapi.json/x", "/v1/assets/x.js"];
    for (const route of unknown) {
      for (const method of ["GET", "HEAD", "POST", "DELETE"]) {
        const reply = await probe(method, route);
        assert.equal(reply.status, 404, `${method} ${route}: ${reply.type} ${reply.text.slice(0, 200)}`);
        assert.match(reply.type, /^application\/json/, `${method} ${route}`);
        if (method === "HEAD") continue;
        assertApiAnswer(`${method} ${route}`, reply);
        if (isOllama(`${method} ${route}`)) {
          assert.ok(unknownUrl(reply), `${method} ${route}`);
          continue;
        }
        if (isMcp(`${method} ${route}`)) {
          assert.equal(reply.json.error.data.code, "unknown_url", `${method} ${route}`);
          continue;
        }
        assert.equal(reply.json.error.type, "not_found_error", `${method} ${route}`);
        assert.equal(reply.json.error.code, "unknown_url", `${method} ${route}`);
      }
    }
    // Without a key, the authenticated prefixes refuse (401, JSON); the others are simply not found.
    for (const route of ["/v1/nope", "/metrics/x", "/api/nope", "/mcp", "/mcp/x"]) {
      const reply = await probe("GET", route, null);
      assert.equal(reply.status, 401, route);
      assertApiAnswer(`GET ${route} without a key`, reply);
    }
    for (const route of ["/healthz/x", "/.well-known/nope"]) {
      const reply = await probe("GET", route, null);
      assert.equal(reply.status, 404, route);
      assertApiAnswer(`GET ${route} without a key`, reply);
    }
  });
});

describe("a workbench build whose files are named like API paths", () => {
  let t: TestServer;
  let ui: string;
  const planted = ["metrics", "healthz", "mcp", "api/tags", "v1/models", "v1/openapi.json", "v1/nope", ".well-known/jwks.json"];

  before(async () => {
    ui = mkdtempSync(path.join(os.tmpdir(), "pustaka-ui-shadow-"));
    writeFileSync(path.join(ui, "index.html"), "<!doctype html><title>Pustaka</title><div id=root></div>");
    for (const file of planted) {
      mkdirSync(path.dirname(path.join(ui, file)), { recursive: true });
      writeFileSync(path.join(ui, file), "<!doctype html><title>shadow</title>");
    }
    writeFileSync(path.join(ui, "robots.txt"), "User-agent: *\n");
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, rendererDir: ui });
  });
  after(async () => {
    await t?.close();
    rmSync(ui, { recursive: true, force: true });
  });

  it("never lets a static file answer an API path", async () => {
    for (const file of planted) {
      for (const route of [`/${file}`, `/${file.replace(/^v1/, "%76%31")}`, `/${file.toUpperCase()}`]) {
        const res = await fetch(t.url + route, { headers: { accept: BROWSER_ACCEPT, authorization: `Bearer ${t.key}` } });
        const text = await res.text();
        assert.doesNotMatch(text, /shadow/, `${route} was answered by a file of the workbench`);
        assert.doesNotMatch(res.headers.get("content-type") ?? "", /text\/html/, `${route} → ${res.status}`);
      }
    }
    assert.equal((await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${t.key}` } })).status, 200);
    assert.equal((await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.key}` } })).status, 200);
    // Its other files are served as before.
    const robots = await fetch(`${t.url}/robots.txt`);
    assert.equal(robots.status, 200);
    assert.match(await robots.text(), /User-agent/);
  });
});
