import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ResponseStore, type StoredResponseRecord } from "./response-store.js";

const response = (id: string, workspaceId: string, expiresAt: number | null): StoredResponseRecord => ({
  id,
  workspaceId,
  keyProvider: "local:test",
  wrappedKey: Buffer.from(`key of ${id}`),
  body: Buffer.from([9, 0, 8, 255]),
  createdAt: 100,
  expiresAt,
});

describeBackends("ResponseStore", (backend) => {
  const open = async () => {
    const store = await backend.open();
    for (const id of ["ws_a", "ws_b"]) await store.db.insertInto("workspaces").values({ id, name: id, created_at: 1 }).execute();
    return new ResponseStore(store);
  };

  it("returns a response to its workspace until its retention ends", async () => {
    const responses = await open();
    await responses.insert(response("resp_1", "ws_a", 1000));
    await responses.insert(response("resp_2", "ws_a", null));
    assert.deepEqual(await responses.get("ws_a", "resp_1", 999), response("resp_1", "ws_a", 1000));
    assert.equal(await responses.get("ws_a", "resp_1", 1000), undefined, "gone at its expiry");
    assert.equal(await responses.get("ws_b", "resp_1", 500), undefined, "another workspace's does not exist");
    assert.deepEqual(await responses.get("ws_a", "resp_2", 10 ** 12), response("resp_2", "ws_a", null), "kept until deleted");
    assert.deepEqual(await responses.wrappedKey("resp_1"), Buffer.from("key of resp_1"));
    assert.equal(await responses.wrappedKey("resp_none"), undefined);
  });

  it("deletes within the workspace only, and says whether it did", async () => {
    const responses = await open();
    await responses.insert(response("resp_1", "ws_a", null));
    assert.equal(await responses.delete("ws_b", "resp_1"), false);
    assert.ok(await responses.get("ws_a", "resp_1", 0));
    assert.equal(await responses.delete("ws_a", "resp_1"), true);
    assert.equal(await responses.delete("ws_a", "resp_1"), false);
    assert.equal(await responses.wrappedKey("resp_1"), undefined, "its key went with it");
  });

  it("purges exactly the responses whose retention has ended", async () => {
    const responses = await open();
    await responses.insert(response("resp_old", "ws_a", 500));
    await responses.insert(response("resp_edge", "ws_b", 1000));
    await responses.insert(response("resp_new", "ws_a", 1001));
    await responses.insert(response("resp_kept", "ws_a", null));
    assert.deepEqual((await responses.deleteExpired(1000)).sort(), ["resp_edge", "resp_old"]);
    assert.deepEqual(await responses.deleteExpired(1000), []);
    assert.ok(await responses.get("ws_a", "resp_new", 1000));
    assert.ok(await responses.get("ws_a", "resp_kept", 1000));
    assert.equal(await responses.wrappedKey("resp_old"), undefined);
  });
});
