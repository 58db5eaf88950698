import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import express from "express";
import { GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER, OAuthError, type IssuedToken, type ServiceAccountService, type TokenRequest } from "../../admin/service-account-service.js";
import { AuditCoalescer } from "../../audit/audit-coalescer.js";
import type { AuditEvent, AuditService } from "../../audit/audit-service.js";
import type { OAuthKeys } from "../../security/oauth-keys.js";
import type { ServiceAccountRecord } from "../../store/service-account-store.js";
import { AuthThrottle } from "../auth-throttle.js";
import { oauthRoutes } from "./oauth-routes.js";

const SECRET = "pss-goodgoodgoodgoodgoodgoodgoodgoodgoodgoodgoo";
const account: ServiceAccountRecord = { id: "sa_good", workspaceId: "ws_default", name: "good", scopes: ["inference"], secretPrefix: null, secretSha256: null, publicJwk: null, disabledAt: null, createdAt: 0, lastTokenAt: null };

/** The token service as far as the route sees it: `sa_good` with SECRET, `sa_off` disabled (its secret is SECRET too); it counts how often it was asked. */
function fakeAccounts() {
  const accounts = {
    checks: 0,
    settings: { issuer: () => "http://127.0.0.1" },
    issueToken(request: TokenRequest): Promise<IssuedToken> {
      accounts.checks += 1;
      if (request.grantType === GRANT_JWT_BEARER) {
        // As the real service: the client named by the assertion's (unverified) issuer.
        const iss = (JSON.parse(Buffer.from(request.assertion?.split(".")[1] ?? "", "base64url").toString("utf8")) as { iss: string }).iss;
        return Promise.reject(new OAuthError("invalid_grant", "no service account with a registered key has this client_id", iss));
      }
      if (request.grantType !== GRANT_CLIENT_CREDENTIALS) return Promise.reject(new OAuthError("unsupported_grant_type", "no such grant"));
      if (!request.clientId || !request.clientSecret) return Promise.reject(new OAuthError("invalid_client", "client authentication is missing", request.clientId ?? null));
      if (request.clientId === "sa_off" && request.clientSecret === SECRET) return Promise.reject(new OAuthError("invalid_client", "this service account is disabled", "sa_off"));
      if (request.clientId !== account.id || request.clientSecret !== SECRET) return Promise.reject(new OAuthError("invalid_client", "client authentication failed", request.clientId));
      return Promise.resolve({ accessToken: "token", expiresIn: 900, scope: "inference", account, method: "client_secret" });
    },
  };
  return accounts;
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
}

/** POSTs a token request from `from` (a loopback address), with the client's secret in HTTP Basic when `basic` is given. */
function tokenRequest(port: number, form: Record<string, string>, options: { from: string; basic?: [string, string] }): Promise<Reply> {
  const body = new URLSearchParams(form).toString();
  const headers: http.OutgoingHttpHeaders = { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) };
  if (options.basic) headers.authorization = `Basic ${Buffer.from(options.basic.join(":")).toString("base64")}`;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/v1/oauth/token", localAddress: options.from, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const badSecret = () => `pss-${Math.random().toString(36).slice(2)}${"x".repeat(30)}`;
const credentials = (id: string, secret: string) => ({ grant_type: GRANT_CLIENT_CREDENTIALS, client_id: id, client_secret: secret });

