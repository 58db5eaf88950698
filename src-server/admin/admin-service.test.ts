import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { nowSeconds } from "../ids.js";
import { ApiKeyStore } from "../store/api-key-store.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";
import { WorkspaceStore } from "../store/workspace-store.js";
import { AdminService, DEFAULT_WORKSPACE_ID } from "./admin-service.js";

const isError = (kind: string, code?: string) => (e: unknown) => e instanceof ServiceError && e.kind === kind && (code === undefined || e.code === code);

describe("AdminService", () => {
  let store: SqlDatabase;
  let admin: AdminService;
  beforeEach(async () => {
    store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    admin = new AdminService(new WorkspaceStore(store), new ApiKeyStore(store));
  });
  afterEach(async () => {
    await store.close();
  });

  it("generates an admin key once on first start and stores only its hash", async () => {
    const first = await admin.bootstrap();
    assert.match(first.generatedSecret ?? "", /^psk-[0-9A-Za-z]{43}$/);
    assert.deepEqual(await admin.bootstrap(), {}, "second start must not print a new key");
    const rows = await store.db.selectFrom("api_keys").selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(first.generatedSecret!), "secret stored in clear");
    const principal = await admin.authenticate(first.generatedSecret!);
    assert.equal(principal.workspaceId, DEFAULT_WORKSPACE_ID);
    assert.ok(principal.scopes.has("workspaces.manage"));
  });

  it("generates exactly one admin key when several starts bootstrap at once", async () => {
    const results = await Promise.all([admin.bootstrap(), admin.bootstrap(), admin.bootstrap()]);
    assert.equal(results.filter((r) => r.generatedSecret !== undefined).length, 1, "one start prints a key, the others find it");
    assert.equal((await store.db.selectFrom("api_keys").selectAll().execute()).length, 1);
    assert.equal((await store.db.selectFrom("workspaces").selectAll().execute()).length, 1);
  });

  it("registers PUSTAKA_API_KEY as the admin key instead of generating one", async () => {
    const env = "psk-from-the-environment-0001";
    assert.deepEqual(await admin.bootstrap(env), {});
    assert.ok((await admin.authenticate(env)).scopes.has("keys.manage"));
    await Promise.all([admin.bootstrap(env), admin.bootstrap(env)]);
    assert.equal((await store.db.selectFrom("api_keys").selectAll().execute()).length, 1, "registered once");
  });

  it("rejects unknown, revoked and expired keys with distinct codes", async () => {
    const { generatedSecret } = await admin.bootstrap();
    const root = await admin.authenticate(generatedSecret!);
    await assert.rejects(admin.authenticate("psk-notarealkeynotarealkey"), isError("authentication", "invalid_api_key"));
    await assert.rejects(admin.authenticate("Bearer nonsense"), isError("authentication", "invalid_api_key"));
    const { key, secret } = await admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: "ci" });
    assert.equal((await admin.authenticate(secret)).keyId, key.id);
    const revoked = await admin.revokeKey(root, DEFAULT_WORKSPACE_ID, key.id);
    assert.notEqual(revoked.revokedAt, null);
    await assert.rejects(admin.authenticate(secret), isError("authentication", "revoked_api_key"));
    const expiring = await admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: "short", expiresInDays: 1 });
    await store.db.updateTable("api_keys").set({ expires_at: 1 }).where("id", "=", expiring.key.id).execute();
    await assert.rejects(admin.authenticate(expiring.secret), isError("authentication", "expired_api_key"));
  });

  it("records when a key was last used, refreshed at most once a minute", async () => {
    const { generatedSecret } = await admin.bootstrap();
    const root = await admin.authenticate(generatedSecret!);
    const { key, secret } = await admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: "ci" });
    assert.equal((await admin.getKey(root, DEFAULT_WORKSPACE_ID, key.id)).lastUsedAt, null);
    const before = nowSeconds();
    await admin.authenticate(secret);
    const used = (await admin.getKey(root, DEFAULT_WORKSPACE_ID, key.id)).lastUsedAt;
    assert.ok(used !== null && used >= before, "the first use is recorded");
    await store.db.updateTable("api_keys").set({ last_used_at: before - 30 }).where("id", "=", key.id).execute();
    await admin.authenticate(secret);
    assert.equal((await admin.getKey(root, DEFAULT_WORKSPACE_ID, key.id)).lastUsedAt, before - 30, "a use within the minute writes nothing");
    await store.db.updateTable("api_keys").set({ last_used_at: before - 61 }).where("id", "=", key.id).execute();
    await admin.authenticate(secret);
    assert.ok((await admin.getKey(root, DEFAULT_WORKSPACE_ID, key.id)).lastUsedAt! >= before, "an older one is refreshed");
  });

  it("does not let a key grant scopes it lacks, nor see other workspaces", async () => {
    const root = await admin.authenticate((await admin.bootstrap()).generatedSecret!);
    const team = await admin.createWorkspace(root, "Team");
    assert.deepEqual(await admin.getWorkspace(root, team.id), team);
    const teamAdmin = await admin.authenticate((await admin.createKey(root, team.id, { name: "team admin", scopes: ["inference", "keys.manage"] })).secret);
    await assert.rejects(admin.createKey(teamAdmin, team.id, { name: "x", scopes: ["rag.write"] }), isError("invalid_request", "scope_not_grantable"));
    await assert.rejects(admin.listKeys(teamAdmin, DEFAULT_WORKSPACE_ID, { limit: 10, order: "desc" }), isError("not_found", "workspace_not_found"));
    await assert.rejects(admin.createWorkspace(teamAdmin, "y"), isError("permission", "insufficient_scope"));
    await assert.rejects(admin.listWorkspaces(teamAdmin, { limit: 10, order: "asc" }), isError("permission", "insufficient_scope"));
    await assert.rejects(admin.getWorkspace(root, "ws_missing"), isError("not_found", "workspace_not_found"));
    const user = await admin.authenticate((await admin.createKey(teamAdmin, team.id, { name: "user", scopes: ["inference"] })).secret);
    await assert.rejects(admin.listKeys(user, team.id, { limit: 10, order: "desc" }), isError("permission", "insufficient_scope"));
    const rootKey = (await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 10, order: "asc" })).data[0]!;
    await assert.rejects(admin.getKey(root, team.id, rootKey.id), isError("not_found", "api_key_not_found"), "a key is found only in its own workspace");
    await assert.rejects(admin.revokeKey(root, team.id, rootKey.id), isError("not_found", "api_key_not_found"));
    assert.deepEqual(
      (await admin.listWorkspaces(root, { limit: 10, order: "asc" })).data.map((w) => w.id).sort(),
      [DEFAULT_WORKSPACE_ID, team.id].sort(),
    );
  });

  it("paginates keys with after/before cursors in both orders", async () => {
    const root = await admin.authenticate((await admin.bootstrap()).generatedSecret!);
    for (let i = 0; i < 5; i++) await admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: `k${i}` });
    const all = (await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 100, order: "asc" })).data.map((k) => k.id);
    assert.equal(all.length, 6);
    const page1 = await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 2, order: "asc" });
    assert.deepEqual(page1.data.map((k) => k.id), all.slice(0, 2));
    assert.equal(page1.hasMore, true);
    const page2 = await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 2, order: "asc", after: all[1] });
    assert.deepEqual(page2.data.map((k) => k.id), all.slice(2, 4));
    const back = await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 2, order: "asc", before: all[4] });
    assert.deepEqual(back.data.map((k) => k.id), all.slice(2, 4));
    const desc = await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 3, order: "desc" });
    assert.deepEqual(desc.data.map((k) => k.id), [...all].reverse().slice(0, 3));
    assert.deepEqual((await admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 3, order: "asc", after: "key_missing" })).data, []);
  });
});
