import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { openSqlDatabase } from "./sql-database.js";
import { LeaseStore } from "./lease-store.js";

describeBackends("LeaseStore", (backend) => {
  it("lets one holder at a time take a lease, renew it, and lose it when it lapses", async () => {
    const leases = new LeaseStore(await backend.open());
    const t = 1_000_000;
    assert.equal(await leases.acquire("purge", "r1", 10_000, t), true);
    assert.equal(await leases.acquire("purge", "r2", 10_000, t + 1), false, "r1 holds it");
    assert.equal(await leases.acquire("purge", "r1", 10_000, t + 5_000), true, "its holder renews it");
    assert.equal(await leases.holder("purge", t + 5_001), "r1");
    assert.equal(await leases.acquire("purge", "r2", 10_000, t + 14_999), false, "renewed until t + 15 s");
    assert.equal(await leases.acquire("purge", "r2", 10_000, t + 15_000), true, "a lapsed lease goes to whoever asks");
    await leases.release("purge", "r1");
    assert.equal(await leases.holder("purge", t + 15_001), "r2", "only the holder gives it back");
    await leases.release("purge", "r2");
    assert.equal(await leases.holder("purge", t + 15_002), null);
  });

  it("gives a contested lease to exactly one of several replicas", async () => {
    const first = await backend.open();
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new LeaseStore(db));
      const won = await Promise.all(Array.from({ length: 30 }, (_, i) => stores[i % 3]!.acquire("purge", `r${i}`, 60_000, 5_000_000)));
      assert.equal(won.filter(Boolean).length, 1);
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
