/**
 * The wrapped keys a KEK rotation rewraps, on SQLite and Postgres: every corpus key (a
 * deleted corpus's too) and conversation key, counted by provider, and replaced all at
 * once or, when one changed or appeared meanwhile, not at all.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ServiceError } from "../errors.js";
import type { SqlDatabase } from "./sql-database.js";
import { WrappedKeyStore, type WrappedKeyRow } from "./wrapped-key-store.js";

const bytes = (s: string) => Buffer.from(s);

async function seed(store: SqlDatabase): Promise<WrappedKeyStore> {
  await store.db.insertInto("workspaces").values({ id: "ws_a", name: "A", created_at: 1 }).execute();
  await store.db
    .insertInto("corpus_keys")
    .values([
      { corpus_id: "corp_b", provider: "old", wrapped_key: bytes("key b"), created_at: 1, destroy_after: null },
      // A deleted corpus's key, kept until its retention ends.
      { corpus_id: "corp_a", provider: "older", wrapped_key: bytes("key a"), created_at: 1, destroy_after: 4_000_000_000 },
    ])
    .execute();
  await store.db
    .insertInto("conversations")
    .values([{ id: "conv_1", workspace_id: "ws_a", corpus_id: null, key_provider: "old", wrapped_key: bytes("key c"), title: bytes("sealed title"), created_at: 1, updated_at: 1 }])
    .execute();
  return new WrappedKeyStore(store);
}

const snapshot = async (keys: WrappedKeyStore) => (await keys.all()).map((r) => ({ ...r, wrappedKey: r.wrappedKey.toString() }));
const rewrapAll = (rows: WrappedKeyRow[]) => rows.map((r) => ({ ...r, rewrapped: bytes(`new ${r.wrappedKey.toString()}`) }));
const isConflict = (pattern: RegExp) => (error: unknown) => error instanceof ServiceError && error.code === "kek_rotation_conflict" && pattern.test(error.message);

describeBackends("WrappedKeyStore", (backend) => {
  it("lists every wrapped key, corpora's (a deleted one's too) then conversations', and counts them by provider", async () => {
    const keys = await seed(await backend.open());
    assert.deepEqual(await snapshot(keys), [
      { kind: "corpus", id: "corp_a", provider: "older", wrappedKey: "key a" },
      { kind: "corpus", id: "corp_b", provider: "old", wrappedKey: "key b" },
      { kind: "conversation", id: "conv_1", provider: "old", wrappedKey: "key c" },
    ]);
    assert.deepEqual(await keys.countByProvider(), { old: 2, older: 1 });
  });

  it("replaces every key with its rewrapped bytes under the new provider, touching nothing else", async () => {
    const store = await backend.open();
    const keys = await seed(store);
    const counts = await keys.replace(rewrapAll(await keys.all()), "new");
    assert.deepEqual(counts, { corpus: 2, conversation: 1, response: 0, remote_model: 0, signing_key: 0 });
    assert.deepEqual(await snapshot(keys), [
      { kind: "corpus", id: "corp_a", provider: "new", wrappedKey: "new key a" },
      { kind: "corpus", id: "corp_b", provider: "new", wrappedKey: "new key b" },
      { kind: "conversation", id: "conv_1", provider: "new", wrappedKey: "new key c" },
    ]);
    assert.deepEqual(await keys.countByProvider(), { new: 3 });
    const conversation = await store.db.selectFrom("conversations").select(["title", "updated_at"]).executeTakeFirstOrThrow();
    assert.equal(Buffer.from(conversation.title).toString(), "sealed title");
    assert.equal(Number(conversation.updated_at), 1);
    const kept = await store.db.selectFrom("corpus_keys").select("destroy_after").where("corpus_id", "=", "corp_a").executeTakeFirstOrThrow();
    assert.equal(Number(kept.destroy_after), 4_000_000_000, "the retention of a deleted corpus's key is kept");
  });

  it("changes nothing when a key changed since it was read", async () => {
    const store = await backend.open();
    const keys = await seed(store);
    const rows = rewrapAll(await keys.all());
    await store.db.updateTable("conversations").set({ wrapped_key: bytes("key c2") }).where("id", "=", "conv_1").execute();
    const before = await snapshot(keys);
    await assert.rejects(keys.replace(rows, "new"), isConflict(/conversation conv_1 changed during the rotation/));
    assert.deepEqual(await snapshot(keys), before);
  });

  it("changes nothing when a key was added since the keys were read", async () => {
    const store = await backend.open();
    const keys = await seed(store);
    const rows = rewrapAll(await keys.all());
    await store.db.insertInto("corpus_keys").values({ corpus_id: "corp_c", provider: "old", wrapped_key: bytes("key d"), created_at: 2, destroy_after: null }).execute();
    const before = await snapshot(keys);
    await assert.rejects(keys.replace(rows, "new"), isConflict(/1 corpus key\(s\) were added/));
    assert.deepEqual(await snapshot(keys), before);
  });
});
