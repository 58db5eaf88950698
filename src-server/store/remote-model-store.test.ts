import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { RemoteModelStore, type RemoteModelRecord } from "./remote-model-store.js";

const model = (id: string, createdAt: number): RemoteModelRecord => ({
  id,
  spec: JSON.stringify({ type: "chat", upstreams: [{ name: "r1", url: "https://gpu.example/v1", model: "m" }] }),
  keyProvider: "local:test",
  wrappedKey: Buffer.from(`key of ${id}`),
  secrets: Buffer.from([0, 255, 1, 254]),
  createdAt,
  createdBy: "key_admin",
});

describeBackends("RemoteModelStore", (backend) => {
  const open = async () => new RemoteModelStore(await backend.open());

  it("keeps added models in the order they were added, sealed bytes as given", async () => {
    const models = await open();
    await models.insert(model("team-b", 20));
    await models.insert(model("team-a", 20));
    await models.insert(model("team-c", 10));
    assert.deepEqual(
      (await models.list()).map((m) => m.id),
      ["team-c", "team-a", "team-b"],
      "by time, then id",
    );
    assert.deepEqual(await models.get("team-a"), model("team-a", 20));
    assert.equal(await models.get("team-none"), undefined);
    assert.deepEqual(await models.wrappedKey("team-b"), Buffer.from("key of team-b"));
    assert.equal(await models.wrappedKey("team-none"), undefined);
    await assert.rejects(models.insert(model("team-a", 30)), "an id is added once");
  });

  it("deletes a model with its secrets and key, and says whether it did", async () => {
    const models = await open();
    await models.insert(model("team-a", 1));
    assert.equal(await models.delete("team-a"), true);
    assert.equal(await models.delete("team-a"), false);
    assert.equal(await models.wrappedKey("team-a"), undefined);
    assert.deepEqual(await models.list(), []);
  });
});
