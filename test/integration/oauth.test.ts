/**
 * Service accounts and OAuth 2.0 end to end: admin API, the token endpoint with a client
 * secret (Basic and form) and with JWT assertions signed by the account's own key
 * (RFC 7523, both the grant and client authentication), replay refused, RFC 8414 metadata
 * and JWKS read by a standard client library (openid-client), tokens verified against the
 * JWKS, scopes narrowed, disabled accounts cut off at once, signing-key rotation, rate
 * limits and the audit trail under the account's identity, and the batch-upload example.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SignJWT, createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, decodeProtectedHeader, type CryptoKey } from "jose";
import * as oidc from "openid-client";
import { REPO_ROOT, testModel, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("service accounts and OAuth 2.0", () => {
  let t: TestServer;
  let work: string;
  let account: any;
  const tokenRequest = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/v1/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form) });
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` });
  const withToken = (token: string, route: string, init: RequestInit = {}) => fetch(`${t.url}${route}`, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` } });

  before(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-oauth-"));
    t = await startTestServer({
      bindings: { tiny: tinyModel("stories260K"), minilm: testModel("all-minilm-l6-v2") },
      config: { rateLimits: { tiers: { one: { requestsPerMinute: 1, tokensPerMinute: 0 } } } },
    });
  });
  after(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("creates a service account whose secret is shown once, and validates input", async () => {
    const created = await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "nightly import", scopes: ["rag.read", "rag.write", "inference"] });
    assert.equal(created.status, 201);
    account = created.json;
    assert.match(account.id, /^sa_/);
    assert.equal(account.client_id, account.id);
    assert.match(account.client_secret, /^pss-[A-Za-z0-9]{43}$/);
    assert.deepEqual(account.auth_methods, ["client_secret"]);
    const listed = (await t.call("GET", "/v1/admin/workspaces/ws_default/service_accounts")).json;
    assert.equal(listed.data.length, 1);
    assert.equal(listed.data[0].client_secret, undefined);
    assert.equal(listed.data[0].secret_prefix, account.client_secret.slice(0, 12));
    for (const [body, param] of [
      [{ name: "" }, "name"],
      [{ name: "x", scopes: ["root"] }, "scopes.0"],
      [{ name: "x", public_key: { kty: "oct", k: "c2VjcmV0" } }, "public_key"],
      [{ name: "x", public_key: { kty: "OKP", crv: "Ed25519", x: "AA", d: "AA" } }, "public_key"],
    ] as const) {
      const res = await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error.param, param);
    }
    const limited = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "no admin", scopes: ["inference"] })).json;
    assert.equal((await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "x" }, limited.secret)).status, 403);
  });

  it("publishes RFC 8414 metadata and a JWKS that a standard OAuth client uses to get a token", async () => {
    const meta = (await t.call("GET", "/.well-known/oauth-authorization-server", undefined, null)).json;
    assert.equal(meta.issuer, t.url);
    assert.equal(meta.token_endpoint, `${t.url}/v1/oauth/token`);
    assert.ok(meta.grant_types_supported.includes("urn:ietf:params:oauth:grant-type:jwt-bearer"));
    // openid-client (the maintained OAuth client for Node) discovers us and runs client credentials.
    const config = await oidc.discovery(new URL(t.url), account.client_id, undefined, oidc.ClientSecretBasic(account.client_secret), { algorithm: "oauth2", execute: [oidc.allowInsecureRequests] });
    const granted = config.serverMetadata();
    assert.equal(granted.jwks_uri, `${t.url}/.well-known/jwks.json`);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "inference rag.read" });
    assert.equal(tokens.token_type.toLowerCase(), "bearer");
    assert.equal(tokens.expires_in, 900);
    assert.equal(tokens.scope, "inference rag.read");
    // Anyone can check the token offline against the published keys.
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(meta.jwks_uri)), { issuer: t.url, audience: "pustaka-api" });
    assert.equal(protectedHeader.alg, "EdDSA");
    assert.equal(payload.sub, account.id);
    assert.equal(payload.ws, "ws_default");
    const me = await withToken(tokens.access_token, "/v1/me");
    assert.equal(me.status, 200);
    const body = (await me.json()) as any;
    assert.equal(body.key_id, account.id);
    assert.deepEqual(body.scopes.sort(), ["inference", "rag.read"]);
    // Narrowed to inference and rag.read: writing is refused.
    assert.equal((await withToken(tokens.access_token, "/v1/rag/corpora", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x" }) })).status, 403);
    const embed = await withToken(tokens.access_token, "/v1/embeddings", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "tiny", input: "hujan" }) });
    assert.equal(embed.status, 200);
  });

  it("answers token-endpoint mistakes in OAuth's error shape", async () => {
    const cases: [Record<string, string>, Record<string, string>, number, string][] = [
      [{ grant_type: "client_credentials" }, basic(account.id, "pss-wrongwrongwrong"), 401, "invalid_client"],
      [{ grant_type: "client_credentials", client_id: account.id, client_secret: "nope" }, {}, 401, "invalid_client"],
      [{ grant_type: "client_credentials" }, {}, 401, "invalid_client"],
      [{ grant_type: "password", username: "a", password: "b" }, basic(account.id, account.client_secret), 400, "unsupported_grant_type"],
      [{}, basic(account.id, account.client_secret), 400, "invalid_request"],
      [{ grant_type: "client_credentials", scope: "workspaces.manage" }, basic(account.id, account.client_secret), 400, "invalid_scope"],
      [{ grant_type: "client_credentials", client_secret: account.client_secret }, basic(account.id, account.client_secret), 400, "invalid_request"],
      [{ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: "not.a.jwt" }, {}, 400, "invalid_grant"],
    ];
    for (const [form, headers, status, error] of cases) {
      const res = await tokenRequest(form, headers);
      const body = (await res.json()) as any;
      assert.equal(res.status, status, JSON.stringify(form));
      assert.equal(body.error, error, JSON.stringify(form));
      assert.equal(typeof body.error_description, "string");
      assert.equal(res.headers.get("cache-control"), "no-store");
    }
    const wrongBasic = await tokenRequest({ grant_type: "client_credentials" }, basic(account.id, "pss-x"));
    assert.equal(wrongBasic.headers.get("www-authenticate"), 'Basic realm="pustaka"');
    const json = await fetch(`${t.url}/v1/oauth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ grant_type: "client_credentials" }) });
    assert.equal(json.status, 400);
    assert.equal(((await json.json()) as any).error, "invalid_request");
    const forged = await withToken("eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJzYV94In0.c2ln", "/v1/me");
    assert.equal(forged.status, 401);
    assert.equal(((await forged.json()) as any).error.code, "invalid_access_token");
  });

  it("accepts a JWT assertion signed by the account's registered key (RFC 7523), once", async () => {
    const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const keyed = (await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "keyed job", scopes: ["rag.read"], public_key: await exportJWK(publicKey) })).json;
    assert.equal(keyed.client_secret, null);
    assert.deepEqual(keyed.auth_methods, ["private_key_jwt"]);
    const assertion = (jti: string, overrides: { aud?: string; exp?: number; key?: CryptoKey } = {}) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "EdDSA" })
        .setIssuer(keyed.id)
        .setSubject(keyed.id)
        .setAudience(overrides.aud ?? `${t.url}/v1/oauth/token`)
        .setIssuedAt()
        .setExpirationTime(overrides.exp ?? Math.floor(Date.now() / 1000) + 60)
        .setJti(jti)
        .sign(overrides.key ?? privateKey);
    const grant = await tokenRequest({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: await assertion("job-1") });
    const granted = (await grant.json()) as any;
    assert.equal(grant.status, 200, JSON.stringify(granted));
    assert.equal(granted.scope, "rag.read");
    const replay = await tokenRequest({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: await assertion("job-1") });
    assert.equal(replay.status, 400);
    assert.match(((await replay.json()) as any).error_description, /already used/);
    // Client authentication by assertion with the client-credentials grant (private_key_jwt).
    const clientAuth = await tokenRequest({
      grant_type: "client_credentials",
      client_id: keyed.id,
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: await assertion("job-2"),
    });
    assert.equal(clientAuth.status, 200);
    const other = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    for (const [name, jwt] of [
      ["wrong key", await assertion("job-3", { key: other.privateKey })],
      ["wrong audience", await assertion("job-4", { aud: "https://elsewhere.example/token" })],
      ["expired", await assertion("job-5", { exp: Math.floor(Date.now() / 1000) - 120 })],
      ["lives too long", await assertion("job-6", { exp: Math.floor(Date.now() / 1000) + 7200 })],
    ] as const) {
      const res = await tokenRequest({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: jwt });
      assert.equal(res.status, 400, name);
      assert.equal(((await res.json()) as any).error, "invalid_grant", name);
    }
  });

  it("cuts a disabled or deleted account off at once, applies narrowed scopes at once, and keeps tokens across a signing-key rotation", async () => {
    const get = async () => (await (await tokenRequest({ grant_type: "client_credentials" }, basic(account.id, account.client_secret))).json()) as any;
    const token = (await get()).access_token;
    assert.equal((await withToken(token, "/v1/rag/corpora")).status, 200);
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${account.id}`, { disabled: true })).status, 200);
    const refused = await withToken(token, "/v1/rag/corpora");
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as any).error.code, "service_account_disabled");
    assert.equal((await tokenRequest({ grant_type: "client_credentials" }, basic(account.id, account.client_secret))).status, 401);
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${account.id}`, { disabled: false })).status, 200);
    assert.equal((await withToken(token, "/v1/rag/corpora")).status, 200);
    await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${account.id}`, { scopes: ["inference", "rag.write"] });
    assert.equal((await withToken(token, "/v1/rag/corpora")).status, 403, "rag.read was taken away; the old token loses it too");
    await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${account.id}`, { scopes: ["inference", "rag.read", "rag.write"] });

    const oldKid = decodeProtectedHeader(token).kid;
    const rotated = (await t.call("POST", "/v1/admin/oauth/rotate-signing-key")).json;
    assert.notEqual(rotated.kid, oldKid);
    assert.deepEqual(rotated.published, [rotated.kid, oldKid]);
    assert.equal((await withToken(token, "/v1/rag/corpora")).status, 200, "tokens signed by the previous key live on");
    const fresh = (await get()).access_token;
    assert.equal(decodeProtectedHeader(fresh).kid, rotated.kid);
    const jwks = (await t.call("GET", "/.well-known/jwks.json", undefined, null)).json;
    assert.deepEqual(jwks.keys.map((k: any) => k.kid), [rotated.kid, oldKid]);
    assert.ok(jwks.keys.every((k: any) => k.d === undefined), "no private part published");
    const security = (await t.call("GET", "/v1/admin/security")).json;
    assert.deepEqual(security.oauth.signing_key_ids, [rotated.kid, oldKid]);
    assert.equal(security.oauth.issuer, t.url);
    assert.deepEqual([security.key_provider.kind, security.key_provider.hardware_backed], ["local-file", false]);
    assert.equal(security.audit.signing_key_id, (await t.call("GET", "/v1/audit/signing-key")).json.key_id);
    assert.deepEqual(security.transport, { tls: false, host: "127.0.0.1", loopback_only: true });
    assert.equal((await t.call("GET", "/v1/admin/security", undefined, token)).status, 403, "workspaces.manage only");

    // A rotated secret replaces the old one at once.
    const rotatedSecret = (await t.call("POST", `/v1/admin/workspaces/ws_default/service_accounts/${account.id}/secret`)).json.client_secret;
    assert.equal((await tokenRequest({ grant_type: "client_credentials" }, basic(account.id, account.client_secret))).status, 401);
    account.client_secret = rotatedSecret;
    assert.equal((await tokenRequest({ grant_type: "client_credentials" }, basic(account.id, rotatedSecret))).status, 200);
  });

  it("rate-limits and audits requests under the service account's identity", async () => {
    const limited = (await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "limited", scopes: ["inference"] })).json;
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${limited.id}`, { rate_limit_tier: "one" })).json.rate_limit_tier, "one");
    const unknownTier = await t.call("PATCH", `/v1/admin/workspaces/ws_default/service_accounts/${limited.id}`, { name: "renamed", rate_limit_tier: "nope" });
    assert.equal(unknownTier.status, 400);
    assert.equal(unknownTier.json.error.code, "unknown_tier");
    assert.equal((await t.call("GET", `/v1/admin/workspaces/ws_default/service_accounts/${limited.id}`)).json.name, "limited", "a refused change saves nothing");
    const token = ((await (await tokenRequest({ grant_type: "client_credentials" }, basic(limited.id, limited.client_secret))).json()) as any).access_token;
    const embed = () => withToken(token, "/v1/embeddings", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "tiny", input: "a" }) });
    const first = await embed();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("x-ratelimit-limit"), "1");
    assert.equal((await embed()).status, 429);
    const trail = (await t.call("GET", `/v1/audit/events?actor=service_account:${limited.id}&order=asc`)).json.data.map((e: any) => e.type);
    assert.deepEqual(trail, ["service_account.token", "embeddings.create", "rate_limit.rejected"]);
    const changes = (await t.call("GET", "/v1/audit/events?type=service_account.&order=asc")).json.data.map((e: any) => e.type);
    assert.ok(changes.includes("service_account.create") && changes.includes("service_account.update"));
    const failedTokens = (await t.call("GET", "/v1/audit/events?chain=instance&type=service_account.token&outcome=failure")).json.data;
    assert.ok(failedTokens.length >= 3);
    assert.ok(!JSON.stringify(failedTokens).includes("pss-"), "no secret in the trail");
    assert.equal((await t.call("DELETE", `/v1/admin/workspaces/ws_default/service_accounts/${limited.id}`)).status, 200);
    assert.equal((await embed()).status, 401, "a deleted account's token is dead");
  });

  it("runs the batch-upload example (docs/operations.md) with a service account", { timeout: 300_000 }, async () => {
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "Batch", embedding_model: "minilm", chunking: "paragraph" })).json;
    const folder = path.join(work, "reports");
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(path.join(folder, `laporan-${i}.md`), `# Laporan ${i}\n\nParas air sungai ${i} meningkat pada minggu ${i + 1}.`);
    writeFileSync(path.join(folder, "notes.bin"), Buffer.from([1, 2, 3]));
    // Asynchronously: the server runs in this process and must keep answering.
    const result = await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "examples", "batch-upload.mjs"), folder, corpus.id], {
      encoding: "utf8",
      env: { ...process.env, PUSTAKA_URL: t.url, PUSTAKA_CLIENT_ID: account.id, PUSTAKA_CLIENT_SECRET: account.client_secret, PUSTAKA_BATCH: "2" },
      timeout: 200_000,
    });
    const summary = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
    assert.equal(summary.done, true);
    assert.equal(summary.files, 5, "only supported types are sent");
    assert.equal(summary.accepted, 5);
    assert.equal(summary.corpus_status, "ready");
    const uploads = (await t.call("GET", `/v1/audit/events?type=document.upload&actor=service_account:${account.id}`)).json.data;
    assert.equal(uploads.length, 5);
  });
});
