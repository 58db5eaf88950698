import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ApiKeyStore, type ApiKeyRecord } from "./api-key-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";
import { WorkspaceStore } from "./workspace-store.js";

const key = (id: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  workspaceId: "ws_a",
  name: `name of ${id}`,
  prefix: "psk-abcdefgh",
  secretSha256: `sha-${id}`,
  scopes: ["inference", "rag.read"],
  createdAt: 1_700_000_000,
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
  ...overrides,
});

describeBackends("ApiKeyStore", (backend) => {
  const open = async (): Promise<{ db: SqlDatabase; keys: ApiKeyStore }> => {
    const db = await backend.open();
    const workspaces = new WorkspaceStore(db);
    await workspaces.insert({ id: "ws_a", name: "A", createdAt: 1 });
    await workspaces.insert({ id: "ws_b", name: "B", createdAt: 1 });
    return { db, keys: new ApiKeyStore(db) };
  };

  it("stores a key and reads it back by id, prefix and digest, with its scopes, times and nulls", async () => {
    const { keys } = await open();
    const full = key("key_1", { expiresAt: 1_900_000_000_000, revokedAt: null, lastUsedAt: 1_800_000_000_000 });
    await keys.insert(full);
    await keys.insert(key("key_2", { secretSha256: "sha-other" }));
    await keys.insert(key("key_3", { prefix: "psk-zzzzzzzz" }));
    assert.deepEqual(await keys.get("key_1"), full);
    assert.equal(await keys.get("key_missing"), undefined);
    assert.deepEqual((await keys.findByPrefix("psk-abcdefgh")).map((k) => k.id).sort(), ["key_1", "key_2"]);
    assert.deepEqual(await keys.findByPrefix("PSK-ABCDEFGH"), [], "prefixes match exactly");
    assert.equal((await keys.findByDigest("sha-other"))?.id, "key_2");
    assert.equal(await keys.findByDigest("sha-none"), undefined);
    await assert.rejects(keys.insert(key("key_4", { secretSha256: "sha-other" })), "a secret belongs to one key");
  });

  it("counts a workspace's active keys, and revokes once (the first time stays)", async () => {
    const { keys } = await open();
    await keys.insert(key("key_1"));
    await keys.insert(key("key_2"));
    await keys.insert(key("key_3", { workspaceId: "ws_b" }));
    assert.equal(await keys.countActive("ws_a"), 2);
    await keys.revoke("key_1", 500);
    await keys.revoke("key_1", 900);
    assert.equal((await keys.get("key_1"))?.revokedAt, 500);
    assert.equal(await keys.countActive("ws_a"), 1);
    assert.equal(await keys.countActive("ws_b"), 1);
    assert.equal(await keys.countActive("ws_none"), 0);
  });

  it("moves last_used_at only forward", async () => {
    const { keys } = await open();
    await keys.insert(key("key_1"));
    await keys.insert(key("key_2"));
    await keys.touch("key_1", 1000);
    assert.equal((await keys.get("key_1"))?.lastUsedAt, 1000);
    assert.equal((await keys.get("key_2"))?.lastUsedAt, null, "only the key touched");
    await keys.touch("key_1", 900);
    assert.equal((await keys.get("key_1"))?.lastUsedAt, 1000, "a late touch (or a clock behind) does not move it back");
    await keys.touch("key_1", 1100);
    assert.equal((await keys.get("key_1"))?.lastUsedAt, 1100);
  });

  it("lists a workspace's keys a page at a time", async () => {
    const { keys } = await open();
    for (let i = 0; i < 5; i++) await keys.insert(key(`key_${i}`, { createdAt: 100 + i }));
    await keys.insert(key("key_other", { workspaceId: "ws_b", createdAt: 102 }));
    const first = await keys.list("ws_a", { limit: 2, order: "desc" });
    assert.deepEqual(first.data.map((k) => k.id), ["key_4", "key_3"]);
    assert.equal(first.hasMore, true);
    assert.deepEqual((await keys.list("ws_a", { limit: 10, order: "desc", after: "key_3" })).data.map((k) => k.id), ["key_2", "key_1", "key_0"]);
    assert.deepEqual((await keys.list("ws_a", { limit: 10, order: "asc", after: "key_other" })).data, [], "a cursor of another workspace finds nothing");
    assert.deepEqual((await keys.list("ws_b", { limit: 10, order: "asc" })).data.map((k) => k.scopes), [["inference", "rag.read"]]);
  });

  it("registers a secret at most once and generates the first key once, also when replicas race", async () => {
    const { db: first, keys } = await open();
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [keys, ...others.map((db) => new ApiKeyStore(db))];
      const registered = await Promise.all(Array.from({ length: 9 }, (_, i) => stores[i % 3]!.insertIfSecretAbsent(key(`key_env_${i}`, { workspaceId: "ws_b", secretSha256: "sha-env" }))));
      assert.equal(registered.filter(Boolean).length, 1);
      assert.equal(await keys.countActive("ws_b"), 1);

      const generated = await Promise.all(Array.from({ length: 9 }, (_, i) => stores[i % 3]!.insertIfNoneActive(key(`key_gen_${i}`, { secretSha256: `sha-gen-${i}` }))));
      assert.equal(generated.filter(Boolean).length, 1, "one replica generated the first key");
      assert.equal(await keys.countActive("ws_a"), 1);
      assert.equal((await keys.get(`key_gen_${generated.indexOf(true)}`))?.workspaceId, "ws_a");
      assert.equal(await keys.insertIfNoneActive(key("key_late", { workspaceId: "ws_b", secretSha256: "sha-late" })), false, "ws_b already has an active key");
      await keys.revoke(`key_gen_${generated.indexOf(true)}`, 5);
      assert.equal(await keys.insertIfNoneActive(key("key_next", { secretSha256: "sha-next" })), true, "a revoked key does not count");
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
