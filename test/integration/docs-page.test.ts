/**
 * `GET /docs` and `GET /v1/docs` on the server as `npm start` runs it (the built workbench
 * at `/`): the API reference as one self-contained HTML page, with a CSP that allows no
 * source, listing every operation of `GET /v1/openapi.json`; authenticated as that document
 * is (a key, or the workbench's session on a same-origin navigation), refusals in words to
 * a browser and in the API's shape to other clients; a browser with no key sent from
 * `/docs` to `/v1/docs`, where its session cookie goes.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
/** What Chromium sends when a person types the address or follows a link of the same origin. */
const NAVIGATION = { accept: HTML, "sec-fetch-mode": "navigate", "sec-fetch-dest": "document", "sec-fetch-site": "none" };

describe("the API reference page (/docs)", () => {
  let t: TestServer;
  let cookie: string;

  before(async () => {
    // The spec's default tier (not the tests' unlimited one), so the rate-limit headers are sent.
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, config: { rateLimits: { defaultTier: "default" } } });
    const link = (await t.server.signInLink())!;
    const res = await fetch(`${t.url}/v1/session`, { method: "POST", headers: { "content-type": "application/json", "x-pustaka-csrf": "1" }, body: JSON.stringify({ token: /#signin=(.+)$/.exec(link)![1] }) });
    assert.equal(res.status, 201);
    cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  });
  after(() => t?.close());

  /**
   * A GET with exactly these headers, redirects not followed. Through node:http, not fetch:
   * fetch sets `Sec-Fetch-Mode` itself, and these tests must send what a browser navigating sends.
   */
  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Headers; text: () => Promise<string>; json: () => Promise<unknown> }>((resolve, reject) => {
      const request = http.get(t.url + path, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          const all = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) all.set(name, [value].flat().join(", "));
          resolve({ status: res.statusCode!, headers: all, text: async () => body, json: async () => JSON.parse(body) as unknown });
        });
      });
      request.on("error", reject);
    });

  it("serves one self-contained HTML page to a key, with a CSP that allows no source", async () => {
    for (const path of ["/docs", "/v1/docs", "/docs/", "/DOCS?x=%3Cscript%3E"]) {
      const res = await get(path, { authorization: `Bearer ${t.key}`, accept: HTML });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8", path);
      const html = await res.text();
      const csp = res.headers.get("content-security-policy") ?? "";
      const directives = new Map(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
      assert.deepEqual(directives.get("default-src"), ["'none'"], csp);
      const css = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
      assert.deepEqual(directives.get("style-src"), [`'sha256-${createHash("sha256").update(css).digest("base64")}'`], "the page's own style sheet, by its hash");
      assert.equal(directives.get("script-src"), undefined, "scripts fall to default-src 'none'");
      assert.doesNotMatch(csp, /https?:|\*|'unsafe-|data:|blob:|'self'/, csp);
      assert.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.equal(res.headers.get("x-ratelimit-limit"), "60", "the rate-limit headers every authenticated answer carries");
      // Nothing the browser would fetch: no script, link, image, frame, font, import or remote URL.
      assert.doesNotMatch(html, /<(script|link|img|iframe|object|embed|source|video|audio)\b|url\(|@import|\ssrc=|https?:\/\//i);
      assert.match(html, /<h1>Pustaka API reference<\/h1>/);
    }
  });

  it("lists every operation of the OpenAPI document, each under its tag with method, path, summary and credential", async () => {
    const document = (await t.call("GET", "/v1/openapi.json")).json;
    const html = await (await get("/docs", { authorization: `Bearer ${t.key}` })).text();
    const headings = [...html.matchAll(/<h3 id="op-[a-z0-9-]+"><span class="method m-[a-z]+">([A-Z]+)<\/span> <code class="path">([^<]+)<\/code>/g)].map((m) => `${m[1]} ${m[2]!.replaceAll("&amp;", "&")}`);
    const operations = Object.entries<Record<string, { summary: string; tags: string[] }>>(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));
    assert.ok(operations.length >= 100, `${operations.length} operations`);
    assert.deepEqual([...headings].sort(), operations.map((o) => o.key).sort(), "one heading per operation, no more");
    for (const { key, op } of operations) {
      const [method, path] = key.split(" ");
      const article = new RegExp(`<article class="op"[^>]*><h3[^>]*><span[^>]*>${method}</span> <code class="path">${path!.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}</code>[\\s\\S]*?</article>`).exec(html)?.[0];
      assert.ok(article, key);
      assert.ok(article.includes(`<p class="summary">${op.summary.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("'", "&#39;").replaceAll('"', "&quot;").replace(/`([^`]+)`/g, "<code>$1</code>")}</p>`), `${key}: its summary`);
      assert.match(article, /<p class="credential"><strong>Needs:<\/strong> /, key);
    }
    for (const tag of new Set(operations.map((o) => o.op.tags[0]!))) assert.ok(html.includes(`>${tag}</h2>`), `tag ${tag}`);
    // The scopes the document names are on the page, and the public routes say so.
    assert.match(html, /<code class="path">\/v1\/rag\/corpora\/\{corpusId\}\/query<\/code>[\s\S]*?with the <code>rag\.read<\/code> scope/);
    assert.match(html, /<code class="path">\/healthz<\/code>[\s\S]*?No credential needed/);
    // The page documents itself under /v1, as the HTML it is.
    assert.equal(document.paths["/v1/docs"].get.responses["200"].content["text/html"] !== undefined, true);
  });

  it("opens for the workbench's session on a same-origin or typed navigation, and sends a keyless browser from /docs to /v1/docs", async () => {
    const moved = await get("/docs", NAVIGATION);
    assert.equal(moved.status, 303);
    assert.equal(moved.headers.get("location"), "/v1/docs");
    for (const site of ["none", "same-origin"]) {
      const res = await get("/v1/docs", { ...NAVIGATION, "sec-fetch-site": site, cookie });
      assert.equal(res.status, 200, site);
      assert.match(await res.text(), /<h1>Pustaka API reference<\/h1>/);
    }
  });

  it("refuses the session when the browser says another site asked, or says nothing, as the API does", async () => {
    for (const headers of [
      { ...NAVIGATION, "sec-fetch-site": "cross-site", cookie },
      { ...NAVIGATION, "sec-fetch-site": "same-site", cookie },
      { accept: HTML, cookie },
      { ...NAVIGATION, "sec-fetch-mode": "no-cors", "sec-fetch-dest": "iframe", "sec-fetch-site": "same-origin", cookie },
    ]) {
      const res = await get("/v1/docs", headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(await res.text(), /a session can only be used by the Pustaka workbench itself/);
    }
  });

  it("refuses strangers: a page saying how to sign in to a browser, the API's JSON error to other clients", async () => {
    const page = await get("/v1/docs", NAVIGATION);
    assert.equal(page.status, 401);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(page.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.match(page.headers.get("content-security-policy") ?? "", /^default-src 'none'; style-src 'sha256-/);
    const text = await page.text();
    assert.match(text, /<h1>The API reference needs you signed in<\/h1>/);
    assert.doesNotMatch(text, /<script/i);
    for (const [path, headers] of [
      ["/docs", { accept: "application/json" }],
      ["/docs", {}],
      ["/v1/docs", { accept: "application/json" }],
      ["/docs", { authorization: "Bearer psk-not-a-key-at-all-0000000000" }],
      ["/docs", { authorization: "Bearer" }],
      ["/docs", { authorization: `Bearer ${t.key}`, "x-api-key": "psk-another-key-000000000000000" }],
    ] as const) {
      const res = await get(path, headers);
      assert.equal(res.status, 401, `${path} ${JSON.stringify(headers)}`);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const body = (await res.json()) as { error: { type: string; code: string } };
      assert.equal(body.error.type, "authentication_error");
    }
    // A bad key from a browser is refused in words too, never the page.
    const bad = await get("/docs", { ...NAVIGATION, authorization: "Bearer psk-not-a-key-at-all-0000000000" });
    assert.equal(bad.status, 401);
    assert.match(await bad.text(), /The API reference needs you signed in/);
  });

  it("serves only GET (and HEAD): other methods get the API's JSON 404, never the page", async () => {
    const head = await fetch(`${t.url}/docs`, { method: "HEAD", headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(head.status, 200);
    assert.match(head.headers.get("content-type") ?? "", /^text\/html/);
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await fetch(`${t.url}/v1/docs`, { method, headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: "{}" });
      assert.equal(res.status, 404, method);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    }
  });
});
