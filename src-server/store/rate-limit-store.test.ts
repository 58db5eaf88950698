import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { openSqlDatabase } from "./sql-database.js";
import { SqlRateLimitLedger, WINDOW_MS } from "./rate-limit-store.js";

const limit = (requestsPerMinute: number, tokensPerMinute = 0) => ({ requestsPerMinute, tokensPerMinute });

describeBackends("SqlRateLimitLedger", (backend) => {
  const open = async () => new SqlRateLimitLedger(await backend.open());

  it("admits up to the limit within a sliding minute, then says when the oldest entry frees room", async () => {
    const ledger = await open();
    const key = [{ bucket: "key:a", limit: limit(3) }];
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) assert.equal((await ledger.take(key, { requests: 1, tokens: 0 }, t0 + i * 1000)).admitted, true);
    const refused = await ledger.take(key, { requests: 1, tokens: 0 }, t0 + 5000);
    assert.equal(refused.admitted, false);
    assert.equal(refused.retryAfterMs, t0 + WINDOW_MS - (t0 + 5000), "the first entry leaves the window 55 s later");
    assert.equal(refused.entries.length, 0, "a refusal records nothing");
    assert.equal((await ledger.take(key, { requests: 1, tokens: 0 }, t0 + WINDOW_MS)).admitted, true, "a minute after the first, one more fits");
    assert.equal((await ledger.take(key, { requests: 1, tokens: 0 }, t0 + WINDOW_MS + 1)).admitted, false);
  });

  it("needs room in every bucket, and records the cost in all of them or none", async () => {
    const ledger = await open();
    const workspace = { bucket: "workspace:w", limit: limit(2) };
    const t = 5_000_000;
    assert.ok((await ledger.take([{ bucket: "key:a", limit: limit(10) }, workspace], { requests: 1, tokens: 0 }, t)).admitted);
    assert.ok((await ledger.take([{ bucket: "key:b", limit: limit(10) }, workspace], { requests: 1, tokens: 0 }, t)).admitted);
    const third = await ledger.take([{ bucket: "key:c", limit: limit(10) }, workspace], { requests: 1, tokens: 0 }, t);
    assert.equal(third.admitted, false, "the workspace is full even though key c is not");
    assert.equal((await ledger.peek([{ bucket: "key:c", limit: limit(10) }], t))[0]!.usedRequests, 0, "nothing was recorded for key c");
  });

  it("counts tokens, refuses a cost that does not fit, and settles a reservation to the real count", async () => {
    const ledger = await open();
    const key = [{ bucket: "key:a", limit: limit(0, 1000) }];
    const t = 9_000_000;
    const reserved = await ledger.take(key, { requests: 0, tokens: 900 }, t);
    assert.ok(reserved.admitted);
    assert.equal((await ledger.take(key, { requests: 0, tokens: 200 }, t)).admitted, false);
    await ledger.settle(reserved.entries, 150);
    assert.equal((await ledger.peek(key, t))[0]!.usedTokens, 150);
    assert.ok((await ledger.take(key, { requests: 0, tokens: 800 }, t)).admitted, "what the reservation did not use is free again");
    assert.equal((await ledger.take(key, { requests: 0, tokens: 5000 }, t)).retryAfterMs, WINDOW_MS, "a cost above the whole limit never fits");
  });

  it("keeps named tiers per subject", async () => {
    const ledger = await open();
    await ledger.setTier("key_1", "gold");
    assert.equal(await ledger.tierOf("key_1"), "gold");
    await ledger.setTier("key_1", "silver");
    assert.equal(await ledger.tierOf("key_1"), "silver");
    await ledger.setTier("key_1", null);
    assert.equal(await ledger.tierOf("key_1"), undefined);
  });

  it("admits exactly the limit when 200 requests race through three connections to the same database", async () => {
    const first = await backend.open();
    // Three handles on one database: three replicas' pools on Postgres, one file on SQLite
    // (':memory:' cannot be shared, so SQLite races on one handle).
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const ledgers = [first, ...others].map((db) => new SqlRateLimitLedger(db));
      const buckets = [
        { bucket: "key:k", limit: limit(100) },
        { bucket: "workspace:w", limit: limit(60) },
      ];
      const t = 20_000_000;
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => ledgers[i % 3]!.take(buckets, { requests: 1, tokens: 0 }, t + (i % 7))));
      assert.equal(results.filter((r) => r.admitted).length, 60);
      const [key, workspace] = await ledgers[0]!.peek(buckets, t + 10);
      assert.equal(workspace!.usedRequests, 60);
      assert.equal(key!.usedRequests, 60, "refused requests recorded nothing in the key's bucket either");
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
