import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openDatabase } from "./database.js";
import { SqliteRateLimitLedger, WINDOW_MS } from "./rate-limit-store.js";

const limit = (requestsPerMinute: number, tokensPerMinute = 0) => ({ requestsPerMinute, tokensPerMinute });

describe("SqliteRateLimitLedger", () => {
  it("admits up to the limit within a sliding minute, then says when the oldest entry frees room", () => {
    const ledger = new SqliteRateLimitLedger(openDatabase(":memory:"));
    const key = [{ bucket: "key:a", limit: limit(3) }];
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) assert.equal(ledger.take(key, { requests: 1, tokens: 0 }, t0 + i * 1000).admitted, true);
    const refused = ledger.take(key, { requests: 1, tokens: 0 }, t0 + 5000);
    assert.equal(refused.admitted, false);
    assert.equal(refused.retryAfterMs, t0 + WINDOW_MS - (t0 + 5000), "the first entry leaves the window 55 s later");
    assert.equal(refused.entries.length, 0, "a refusal records nothing");
    assert.equal(ledger.take(key, { requests: 1, tokens: 0 }, t0 + WINDOW_MS).admitted, true, "a minute after the first, one more fits");
    assert.equal(ledger.take(key, { requests: 1, tokens: 0 }, t0 + WINDOW_MS + 1).admitted, false);
  });

  it("needs room in every bucket, and records the cost in all of them or none", () => {
    const ledger = new SqliteRateLimitLedger(openDatabase(":memory:"));
    const workspace = { bucket: "workspace:w", limit: limit(2) };
    const t = 5_000_000;
    assert.ok(ledger.take([{ bucket: "key:a", limit: limit(10) }, workspace], { requests: 1, tokens: 0 }, t).admitted);
    assert.ok(ledger.take([{ bucket: "key:b", limit: limit(10) }, workspace], { requests: 1, tokens: 0 }, t).admitted);
    const third = ledger.take([{ bucket: "key:c", limit: limit(10) }, workspace], { requests: 1, tokens: 0 }, t);
    assert.equal(third.admitted, false, "the workspace is full even though key c is not");
    assert.equal(ledger.peek([{ bucket: "key:c", limit: limit(10) }], t)[0]!.usedRequests, 0, "nothing was recorded for key c");
  });

  it("counts tokens, refuses a cost that does not fit, and settles a reservation to the real count", () => {
    const ledger = new SqliteRateLimitLedger(openDatabase(":memory:"));
    const key = [{ bucket: "key:a", limit: limit(0, 1000) }];
    const t = 9_000_000;
    const reserved = ledger.take(key, { requests: 0, tokens: 900 }, t);
    assert.ok(reserved.admitted);
    assert.equal(ledger.take(key, { requests: 0, tokens: 200 }, t).admitted, false);
    ledger.settle(reserved.entries, 150);
    assert.equal(ledger.peek(key, t)[0]!.usedTokens, 150);
    assert.ok(ledger.take(key, { requests: 0, tokens: 800 }, t).admitted, "what the reservation did not use is free again");
    assert.equal(ledger.take(key, { requests: 0, tokens: 5000 }, t).retryAfterMs, WINDOW_MS, "a cost above the whole limit never fits");
  });

  it("keeps named tiers per subject", () => {
    const ledger = new SqliteRateLimitLedger(openDatabase(":memory:"));
    ledger.setTier("key_1", "gold");
    assert.equal(ledger.tierOf("key_1"), "gold");
    ledger.setTier("key_1", "silver");
    assert.equal(ledger.tierOf("key_1"), "silver");
    ledger.setTier("key_1", null);
    assert.equal(ledger.tierOf("key_1"), undefined);
  });
});
