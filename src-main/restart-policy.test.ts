import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RestartPolicy } from "./restart-policy.js";

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("RestartPolicy", () => {
  it("backs off exponentially from the initial delay, capped at the maximum delay", () => {
    const c = clock();
    const policy = new RestartPolicy(c.now, { initialDelayMs: 500, maxDelayMs: 3000, maxRestarts: 10 });
    const delays = Array.from({ length: 6 }, () => policy.onCrash());
    assert.deepEqual(delays, [500, 1000, 2000, 3000, 3000, 3000]);
    assert.equal(policy.crashes, 6);
  });

  it("gives up after maxRestarts consecutive crashes, and keeps giving up", () => {
    const c = clock();
    const policy = new RestartPolicy(c.now, { maxRestarts: 3 });
    assert.deepEqual([policy.onCrash(), policy.onCrash(), policy.onCrash()], [1000, 2000, 4000]);
    assert.equal(policy.onCrash(), null);
    assert.equal(policy.onCrash(), null);
  });

  it("a crash soon after ready still counts towards the cap", () => {
    const c = clock();
    const policy = new RestartPolicy(c.now, { maxRestarts: 2, stableAfterMs: 60_000 });
    policy.markReady();
    c.advance(59_999);
    assert.equal(policy.onCrash(), 1000);
    policy.markReady();
    c.advance(10_000);
    assert.equal(policy.onCrash(), 2000);
    policy.markReady();
    c.advance(1000);
    assert.equal(policy.onCrash(), null);
  });

  it("recovers after a stable period: the next crash starts again from the initial delay", () => {
    const c = clock();
    const policy = new RestartPolicy(c.now, { maxRestarts: 2, stableAfterMs: 60_000 });
    policy.onCrash();
    policy.onCrash();
    policy.markReady();
    c.advance(60_000);
    assert.equal(policy.onCrash(), 1000);
    assert.equal(policy.crashes, 1);
  });

  it("time spent down (not ready) is not a stable period", () => {
    const c = clock();
    const policy = new RestartPolicy(c.now, { maxRestarts: 5, stableAfterMs: 60_000 });
    policy.markReady();
    policy.onCrash();
    c.advance(120_000);
    assert.equal(policy.onCrash(), 2000, "the crash count was not cleared without a new ready");
  });

  it("reset forgets the crashes", () => {
    const c = clock();
    const policy = new RestartPolicy(c.now, { maxRestarts: 1 });
    policy.onCrash();
    assert.equal(policy.onCrash(), null);
    policy.reset();
    assert.equal(policy.onCrash(), 1000);
  });
});
