import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";
import { ModelFileStore } from "./model-file-store.js";

describeBackends("ModelFileStore", (backend) => {
  const open = async () => new ModelFileStore(await backend.open());

  it("lists registered files by time, then id", async () => {
    const files = await open();
    await files.insert({ id: "b", path: "/models/b.gguf", createdAt: 20 });
    await files.insert({ id: "a", path: "/models/a.gguf", createdAt: 20 });
    await files.insert({ id: "c", path: "/models/c.gguf", createdAt: 10 });
    assert.deepEqual(await files.all(), [
      { id: "c", path: "/models/c.gguf", createdAt: 10 },
      { id: "a", path: "/models/a.gguf", createdAt: 20 },
      { id: "b", path: "/models/b.gguf", createdAt: 20 },
    ]);
  });

  it("replaces the record with the same id, and the record with the same path", async () => {
    const files = await open();
    await files.insert({ id: "m1", path: "/models/one.gguf", createdAt: 1 });
    await files.insert({ id: "m2", path: "/models/two.gguf", createdAt: 2 });
    await files.insert({ id: "m1", path: "/models/one-moved.gguf", createdAt: 3 });
    await files.insert({ id: "m3", path: "/models/two.gguf", createdAt: 4 });
    assert.deepEqual(await files.all(), [
      { id: "m1", path: "/models/one-moved.gguf", createdAt: 3 },
      { id: "m3", path: "/models/two.gguf", createdAt: 4 },
    ]);
    // Both at once: the id of one record and the path of another.
    await files.insert({ id: "m1", path: "/models/two.gguf", createdAt: 5 });
    assert.deepEqual(await files.all(), [{ id: "m1", path: "/models/two.gguf", createdAt: 5 }]);
  });

  it("keeps one record per path when replicas register the same file at once", async () => {
    const first = await backend.open();
    const others: SqlDatabase[] = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new ModelFileStore(db));
      await Promise.all(Array.from({ length: 24 }, (_, i) => stores[i % 3]!.insert({ id: `m${i % 4}`, path: `/models/${i % 2}.gguf`, createdAt: i })));
      const all = await stores[0]!.all();
      assert.equal(all.length, new Set(all.map((f) => f.path)).size);
      assert.equal(all.length, new Set(all.map((f) => f.id)).size);
      assert.ok(all.length >= 1 && all.length <= 2);
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
