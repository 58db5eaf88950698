import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Request, Response } from "express";
import type { AdminService } from "../admin/admin-service.js";
import type { SessionService } from "../admin/session-service.js";
import { AuditCoalescer } from "../audit/audit-coalescer.js";
import type { AuditEvent, AuditService } from "../audit/audit-service.js";
import type { Principal } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import { AuthThrottle } from "./auth-throttle.js";
import { authenticate } from "./authenticate.js";
import { toWireError } from "./error-handler.js";

const GOOD = "psk-goodgoodgoodgoodgoodgoodgood";
const REVOKED = "psk-revokedrevokedrevokedrevoked";
const principal: Principal = { workspaceId: "ws_default", keyId: "key_good", keyName: "good", scopes: new Set(["inference"]) };

/** An admin service that knows one key, and counts how often it was asked. */
function fakeAdmin() {
  const admin = {
    checks: 0,
    async authenticate(secret: string): Promise<Principal> {
      admin.checks += 1;
      if (secret === GOOD) return principal;
      if (secret === REVOKED) throw new ServiceError("authentication", "this API key has been revoked", { code: "revoked_api_key" });
      throw new ServiceError("authentication", "invalid API key", { code: "invalid_api_key" });
    },
  };
  return admin;
}

const sessions = {
  async authenticate(): Promise<Principal> {
    throw new ServiceError("authentication", "session expired", { code: "invalid_session" });
  },
} as unknown as SessionService;

