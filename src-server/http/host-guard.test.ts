import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Request, Response } from "express";
import { hostGuard, hostnameOf, parseHost } from "./host-guard.js";

/** Runs the guard on a request carrying these `Host` lines (none, one, or several); returns the status and error code. */
function send(guard: ReturnType<typeof hostGuard>, ...hosts: string[]): { status: number; code: string | undefined } {
  let status = 0;
  let code: string | undefined;
  const rawHeaders = hosts.flatMap((h, i) => [i % 2 === 0 ? "Host" : "host", h]);
  const req = { rawHeaders, get: (h: string) => (h.toLowerCase() === "host" ? hosts[0] : undefined) } as unknown as Request;
  const res = {
    headersSent: false,
    locals: {},
    setHeader() {},
    status(s: number) {
      status = s;
      return this;
    },
    json(body: { error: { code: string } }) {
      code = body.error.code;
      return this;
    },
  } as unknown as Response;
  guard(req, res, () => {
    status = 200;
  });
  return { status, code };
}

const run = (guard: ReturnType<typeof hostGuard>, host: string) => send(guard, host).status;

describe("hostGuard", () => {
  it("parses host headers with ports and IPv6 literals", () => {
    assert.deepEqual(parseHost("LocalHost:7780"), { hostname: "localhost", port: 7780 });
    assert.deepEqual(parseHost("[::1]:7780"), { hostname: "::1", port: 7780 });
    assert.deepEqual(parseHost("[::1]"), { hostname: "::1", port: null });
    assert.deepEqual(parseHost("127.0.0.1"), { hostname: "127.0.0.1", port: null });
    assert.deepEqual(parseHost("pustaka.lan."), { hostname: "pustaka.lan.", port: null });
    assert.equal(hostnameOf("::1"), "::1");
    assert.equal(hostnameOf("[::1]"), "::1");
    assert.equal(hostnameOf("Pustaka.LAN:8443"), "pustaka.lan");
  });

  it("refuses anything after an IPv6 literal but a port, and other malformed hosts", () => {
    for (const bad of [
      "[::1].evil.com",
      "[::1]evil.com",
      "[::1]:7780.evil.com",
      "[::1]:",
      "[::1",
      "[evil.com]",
      "[127.0.0.1]",
      "[::1]:7780:1",
      "::1",
      "localhost:",
      "localhost:99999",
      "localhost:80a",
      "localhost:+80",
      "local host",
      "localhost/evil",
      "user@localhost",
      "localhost..",
      ".localhost",
      "",
      "a".repeat(254),
    ]) {
      assert.equal(parseHost(bad), null, bad);
    }
  });

  it("accepts loopback names and refuses a rebinding hostname", () => {
    const guard = hostGuard("127.0.0.1", []);
    assert.equal(run(guard, "127.0.0.1:7780"), 200);
    assert.equal(run(guard, "localhost:7780"), 200);
    assert.equal(run(guard, "[::1]:7780"), 200);
    assert.equal(run(guard, "app.localhost:7780"), 200);
    assert.deepEqual(send(guard, "evil.example.com:7780"), { status: 403, code: "host_not_allowed" });
  });

  it("refuses a Host that smuggles a name after a bracketed literal (400), not reading it as ::1", () => {
    const guard = hostGuard("127.0.0.1", []);
    assert.deepEqual(send(guard, "[::1].evil.com"), { status: 400, code: "invalid_host_header" });
    assert.deepEqual(send(guard, "[::1].evil.com:7780"), { status: 400, code: "invalid_host_header" });
    assert.deepEqual(send(guard, "localhost:7780 evil.com"), { status: 400, code: "invalid_host_header" });
  });

  it("refuses a request without exactly one Host header (400)", () => {
    const guard = hostGuard("127.0.0.1", []);
    assert.deepEqual(send(guard), { status: 400, code: "invalid_host_header" });
    assert.deepEqual(send(guard, ""), { status: 400, code: "invalid_host_header" });
    assert.deepEqual(send(guard, "127.0.0.1:7780", "evil.example.com"), { status: 400, code: "invalid_host_header" });
    assert.deepEqual(send(guard, "127.0.0.1:7780", "127.0.0.1:7780"), { status: 400, code: "invalid_host_header" }, "even two equal ones");
  });

  it("accepts configured names, and IP literals when bound to every interface", () => {
    assert.equal(run(hostGuard("127.0.0.1", ["pustaka.lan"]), "pustaka.lan"), 200);
    assert.equal(run(hostGuard("127.0.0.1", ["Pustaka.LAN:8443"]), "pustaka.lan:8443"), 200);
    assert.equal(run(hostGuard("::1", []), "[::1]:7780"), 200);
    assert.equal(run(hostGuard("0.0.0.0", []), "192.168.1.20:7780"), 200);
    assert.equal(run(hostGuard("::", []), "[fe80::1]:7780"), 200);
    assert.equal(run(hostGuard("0.0.0.0", []), "attacker.example:7780"), 403);
    assert.equal(run(hostGuard("0.0.0.0", []), "[::1].attacker.example"), 400);
  });
});
