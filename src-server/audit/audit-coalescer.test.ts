import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuditCoalescer } from "./audit-coalescer.js";
import type { AuditEvent } from "./audit-service.js";

const failure = (n: number, reason = "invalid_api_key"): AuditEvent => ({ type: "auth.failed", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: `req_${n}`, data: { reason, n } });

/** A coalescer on a clock the test moves, writing into an array. */
function harness(options: { windowMs?: number; maxKeys?: number } = {}) {
  let now = Date.UTC(2025, 0, 1);
  const written: AuditEvent[] = [];
  const coalescer = new AuditCoalescer((e) => written.push(e), { windowMs: 60_000, ...options, now: () => now });
  return { coalescer, written, advance: (ms: number) => (now += ms) };
}

/** How many events the written entries stand for (`count` absent = 1). */
const total = (entries: AuditEvent[]) => entries.reduce((sum, e) => sum + ((e.data.count as number | undefined) ?? 1), 0);

describe("AuditCoalescer", () => {
  it("writes the first event at once and counts repeats within the window into one entry", () => {
    const { coalescer, written, advance } = harness();
    coalescer.record("a", failure(1));
    assert.deepEqual(written, [failure(1)], "the first is written as it is, at once");
    for (let n = 2; n <= 500; n++) {
      advance(10);
      coalescer.record("a", failure(n));
    }
    assert.equal(written.length, 1, "repeats inside the window are only counted");
    advance(60_000);
    coalescer.record("b", failure(501, "missing_api_key"));
    assert.equal(written.length, 3);
    const summary = written[1]!;
    assert.equal(summary.type, "auth.failed");
    assert.equal(summary.data.count, 499);
    assert.equal(summary.data.n, 2, "the facts of the first repeat");
    assert.equal(summary.requestId, "req_500", "the last repeat's request id");
    assert.equal(summary.data.first_seen, new Date(Date.UTC(2025, 0, 1) + 10).toISOString());
    assert.equal(summary.data.last_seen, new Date(Date.UTC(2025, 0, 1) + 4990).toISOString());
    assert.equal(written[2]!.data.reason, "missing_api_key");
    assert.equal(total(written), 501);
  });

  it("keeps counting a key that stays busy (one entry per window), and forgets a quiet one", () => {
    const { coalescer, written, advance } = harness();
    coalescer.record("a", failure(1));
    advance(1000);
    coalescer.record("a", failure(2));
    advance(60_000);
    coalescer.record("a", failure(3));
    assert.equal(written.length, 2, "the closed window's count is written; the repeat after it is counted, not written at once");
    advance(60_000);
    coalescer.record("x", failure(4));
    assert.equal(written.length, 4);
    assert.equal(written[2]!.data.count, 1);
    assert.equal(coalescer.size, 2, "a and x");
    advance(60_000);
    coalescer.record("y", failure(5));
    assert.equal(coalescer.size, 1, "windows that closed with nothing counted forget their keys (a, x): only y is left");
    advance(120_000);
    coalescer.record("a", failure(6));
    assert.deepEqual(written.at(-1), failure(6), "a key quiet for a window is written at once again");
    assert.equal(total(written), 6);
  });

  it("writes every pending count on close, and afterwards writes events as they come", () => {
    const { coalescer, written } = harness();
    coalescer.record("a", failure(1));
    coalescer.record("a", failure(2));
    coalescer.record("a", failure(3));
    coalescer.record("b", failure(4));
    coalescer.close();
    coalescer.close();
    assert.equal(written.length, 3);
    assert.equal(written[2]!.data.count, 2);
    coalescer.record("a", failure(5));
    assert.equal(written.length, 4);
    assert.equal(total(written), 5);
  });

  it("tracks at most maxKeys keys: the oldest window is written early, counts are never lost", () => {
    const { coalescer, written } = harness({ maxKeys: 100 });
    for (let n = 0; n < 10_000; n++) coalescer.record(`k${n % 1000}`, failure(n));
    assert.ok(coalescer.size <= 100);
    coalescer.close();
    assert.equal(total(written), 10_000);
  });

  it("closes windows on its own timer", async () => {
    const written: AuditEvent[] = [];
    const coalescer = new AuditCoalescer((e) => written.push(e), { windowMs: 20 });
    coalescer.record("a", failure(1));
    coalescer.record("a", failure(2));
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal(written.length, 2);
    assert.equal(written[1]!.data.count, 1);
    coalescer.close();
  });
});
