/**
 * KEK rotation over a real database, SQLite and Postgres: every wrapped key (corpora, a
 * deleted corpus in its retention window, conversations) is rewrapped and records the new
 * provider id, data sealed before stays readable and untouched, a failure changes
 * nothing, a crashed rotation recovers, keys move from the key file to the HSM, and a
 * running server is refused. Both providers; the HSM is a SoftHSM2 token.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, it } from "node:test";
import { createSoftHsmToken, type SoftHsmToken } from "../../test/helpers/softhsm.js";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { CorpusStore } from "../store/corpus-store.js";
import { markServerRunning } from "../store/server-pid-file.js";
import type { SqlDatabase } from "../store/sql-database.js";
import { CorpusKeyring } from "./corpus-keyring.js";
import { DataKeyring } from "./data-keyring.js";
import { OAuthKeys } from "./oauth-keys.js";
import { SqlKeyVault } from "./sql-key-vault.js";
import { rotateConfiguredKek, rotateKek } from "./kek-rotation.js";
import type { KeyProvider, RotatableKeyProvider } from "./key-provider.js";
import { LocalKeyFileProvider } from "./local-key-file-provider.js";
import { Pkcs11KeyProvider } from "./pkcs11-key-provider.js";

interface Fixture {
  db: SqlDatabase;
  dataDir: string;
  /** Values sealed under each record's data key before any rotation: id → [sealed, plaintext]. */
  sealed: Map<string, [Buffer, string]>;
}

const wrappedRows = async (db: SqlDatabase) =>
  [
    ...(await db.db.selectFrom("corpus_keys").select(["corpus_id as id", "provider", "wrapped_key"]).execute()),
    ...(await db.db.selectFrom("conversations").select(["id", "key_provider as provider", "wrapped_key"]).execute()),
  ]
    .map((r) => ({ id: r.id, provider: r.provider, wrapped_key: Buffer.from(r.wrapped_key) }))
    .sort((a, b) => a.id.localeCompare(b.id));

/** The conversations' keys are read straight from their table (this test is about rotation, not the conversation store). */
function keyrings(db: SqlDatabase, provider: KeyProvider) {
  return {
    corpus: new CorpusKeyring(provider, new CorpusStore(db)),
    conversation: new DataKeyring(provider, async (id) => (await db.db.selectFrom("conversations").select("wrapped_key").where("id", "=", id).executeTakeFirst())?.wrapped_key),
    response: new DataKeyring(provider, async (id) => (await db.db.selectFrom("responses").select("wrapped_key").where("id", "=", id).executeTakeFirst())?.wrapped_key),
    remote: new DataKeyring(provider, async (id) => (await db.db.selectFrom("remote_models").select("wrapped_key").where("id", "=", id).executeTakeFirst())?.wrapped_key),
  };
}

/** Two corpora (one deleted, its key kept for retention) and a conversation, each with a value sealed under its key. */
async function fixture(db: SqlDatabase, provider: KeyProvider): Promise<Fixture> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-rotate-"));
  await db.db.insertInto("workspaces").values({ id: "ws_default", name: "Default", created_at: 1 }).execute();
  const corpora = new CorpusStore(db);
  const rings = keyrings(db, provider);
  const sealed = new Map<string, [Buffer, string]>();
  for (const id of ["corp_a", "corp_b"]) {
    const key = await rings.corpus.create(id);
    await corpora.insert({ id, workspaceId: "ws_default", name: id, chunking: "semantic", embeddingModel: "m", dimensions: 4, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays: 30, metadata: {}, createdAt: 1, updatedAt: 1 }, key);
    sealed.set(id, [(await rings.corpus.cipher(id)).seal(Buffer.from(`chunk of ${id}`), `chunk:${id}`), `chunk of ${id}`]);
  }
  // corp_b deleted: its rows gone, its wrapped key kept until its retention ends.
  await db.db.deleteFrom("corpora").where("id", "=", "corp_b").execute();
  await db.db.updateTable("corpus_keys").set({ destroy_after: 4_000_000_000 }).where("corpus_id", "=", "corp_b").execute();
  const conversationKey = await rings.conversation.create("conv_1");
  const title = (await rings.conversation.cipher("conv_1")).seal(Buffer.from("a title"), "title:conv_1");
  await db.db
    .insertInto("conversations")
    .values({ id: "conv_1", workspace_id: "ws_default", corpus_id: null, key_provider: conversationKey.provider, wrapped_key: conversationKey.wrappedKey, title, created_at: 1, updated_at: 1 })
    .execute();
  sealed.set("conv_1", [title, "a title"]);
  // A stored response and a remote model's secrets: their own data keys, in their own tables.
  for (const [table, id] of [["responses", "resp_1"], ["remote_models", "rm_1"]] as const) {
    const ring = new DataKeyring(provider, () => undefined);
    const key = await ring.create(id);
    const body = (await ring.cipher(id)).seal(Buffer.from(`secret of ${id}`), `body:${id}`);
    if (table === "responses") await db.db.insertInto("responses").values({ id, workspace_id: "ws_default", key_provider: key.provider, wrapped_key: key.wrappedKey, body, created_at: 1, expires_at: null }).execute();
    else await db.db.insertInto("remote_models").values({ id, spec: "{}", key_provider: key.provider, wrapped_key: key.wrappedKey, secrets: body, created_at: 1, created_by: "test" }).execute();
    sealed.set(id, [body, `secret of ${id}`]);
  }
  // The shared OAuth signing key (replicas on Postgres keep it sealed in the store).
  await OAuthKeys.open(new SqlKeyVault(db, provider, "oauth"));
  return { db, dataDir, sealed };
}

