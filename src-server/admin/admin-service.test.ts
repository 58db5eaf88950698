import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { ApiKeyStore } from "../store/api-key-store.js";
import { openDatabase, type Database } from "../store/database.js";
import { WorkspaceStore } from "../store/workspace-store.js";
import { AdminService, DEFAULT_WORKSPACE_ID } from "./admin-service.js";

const isError = (kind: string, code?: string) => (e: unknown) => e instanceof ServiceError && e.kind === kind && (code === undefined || e.code === code);

describe("AdminService", () => {
  let db: Database;
  let admin: AdminService;
  beforeEach(() => {
    db = openDatabase(":memory:");
    admin = new AdminService(new WorkspaceStore(db), new ApiKeyStore(db));
  });

  it("generates an admin key once on first start and stores only its hash", () => {
    const first = admin.bootstrap();
    assert.match(first.generatedSecret ?? "", /^psk-[0-9A-Za-z]{43}$/);
    assert.deepEqual(admin.bootstrap(), {}, "second start must not print a new key");
    const rows = db.prepare("SELECT * FROM api_keys").all() as Record<string, unknown>[];
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(first.generatedSecret!), "secret stored in clear");
    const principal = admin.authenticate(first.generatedSecret!);
    assert.equal(principal.workspaceId, DEFAULT_WORKSPACE_ID);
    assert.ok(principal.scopes.has("workspaces.manage"));
  });

  it("registers PUSTAKA_API_KEY as the admin key instead of generating one", () => {
    const env = "psk-from-the-environment-0001";
    assert.deepEqual(admin.bootstrap(env), {});
    assert.ok(admin.authenticate(env).scopes.has("keys.manage"));
  });

  it("rejects unknown, revoked and expired keys with distinct codes", () => {
    const { generatedSecret } = admin.bootstrap();
    const root = admin.authenticate(generatedSecret!);
    assert.throws(() => admin.authenticate("psk-notarealkeynotarealkey"), isError("authentication", "invalid_api_key"));
    assert.throws(() => admin.authenticate("Bearer nonsense"), isError("authentication", "invalid_api_key"));
    const { key, secret } = admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: "ci" });
    assert.equal(admin.authenticate(secret).keyId, key.id);
    admin.revokeKey(root, DEFAULT_WORKSPACE_ID, key.id);
    assert.throws(() => admin.authenticate(secret), isError("authentication", "revoked_api_key"));
    const expiring = admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: "short", expiresInDays: 1 });
    db.prepare("UPDATE api_keys SET expires_at = 1 WHERE id = ?").run(expiring.key.id);
    assert.throws(() => admin.authenticate(expiring.secret), isError("authentication", "expired_api_key"));
  });

  it("does not let a key grant scopes it lacks, nor see other workspaces", () => {
    const root = admin.authenticate(admin.bootstrap().generatedSecret!);
    const team = admin.createWorkspace(root, "Team");
    const teamAdmin = admin.authenticate(admin.createKey(root, team.id, { name: "team admin", scopes: ["inference", "keys.manage"] }).secret);
    assert.throws(() => admin.createKey(teamAdmin, team.id, { name: "x", scopes: ["rag.write"] }), isError("invalid_request", "scope_not_grantable"));
    assert.throws(() => admin.listKeys(teamAdmin, DEFAULT_WORKSPACE_ID, { limit: 10, order: "desc" }), isError("not_found", "workspace_not_found"));
    assert.throws(() => admin.createWorkspace(teamAdmin, "y"), isError("permission", "insufficient_scope"));
    const user = admin.authenticate(admin.createKey(teamAdmin, team.id, { name: "user", scopes: ["inference"] }).secret);
    assert.throws(() => admin.listKeys(user, team.id, { limit: 10, order: "desc" }), isError("permission", "insufficient_scope"));
  });

  it("paginates keys with after/before cursors in both orders", () => {
    const root = admin.authenticate(admin.bootstrap().generatedSecret!);
    for (let i = 0; i < 5; i++) admin.createKey(root, DEFAULT_WORKSPACE_ID, { name: `k${i}` });
    const all = admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 100, order: "asc" }).data.map((k) => k.id);
    assert.equal(all.length, 6);
    const page1 = admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 2, order: "asc" });
    assert.deepEqual(page1.data.map((k) => k.id), all.slice(0, 2));
    assert.equal(page1.hasMore, true);
    const page2 = admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 2, order: "asc", after: all[1] });
    assert.deepEqual(page2.data.map((k) => k.id), all.slice(2, 4));
    const back = admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 2, order: "asc", before: all[4] });
    assert.deepEqual(back.data.map((k) => k.id), all.slice(2, 4));
    const desc = admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 3, order: "desc" });
    assert.deepEqual(desc.data.map((k) => k.id), [...all].reverse().slice(0, 3));
    assert.deepEqual(admin.listKeys(root, DEFAULT_WORKSPACE_ID, { limit: 3, order: "asc", after: "key_missing" }).data, []);
  });
});
