import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Request, Response } from "express";
import { hostGuard, hostnameOf } from "./host-guard.js";

function run(guard: ReturnType<typeof hostGuard>, host: string): number {
  let status = 0;
  const req = { get: (h: string) => (h.toLowerCase() === "host" ? host : undefined) } as unknown as Request;
  const res = {
    headersSent: false,
    locals: {},
    setHeader() {},
    status(code: number) {
      status = code;
      return this;
    },
    json() {
      return this;
    },
  } as unknown as Response;
  guard(req, res, () => {
    status = 200;
  });
  return status;
}

describe("hostGuard", () => {
  it("parses host headers with ports and IPv6 literals", () => {
    assert.equal(hostnameOf("LocalHost:7780"), "localhost");
    assert.equal(hostnameOf("[::1]:7780"), "::1");
    assert.equal(hostnameOf("127.0.0.1"), "127.0.0.1");
  });

  it("accepts loopback names and refuses a rebinding hostname", () => {
    const guard = hostGuard("127.0.0.1", []);
    assert.equal(run(guard, "127.0.0.1:7780"), 200);
    assert.equal(run(guard, "localhost:7780"), 200);
    assert.equal(run(guard, "[::1]:7780"), 200);
    assert.equal(run(guard, "evil.example.com:7780"), 403);
    assert.equal(run(guard, ""), 403);
  });

  it("accepts configured names, and IP literals when bound to every interface", () => {
    assert.equal(run(hostGuard("127.0.0.1", ["pustaka.lan"]), "pustaka.lan"), 200);
    assert.equal(run(hostGuard("0.0.0.0", []), "192.168.1.20:7780"), 200);
    assert.equal(run(hostGuard("0.0.0.0", []), "attacker.example:7780"), 403);
  });
});