/** Opens every value sealed before the rotation through a fresh keyring over `provider`. */
async function assertReadable(f: Fixture, provider: KeyProvider): Promise<void> {
  const rings = keyrings(f.db, provider);
  for (const [id, [value, plain]] of f.sealed) {
    const ring = id.startsWith("conv_") ? rings.conversation : id.startsWith("resp_") ? rings.response : id.startsWith("rm_") ? rings.remote : rings.corpus;
    const aad = id.startsWith("conv_") ? `title:${id}` : id.startsWith("resp_") || id.startsWith("rm_") ? `body:${id}` : `chunk:${id}`;
    assert.equal((await ring.cipher(id)).open(value, aad).toString(), plain, `${id} readable`);
  }
  assert.equal((await new SqlKeyVault(f.db, provider, "oauth").load()).length, 1, "the signing key unseals");
}

/** A provider whose `wrapKey` fails after `okCalls` calls (to fail a rotation half-way). */
function failingAfter(provider: RotatableKeyProvider, okCalls: number): RotatableKeyProvider {
  let calls = 0;
  return {
    get id() {
      return provider.id;
    },
    wrapKey: (k) => (++calls > okCalls ? Promise.reject(new Error("injected wrap failure")) : provider.wrapKey(k)),
    unwrapKey: (w) => provider.unwrapKey(w),
    beginRotation: () => provider.beginRotation(),
    close: () => provider.close(),
  };
}

describeBackends("KEK rotation, local key file", (backend) => {
  it("rewraps every key under a new key file, removes the old one, leaves data untouched", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-kek-"));
    const file = path.join(dir, "kek.bin");
    const provider = new LocalKeyFileProvider(file);
    const f = await fixture(await backend.open(), provider);
    const before = await wrappedRows(f.db);
    const oldKey = readFileSync(file);

    const result = await rotateKek(f.db, provider);

    assert.equal(result.oldProviderId, before[0]!.provider);
    assert.notEqual(result.newProviderId, result.oldProviderId);
    assert.deepEqual(result.rewrapped, { corpora: 2, conversations: 1, responses: 1, remoteModels: 1, signingKeys: 1 }, "the deleted corpus's key too");
    assert.deepEqual(result.retired, [result.oldProviderId]);
    assert.deepEqual(result.before, { [result.oldProviderId]: 6 });
    const after = await wrappedRows(f.db);
    for (const [i, row] of after.entries()) {
      assert.equal(row.provider, result.newProviderId);
      assert.notDeepEqual(row.wrapped_key, before[i]!.wrapped_key, `${row.id} rewrapped`);
    }
    assert.notDeepEqual(readFileSync(file), oldKey, "a new key file");
    assert.deepEqual(readdirSync(dir), ["kek.bin"], "the old key is gone once the rewrap committed");
    await assertReadable(f, new LocalKeyFileProvider(file));
  });

  it("changes nothing when the rewrap fails half-way", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-kek-"));
    const file = path.join(dir, "kek.bin");
    const provider = new LocalKeyFileProvider(file);
    const f = await fixture(await backend.open(), provider);
    const before = await wrappedRows(f.db);
    const oldKey = readFileSync(file);
    // Two wraps succeed (one key wrapped and checked), the next fails.
    await assert.rejects(rotateKek(f.db, failingAfter(provider, 1)), /injected wrap failure/);
    assert.deepEqual(await wrappedRows(f.db), before, "no wrapped key changed");
    assert.deepEqual(readFileSync(file), oldKey, "the old key file is back");
    assert.deepEqual(readdirSync(dir), ["kek.bin"]);
    assert.equal(provider.id, before[0]!.provider);
    await assertReadable(f, new LocalKeyFileProvider(file));
  });

  it("recovers from a rotation that crashed before its commit", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-kek-"));
    const file = path.join(dir, "kek.bin");
    const f = await fixture(await backend.open(), new LocalKeyFileProvider(file));
    await new LocalKeyFileProvider(file).beginRotation(); // ... and the process dies here
    assert.deepEqual(readdirSync(dir).sort(), ["kek.bin", "kek.bin.1.retired"]);
    await assertReadable(f, new LocalKeyFileProvider(file)); // the retired key still unwraps
    const result = await rotateConfiguredKek(f.db, { provider: "local-file", keyFile: file }, { dataDir: f.dataDir });
    assert.deepEqual(result.rewrapped, { corpora: 2, conversations: 1, responses: 1, remoteModels: 1, signingKeys: 1 });
    assert.deepEqual(readdirSync(dir), ["kek.bin"]);
    await assertReadable(f, new LocalKeyFileProvider(file));
  });

  it("refuses while a server uses the data directory", async () => {
    const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-kek-")), "kek.bin");
    const f = await fixture(await backend.open(), new LocalKeyFileProvider(keyFile));
    const settings = { provider: "local-file" as const, keyFile };
    const release = markServerRunning(f.dataDir);
    const before = await wrappedRows(f.db);
    await assert.rejects(rotateConfiguredKek(f.db, settings, { dataDir: f.dataDir }), /server \(pid \d+\) is using/);
    assert.deepEqual(await wrappedRows(f.db), before);
    release();
    assert.equal(existsSync(path.join(f.dataDir, "server.pid")), false);
    assert.equal((await rotateConfiguredKek(f.db, settings, { dataDir: f.dataDir })).rewrapped.corpora, 2, "runs once the server is gone");
  });
});

