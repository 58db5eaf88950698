import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { openSqlDatabase } from "./sql-database.js";
import { WorkspaceStore } from "./workspace-store.js";

describeBackends("WorkspaceStore", (backend) => {
  it("inserts and reads workspaces, with times beyond 32 bits as numbers", async () => {
    const workspaces = new WorkspaceStore(await backend.open());
    await workspaces.insert({ id: "ws_a", name: "Alpha", createdAt: 1_800_000_000_000 });
    assert.deepEqual(await workspaces.get("ws_a"), { id: "ws_a", name: "Alpha", createdAt: 1_800_000_000_000 });
    assert.equal(await workspaces.get("ws_missing"), undefined);
    await assert.rejects(workspaces.insert({ id: "ws_a", name: "again", createdAt: 1 }), "ids are unique");
  });

  it("inserts a workspace at most once with insertIfAbsent, also when replicas race", async () => {
    const first = await backend.open();
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new WorkspaceStore(db));
      const created = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 3]!.insertIfAbsent({ id: "ws_default", name: `Default ${i}`, createdAt: 10 + i })));
      assert.equal(created.filter(Boolean).length, 1, "exactly one call created it");
      const winner = created.indexOf(true);
      assert.deepEqual(await stores[0]!.get("ws_default"), { id: "ws_default", name: `Default ${winner}`, createdAt: 10 + winner }, "the others changed nothing");
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });

  it("lists workspaces a page at a time, by creation then id, in both orders", async () => {
    const workspaces = new WorkspaceStore(await backend.open());
    // Two share a creation time: the id breaks the tie (byte order, 'B' < 'a').
    for (const [id, createdAt] of [["ws_c", 300], ["ws_a", 100], ["ws_b", 200], ["ws_B", 200]] as const) await workspaces.insert({ id, name: id, createdAt });
    const ids = (page: Awaited<ReturnType<WorkspaceStore["list"]>>) => page.data.map((w) => w.id);
    const first = await workspaces.list({ limit: 2, order: "asc" });
    assert.deepEqual(ids(first), ["ws_a", "ws_B"]);
    assert.equal(first.hasMore, true);
    const second = await workspaces.list({ limit: 2, order: "asc", after: "ws_B" });
    assert.deepEqual(ids(second), ["ws_b", "ws_c"]);
    assert.equal(second.hasMore, false);
    assert.deepEqual(ids(await workspaces.list({ limit: 10, order: "desc" })), ["ws_c", "ws_b", "ws_B", "ws_a"]);
    assert.deepEqual(ids(await workspaces.list({ limit: 2, order: "desc", before: "ws_a" })), ["ws_b", "ws_B"]);
    assert.equal((await workspaces.list({ limit: 2, order: "asc" })).data[0]!.createdAt, 100);
  });
});
