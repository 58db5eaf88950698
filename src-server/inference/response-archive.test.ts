/** The response archive over the asynchronous store (SQLite): retention, workspaces, deletion with the key. */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Principal } from "../domain/scopes.js";
import { DataKeyring } from "../security/data-keyring.js";
import { LocalKeyFileProvider } from "../security/local-key-file-provider.js";
import { ResponseStore } from "../store/response-store.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";
import { ResponseArchive, type ArchivedResponse } from "./response-archive.js";

const alice: Principal = { workspaceId: "ws_a", keyId: "key_a", keyName: "a", scopes: new Set(["inference"]) };
const bob: Principal = { workspaceId: "ws_b", keyId: "key_b", keyName: "b", scopes: new Set(["inference"]) };
const archived = (text: string): ArchivedResponse => ({ response: { id: "x", output_text: text }, inputItems: [{ id: "in_1" }], transcript: [{ role: "user", content: text }] });

describe("ResponseArchive", () => {
  let store: SqlDatabase;
  let provider: LocalKeyFileProvider;
  let now = 1_000_000;
  /** An archive with a keyring of its own (nothing cached: keys come from the store). */
  const archive = (retentionDays = 1) => {
    const responses = new ResponseStore(store);
    return new ResponseArchive(responses, new DataKeyring(provider, (id) => responses.wrappedKey(id)), { retentionDays, now: () => now });
  };

  before(async () => {
    store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    for (const id of ["ws_a", "ws_b"]) await store.db.insertInto("workspaces").values({ id, name: id, created_at: 1 }).execute();
    provider = new LocalKeyFileProvider(path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-resp-")), "kek.bin"));
  });
  after(async () => {
    await store.close();
  });

  it("keeps a response for its workspace until its retention ends, then purges it", async () => {
    await archive().save(alice, "resp_1", archived("hello"));
    await archive(0).save(alice, "resp_forever", archived("kept"));
    assert.deepEqual(await archive().load(alice, "resp_1"), archived("hello"));
    await assert.rejects(archive().load(bob, "resp_1"), { code: "response_not_found" });
    now += 86_400;
    await assert.rejects(archive().load(alice, "resp_1", "previous_response_id"), { code: "response_not_found", param: "previous_response_id" });
    assert.equal(await archive().purgeExpired(), 1);
    assert.equal(await archive().purgeExpired(), 0);
    assert.deepEqual(await archive().load(alice, "resp_forever"), archived("kept"));
  });

  it("deletes a response once, in its own workspace only", async () => {
    await archive().save(alice, "resp_2", archived("bye"));
    await assert.rejects(archive().delete(bob, "resp_2"), { code: "response_not_found" });
    await archive().delete(alice, "resp_2");
    await assert.rejects(archive().delete(alice, "resp_2"), { code: "response_not_found" });
    await assert.rejects(archive().load(alice, "resp_2"), { code: "response_not_found" });
  });
});