describeBackends("KEK rotation, PKCS#11 (SoftHSM2)", (backend) => {
  let token: SoftHsmToken;
  let migrating: SoftHsmToken;
  before(() => {
    token = createSoftHsmToken();
    migrating = createSoftHsmToken();
  });

  it("rewraps every key under a new KEK in the token; the old KEK is destroyed only when asked", async () => {
    const provider = await Pkcs11KeyProvider.open(token.settings(), { create: true });
    try {
      const f = await fixture(await backend.open(), provider);
      const before = await wrappedRows(f.db);
      const first = await rotateKek(f.db, provider);
      assert.match(first.newProviderId, /^pkcs11:.*:v2\./);
      assert.deepEqual(first.rewrapped, { corpora: 2, conversations: 1, responses: 1, remoteModels: 1, signingKeys: 1 });
      assert.deepEqual(first.retired, []);
      assert.equal(provider.kekIds().length, 2, "the old KEK stays in the token");
      (await wrappedRows(f.db)).forEach((row, i) => {
        assert.equal(row.provider, first.newProviderId);
        assert.notDeepEqual(row.wrapped_key, before[i]!.wrapped_key);
      });

      await assert.rejects(rotateKek(f.db, failingAfter(provider, 1)), /injected wrap failure/);
      assert.equal(provider.id, first.newProviderId, "a failed rotation leaves the current KEK");
      assert.equal(provider.kekIds().length, 2, "and discards the one it generated");

      const second = await rotateKek(f.db, provider, { destroyOld: true });
      assert.deepEqual(second.retired.sort(), [first.oldProviderId, first.newProviderId].sort());
      assert.deepEqual(provider.kekIds(), [second.newProviderId]);
      const reopened = await Pkcs11KeyProvider.open(token.settings());
      try {
        assert.equal(reopened.id, second.newProviderId);
        await assertReadable(f, reopened);
      } finally {
        await reopened.close();
      }
    } finally {
      await provider.close();
    }
  });

  it("moves keys wrapped by the local key file under the HSM's KEK", async () => {
    const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-kek-")), "kek.bin");
    const f = await fixture(await backend.open(), new LocalKeyFileProvider(keyFile));
    const init = await Pkcs11KeyProvider.open(migrating.settings(), { create: true });
    await init.close();
    const result = await rotateConfiguredKek(f.db, { provider: "pkcs11", keyFile, pkcs11: migrating.settings() }, { dataDir: f.dataDir });
    assert.match(result.oldProviderId, /^pkcs11:/);
    assert.equal(Object.keys(result.before).length, 1);
    assert.match(Object.keys(result.before)[0]!, /^local-file:/);
    assert.ok((await wrappedRows(f.db)).every((r) => r.provider === result.newProviderId));
    const hsm = await Pkcs11KeyProvider.open(migrating.settings());
    try {
      await assertReadable(f, hsm);
    } finally {
      await hsm.close();
    }
  });
});
