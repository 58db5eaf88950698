/**
 * Serving beyond loopback needs TLS or an explicit --insecure-http: HTTPS with a
 * certificate and key (self-signed here, made with openssl), a clear refusal to start on
 * 0.0.0.0 over plain HTTP, and a warning when insecure HTTP is allowed. Session cookies
 * are Secure under TLS.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ConfigError, isLoopbackHost, loadConfig } from "../../src-server/config.js";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const CLI = ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts")];

/** A self-signed certificate for localhost and 127.0.0.1. */
function selfSigned(dir: string): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, "cert.pem");
  const keyFile = path.join(dir, "key.pem");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", keyFile, "-out", certFile,
  ], { stdio: "ignore" });
  return { certFile, keyFile };
}

/** An HTTPS request trusting only `ca`. */
function request(url: string, ca: Buffer, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: init.method ?? "GET", headers: init.headers, ca }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** Runs `pustaka serve` until it prints its URL (or exits); returns what it said. */
function serve(args: string[], dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string; url: string | null }> {
  const child = spawn(process.execPath, [...CLI, "serve", "--port", "0", "--no-starter", "--log-level", "warn", "--data-dir", dataDir, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, PUSTAKA_API_KEY: "" },
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const url = /listening on (\S+)/.exec(stdout)?.[1];
      if (url && stdout.includes("\n  models:")) {
        // Give the warning (written right after the URL) a moment, then stop.
        setTimeout(() => child.kill("SIGTERM"), 300);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, url: /listening on (\S+)/.exec(stdout)?.[1] ?? null });
    });
  });
}

describe("TLS and serving beyond loopback", () => {
  let dir: string;
  let tls: { certFile: string; keyFile: string };
  let ca: Buffer;
  let t: TestServer;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-tls-"));
    tls = selfSigned(dir);
    ca = readFileSync(tls.certFile);
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") }, config: { tls } });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves HTTPS when given a certificate and key", async () => {
    assert.match(t.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await request(`${t.url}/healthz`, ca);
    assert.equal(health.status, 200);
    assert.equal(JSON.parse(health.body).status, "ok");
    const models = await request(`${t.url}/v1/models`, ca, { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(models.status, 200);
    await assert.rejects(fetch(`${t.url.replace("https:", "http:")}/healthz`), "plain HTTP is not answered on the TLS port");
  });

  it("marks the session cookie Secure under TLS", async () => {
    const token = await t.server.services.sessions.issueSignInToken();
    const res = await request(`${t.url}/v1/session`, ca, {
      method: "POST",
      headers: { "content-type": "application/json", "x-pustaka-csrf": "1", origin: t.url },
      body: JSON.stringify({ token }),
    });
    assert.equal(res.status, 201, res.body);
    const cookie = String(res.headers["set-cookie"]);
    assert.match(cookie, /pustaka_session=/);
    assert.match(cookie, /;\s*Secure/i);
    assert.match(cookie, /HttpOnly/i);
  });

  it("refuses a non-loopback host without TLS, naming the flags", () => {
    const base = { env: {}, defaults: { catalogPath: path.join(REPO_ROOT, "models", "catalog.json"), dataDir: dir } };
    assert.throws(
      () => loadConfig({ ...base, overrides: { host: "0.0.0.0" } }),
      (e: unknown) => e instanceof ConfigError && /--tls-cert/.test(e.message) && /--tls-key/.test(e.message) && /--insecure-http/.test(e.message),
    );
    assert.throws(() => loadConfig({ ...base, overrides: { host: "192.168.1.20", tls: { certFile: tls.certFile } } }), /both the certificate and the key/);
    assert.equal(loadConfig({ ...base, overrides: { host: "0.0.0.0", insecureHttp: true } }).insecureHttp, true);
    assert.equal(loadConfig({ ...base, overrides: { host: "0.0.0.0", tls } }).tls.certFile, tls.certFile);
    for (const host of ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST", "app.localhost", "::ffff:127.0.0.1"]) assert.ok(isLoopbackHost(host), host);
    for (const host of ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.com", "128.0.0.1", "localhost.example.com"]) assert.ok(!isLoopbackHost(host), host);
  });

  it("`serve --host 0.0.0.0` exits with the message; with --insecure-http it starts and warns; with TLS it serves https", async () => {
    const refused = await serve(["--host", "0.0.0.0"], path.join(dir, "refused"));
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /needs TLS: pass --tls-cert <file> and --tls-key <file>.*or --insecure-http/s);
    assert.equal(refused.url, null);

    const insecure = await serve(["--host", "0.0.0.0", "--insecure-http"], path.join(dir, "insecure"));
    assert.match(insecure.url ?? "", /^http:\/\/0\.0\.0\.0:\d+$/, insecure.stdout + insecure.stderr);
    assert.match(insecure.stderr, /warning: serving plain HTTP on 0\.0\.0\.0/);
    assert.match(insecure.stderr, /"level":40.*plain HTTP beyond this machine/, "the log warns as well");

    const secure = await serve(["--host", "0.0.0.0", "--tls-cert", tls.certFile, "--tls-key", tls.keyFile], path.join(dir, "secure"));
    assert.match(secure.url ?? "", /^https:\/\/0\.0\.0\.0:\d+$/, secure.stdout + secure.stderr);
    assert.doesNotMatch(secure.stderr, /plain HTTP/);
  });
});
