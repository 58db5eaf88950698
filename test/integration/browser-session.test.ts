/**
 * Browser mode: the workbench served at `/` with a strict CSP, the sign-in link (token in
 * the fragment), the HttpOnly SameSite=Strict session cookie, and a session that a page
 * of another origin cannot use. API keys keep working beside it.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

function fakeWorkbench(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-ui-"));
  writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>Pustaka</title><div id=root></div>");
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(path.join(dir, "assets", "app-1234.js"), "console.log('workbench')");
  return dir;
}

describe("browser mode and sessions", () => {
  let t: TestServer;
  let ui: string;
  let dataDir: string;
  let logs = "";
  const logStream = new PassThrough();
  logStream.on("data", (chunk: Buffer) => (logs += chunk.toString()));

  const tokenOf = (link: string | null) => new URL(link!).hash.replace(/^#signin=/, "");
  const signIn = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/v1/session`, { method: "POST", headers: { "content-type": "application/json", "x-pustaka-csrf": "1", origin: t.url, ...headers }, body: JSON.stringify({ token }) });
  const withCookie = (cookie: string, headers: Record<string, string> = {}) => ({ cookie, "x-pustaka-csrf": "1", "sec-fetch-site": "same-origin", ...headers });

  before(async () => {
    ui = fakeWorkbench();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-sess-"));
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, rendererDir: ui, dataDir, logStream });
  });
  after(async () => {
    await t.close();
    rmSync(ui, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves the workbench at / with a strict CSP, and its routes fall back to index.html", async () => {
    const home = await fetch(`${t.url}/`, { headers: { accept: "text/html" } });
    assert.equal(home.status, 200);
    assert.match(await home.text(), /<title>Pustaka<\/title>/);
    const csp = home.headers.get("content-security-policy") ?? "";
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-eval/);
    assert.equal(home.headers.get("x-frame-options"), "DENY");
    const deep = await fetch(`${t.url}/corpora/corp_x`, { headers: { accept: "text/html" } });
    assert.equal(deep.status, 200);
    assert.match(await deep.text(), /<div id=root>/);
    const asset = await fetch(`${t.url}/assets/app-1234.js`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get("cache-control") ?? "", /immutable/);
    assert.equal((await fetch(`${t.url}/assets/missing.js`)).status, 404);
    // The API is not shadowed by the fallback.
    assert.equal((await fetch(`${t.url}/v1/models`, { headers: { accept: "text/html" } })).status, 401);
  });

  it("answers the OAuth discovery paths with JSON even for a browser, not with the workbench's page", async () => {
    for (const route of ["/.well-known/jwks.json", "/.well-known/oauth-authorization-server"]) {
      const res = await fetch(`${t.url}${route}`, { headers: { accept: "text/html,*/*" } });
      assert.equal(res.status, 200, route);
      assert.match(res.headers.get("content-type") ?? "", /application\/json/, route);
    }
  });

  it("signs in with the link's token into an HttpOnly, SameSite=Strict session that acts as the workspace's owner", async () => {
    const link = (await t.server.signInLink());
    assert.ok(link?.startsWith(`${t.url}/#signin=psi-`), "the token rides in the fragment");
    const bad = await signIn("psi-not-a-real-token");
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as any).error.code, "invalid_sign_in_token");

    const res = await signIn(tokenOf(link));
    assert.equal(res.status, 201);
    const setCookie = res.headers.get("set-cookie") ?? "";
    assert.match(setCookie, /^pustaka_session=pss-[0-9A-Za-z]+;/);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Strict/);
    assert.match(setCookie, /Path=\/v1/);
    const body = (await res.json()) as any;
    assert.equal(body.principal.workspace_id, "ws_default");
    assert.ok(body.principal.scopes.includes("keys.manage"));

    const cookie = setCookie.split(";")[0]!;
    const me = await fetch(`${t.url}/v1/me`, { headers: withCookie(cookie) });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as any).key_name, "workbench session");
    const models = await fetch(`${t.url}/v1/models`, { headers: withCookie(cookie) });
    assert.equal(models.status, 200);
    // Neither the sign-in token nor the session secret ever reaches the logs.
    assert.ok(!logs.includes(tokenOf(link)));
    assert.ok(!logs.includes(cookie.split("=")[1]!));
    // The sign-in is in the workspace's audit trail as the session, and the session can read it (it holds audit.read).
    const trail = await fetch(`${t.url}/v1/audit/events?type=session.create`, { headers: withCookie(cookie) });
    const [entry] = ((await trail.json()) as any).data;
    assert.match(entry.actor, /^session:/);
    assert.ok(!JSON.stringify(entry).includes(cookie.split("=")[1]!), "no session secret in the trail");
  });

  it("refuses the session to a page of another origin, with or without the workbench's header", async () => {
    const setCookie = (await signIn(tokenOf((await t.server.signInLink())))).headers.get("set-cookie")!;
    const cookie = setCookie.split(";")[0]!;
    const attempts: Record<string, string>[] = [
      { origin: "http://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site", origin: "http://127.0.0.1:9999" },
      { "x-pustaka-csrf": "" },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${t.url}/v1/me`, { headers: withCookie(cookie, headers) });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(((await res.json()) as any).error.code, "cross_origin_request");
    }
    // Signing in from another origin (login CSRF) is refused too.
    const foreign = await signIn(tokenOf((await t.server.signInLink())), { origin: "http://evil.example" });
    assert.equal(foreign.status, 403);
    // The server grants no CORS: a browser would not even let a foreign page read answers.
    const preflight = await fetch(`${t.url}/v1/me`, { method: "OPTIONS", headers: { origin: "http://evil.example", "access-control-request-method": "GET", "access-control-request-headers": "x-pustaka-csrf" } });
    assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  });

  it("signs out, keeps sessions across a restart, and leaves API keys working", async () => {
    const setCookie = (await signIn(tokenOf((await t.server.signInLink())))).headers.get("set-cookie")!;
    const cookie = setCookie.split(";")[0]!;
    const staying = (await signIn(tokenOf((await t.server.signInLink())))).headers.get("set-cookie")!.split(";")[0]!;
    const out = await fetch(`${t.url}/v1/session`, { method: "DELETE", headers: withCookie(cookie) });
    assert.equal(out.status, 200);
    assert.match(out.headers.get("set-cookie") ?? "", /Max-Age=0/);
    const after = await fetch(`${t.url}/v1/me`, { headers: withCookie(cookie) });
    assert.equal(after.status, 401);
    assert.equal(((await after.json()) as any).error.code, "invalid_session");

    const oldLink = (await t.server.signInLink());
    await t.close();
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, rendererDir: ui, dataDir, logStream });
    assert.equal((await fetch(`${t.url}/v1/me`, { headers: withCookie(staying) })).status, 200, "a session outlives a restart");
    assert.equal((await signIn(tokenOf(oldLink))).status, 401, "a sign-in token does not");
    assert.equal((await t.call("GET", "/v1/me")).status, 200, "bearer keys work as before");
  });
});