describe("oauthRoutes: throttled and coalesced failures at the token endpoint", () => {
  let server: http.Server;
  let port: number;
  let accounts: ReturnType<typeof fakeAccounts>;
  let coalescer: AuditCoalescer;
  const written: AuditEvent[] = [];

  before(async () => {
    accounts = fakeAccounts();
    // Clocks that stand still: a one-second block outlasts every loop however slow the machine.
    coalescer = new AuditCoalescer((e) => written.push(e), { now: () => 0 });
    const audit = { record: (e: AuditEvent) => written.push(e), recordCoalesced: (key: string, e: AuditEvent) => coalescer.record(key, e) } as unknown as AuditService;
    const app = express();
    app.use(oauthRoutes(accounts as unknown as ServiceAccountService, {} as OAuthKeys, audit, new AuthThrottle({ now: () => 0 })));
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    coalescer.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("answers 429 slow_down with Retry-After, checking nothing, once a source has failed client authentication ten times; other sources and a secret that already worked there pass", async () => {
    assert.equal((await tokenRequest(port, { grant_type: GRANT_CLIENT_CREDENTIALS }, { from: "127.0.0.7", basic: [account.id, SECRET] })).status, 200);
    for (let i = 0; i < 10; i++) {
      const refused = await tokenRequest(port, { grant_type: GRANT_CLIENT_CREDENTIALS }, { from: "127.0.0.7", basic: [account.id, badSecret()] });
      assert.equal(refused.status, 401);
      assert.equal(refused.json.error, "invalid_client");
      assert.equal(refused.headers["www-authenticate"], 'Basic realm="pustaka"');
    }
    for (let i = 0; i < 10; i++) assert.equal((await tokenRequest(port, credentials(account.id, badSecret()), { from: "127.0.0.8" })).status, 401);
    const checks = accounts.checks;
    for (const from of ["127.0.0.7", "127.0.0.8"]) {
      const blocked = await tokenRequest(port, credentials(account.id, badSecret()), { from });
      assert.equal(blocked.status, 429);
      assert.deepEqual(Object.keys(blocked.json).sort(), ["error", "error_description"], "OAuth's error shape");
      assert.equal(blocked.json.error, "slow_down");
      assert.equal(blocked.headers["retry-after"], "1");
      assert.equal(blocked.headers["cache-control"], "no-store");
      assert.equal(blocked.headers["www-authenticate"], undefined);
      assert.equal((await tokenRequest(port, { grant_type: GRANT_CLIENT_CREDENTIALS }, { from })).status, 429, "nothing is looked at");
    }
    assert.equal(accounts.checks, checks, "no credential was checked while blocked");
    assert.equal((await tokenRequest(port, credentials(account.id, SECRET), { from: "127.0.0.8" })).status, 429, "a secret that never succeeded here gets no answer either");
    const known = await tokenRequest(port, credentials(account.id, SECRET), { from: "127.0.0.7" });
    assert.equal(known.status, 200, "the secret that already worked from this address still does (in the form as in Basic)");
    assert.equal(known.json.access_token, "token");
    assert.equal((await tokenRequest(port, { grant_type: GRANT_CLIENT_CREDENTIALS }, { from: "127.0.0.9", basic: [account.id, SECRET] })).status, 200, "other sources are unaffected");
  });

  it("does not count missing credentials, a disabled client, refused grants or malformed requests as guesses", async () => {
    const from = "127.0.0.10";
    const cases: [Record<string, string>, number, string][] = [
      [{ grant_type: GRANT_CLIENT_CREDENTIALS }, 401, "invalid_client"],
      [{ grant_type: GRANT_CLIENT_CREDENTIALS, client_id: account.id }, 401, "invalid_client"],
      [credentials("sa_off", SECRET), 401, "invalid_client"],
      [{ grant_type: GRANT_JWT_BEARER, assertion: `e30.${Buffer.from(JSON.stringify({ iss: "sa_x" })).toString("base64url")}.c2ln` }, 400, "invalid_grant"],
      [{ grant_type: "password" }, 400, "unsupported_grant_type"],
    ];
    for (const [form, status, error] of cases) {
      for (let i = 0; i < 12; i++) {
        const res = await tokenRequest(port, form, { from });
        assert.deepEqual([res.status, res.json.error], [status, error], JSON.stringify(form));
      }
    }
    assert.equal((await tokenRequest(port, credentials(account.id, badSecret()), { from })).status, 401, "the source was never blocked");
  });

  it("audits 200 bad secrets from one source as a handful of entries that count all 200, and refused grants naming random clients as one", async () => {
    written.length = 0;
    const statuses = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      // Each guess names a different client: only the ten that were checked may have entries of their own.
      const res = await tokenRequest(port, credentials(`sa_${i}x${Math.random().toString(36).slice(2)}`, badSecret()), { from: "127.0.0.12" });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(statuses), { 401: 10, 429: 190 });
    assert.equal(written.length, 11, "ten checked guesses (each naming its own client), then one entry for the blocked source");
    for (let i = 0; i < 50; i++) {
      const iss = `${"z".repeat(200)}-not-an-account-${i}`;
      const res = await tokenRequest(port, { grant_type: GRANT_JWT_BEARER, assertion: `e30.${Buffer.from(JSON.stringify({ iss })).toString("base64url")}.c2ln` }, { from: "127.0.0.13" });
      assert.equal(res.status, 400);
    }
    assert.equal(written.length, 12, "fifty refused grants naming fifty clients: one entry so far");
    coalescer.close();
    const fromAttacker = written.filter((e) => e.data.remote === "127.0.0.12");
    assert.equal(fromAttacker.length, 12);
    assert.equal(
      fromAttacker.reduce((sum, e) => sum + ((e.data.count as number | undefined) ?? 1), 0),
      200,
    );
    const blocked = fromAttacker.at(-1)!;
    assert.deepEqual(
      { type: blocked.type, outcome: blocked.outcome, error: blocked.data.error, client_id: blocked.data.client_id, count: blocked.data.count },
      { type: "service_account.token", outcome: "failure", error: "slow_down", client_id: null, count: 189 },
    );
    const grants = written.filter((e) => e.data.remote === "127.0.0.13");
    assert.deepEqual(
      grants.map((e) => [e.data.error, e.data.count ?? 1]),
      [
        ["invalid_grant", 1],
        ["invalid_grant", 49],
      ],
    );
    assert.ok(grants.every((e) => e.data.client_id === "z".repeat(100)), "client ids are recorded, cut to 100 characters");
  });
});