/** Runs the middleware on a request with these header lines (repeats allowed) from `remote`; resolves to the error passed on, or null. */
function call(handler: ReturnType<typeof authenticate>, headers: [string, string][], remote = "192.0.2.1"): Promise<{ error: unknown; principal: Principal | undefined }> {
  const rawHeaders = headers.flat();
  // Like Node: `authorization` keeps the first line, other repeated headers are joined with ", ".
  const get = (name: string) => {
    const values = headers.filter(([h]) => h.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
    if (values.length === 0) return undefined;
    return name.toLowerCase() === "authorization" ? values[0] : values.join(", ");
  };
  const req = { rawHeaders, get, method: "GET", path: "/v1/models", protocol: "http", socket: { remoteAddress: remote } } as unknown as Request;
  const res = { locals: { requestId: `req_${Math.random().toString(36).slice(2)}` } } as unknown as Response;
  return new Promise((resolve) => handler(req, res, (error?: unknown) => resolve({ error: error ?? null, principal: res.locals.principal })));
}

const codeOf = (error: unknown) => (error ? toWireError(error).body.error.code : null);
const statusOf = (error: unknown) => (error ? toWireError(error).status : 200);
const randomKey = () => `psk-${Math.random().toString(36).slice(2, 10)}${"x".repeat(30)}`;

describe("authenticate", () => {
  it("refuses two different keys in Authorization and x-api-key (401 ambiguous_credentials), accepts the same key in both", async () => {
    const admin = fakeAdmin();
    const handler = authenticate(admin as unknown as AdminService, sessions);
    const both = await call(handler, [
      ["Authorization", `Bearer ${GOOD}`],
      ["x-api-key", "psk-otherotherotherotherother"],
    ]);
    assert.equal(statusOf(both.error), 401);
    assert.equal(codeOf(both.error), "ambiguous_credentials");
    assert.equal(toWireError(both.error).body.error.type, "authentication_error");
    assert.equal(admin.checks, 0, "neither key is checked");
    const swapped = await call(handler, [
      ["Authorization", "Bearer psk-otherotherotherotherother"],
      ["x-api-key", GOOD],
    ]);
    assert.equal(codeOf(swapped.error), "ambiguous_credentials");
    const malformed = await call(handler, [
      ["Authorization", "Basic dXNlcjpwYXNz"],
      ["x-api-key", GOOD],
    ]);
    assert.equal(codeOf(malformed.error), "ambiguous_credentials");
    const same = await call(handler, [
      ["Authorization", `Bearer ${GOOD}`],
      ["x-api-key", GOOD],
    ]);
    assert.equal(same.error, null);
    assert.equal(same.principal, principal);
    assert.equal((await call(handler, [["x-api-key", GOOD]])).principal, principal, "x-api-key alone still works");
  });

  it("refuses either header sent twice, even with the same key", async () => {
    const handler = authenticate(fakeAdmin() as unknown as AdminService, sessions);
    for (const headers of [
      [
        ["Authorization", `Bearer ${GOOD}`],
        ["authorization", "Bearer psk-otherotherotherotherother"],
      ],
      [
        ["Authorization", `Bearer ${GOOD}`],
        ["Authorization", `Bearer ${GOOD}`],
      ],
      [
        ["x-api-key", GOOD],
        ["X-Api-Key", GOOD],
      ],
    ] as [string, string][][]) {
      const { error } = await call(handler, headers);
      assert.equal(codeOf(error), "ambiguous_credentials", JSON.stringify(headers));
    }
  });

  it("answers 429 too_many_auth_failures with Retry-After, without checking the key, once a source has failed too often", async () => {
    const admin = fakeAdmin();
    const handler = authenticate(admin as unknown as AdminService, sessions, undefined, undefined, new AuthThrottle({ maxFailures: 10, now: () => 0 }));
    // Missing credentials, and keys that are ours but revoked, are not guesses: they never block.
    for (let i = 0; i < 20; i++) assert.equal(codeOf((await call(handler, [], "192.0.2.9")).error), "missing_api_key");
    for (let i = 0; i < 20; i++) assert.equal(codeOf((await call(handler, [["x-api-key", REVOKED]], "192.0.2.9")).error), "revoked_api_key");
    assert.equal(codeOf((await call(handler, [["Authorization", `Bearer ${GOOD}`]], "192.0.2.9")).error), null);
    // The good key succeeded from 192.0.2.5 before the attack; 192.0.2.6 has not used it yet.
    assert.equal((await call(handler, [["Authorization", `Bearer ${GOOD}`]], "192.0.2.5")).error, null);
    for (let i = 0; i < 10; i++) assert.equal(codeOf((await call(handler, [["Authorization", `Bearer ${randomKey()}`]], "192.0.2.5")).error), "invalid_api_key");
    for (let i = 0; i < 10; i++) assert.equal(codeOf((await call(handler, [["Authorization", `Bearer ${randomKey()}`]], "192.0.2.6")).error), "invalid_api_key");
    const checks = admin.checks;
    for (const remote of ["192.0.2.5", "192.0.2.6"]) {
      const blocked = await call(handler, [["Authorization", `Bearer ${randomKey()}`]], remote);
      const wire = toWireError(blocked.error);
      assert.equal(wire.status, 429);
      assert.equal(wire.body.error.type, "rate_limit_error");
      assert.equal(wire.body.error.code, "too_many_auth_failures");
      assert.equal(wire.retryAfter, 1);
      assert.equal(codeOf((await call(handler, [], remote)).error), "too_many_auth_failures", "nothing is looked at");
    }
    assert.equal(admin.checks, checks, "no key was checked while blocked");
    assert.equal(codeOf((await call(handler, [["Authorization", `Bearer ${GOOD}`]], "192.0.2.6")).error), "too_many_auth_failures", "a key that never succeeded here gets no answer either");
    assert.equal((await call(handler, [["Authorization", `Bearer ${GOOD}`]], "192.0.2.5")).principal, principal, "the key that already worked from this address still does");
    assert.equal((await call(handler, [["x-api-key", GOOD]], "192.0.2.7")).principal, principal, "other sources are unaffected");
  });

  it("audits 500 bad keys from one source as a handful of entries that still count all 500", async () => {
    const written: AuditEvent[] = [];
    const coalescer = new AuditCoalescer((e) => written.push(e));
    const audit = { recordCoalesced: (key: string, event: AuditEvent) => coalescer.record(key, event) } as unknown as AuditService;
    // A clock that stands still: the one-second block outlasts the loop however slow the machine.
    const handler = authenticate(fakeAdmin() as unknown as AdminService, sessions, audit, undefined, new AuthThrottle({ now: () => 0 }));
    const codes = new Map<string, number>();
    for (let i = 0; i < 500; i++) {
      const code = codeOf((await call(handler, [["Authorization", `Bearer ${randomKey()}`]], "198.51.100.4")).error)!;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(codes), { invalid_api_key: 10, too_many_auth_failures: 490 });
    assert.equal(written.length, 11, "ten checked keys (each its own prefix), then one entry for the blocked source");
    coalescer.close();
    assert.equal(written.length, 12);
    const blocked = written.at(-1)!;
    assert.deepEqual({ reason: blocked.data.reason, key_prefix: blocked.data.key_prefix, count: blocked.data.count, remote: blocked.data.remote }, { reason: "too_many_auth_failures", key_prefix: null, count: 489, remote: "198.51.100.4" });
    assert.equal(
      written.reduce((sum, e) => sum + ((e.data.count as number | undefined) ?? 1), 0),
      500,
    );
  });
});
