import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBatchGather, type BatchGatherState } from "./batch-gather.js";

/** A dispatch loop's view: which sequences have queued, and a way to queue one later. */
function loopState(previous: number[], queued: number[], decodeMs: number, msSincePrevious = 0) {
  const queuedIds = new Set(queued);
  let waiters: (() => void)[] = [];
  const state: BatchGatherState = {
    queuedSequenceIds: queuedIds,
    previousSequenceIds: new Set(previous),
    previousDecodeMs: decodeMs,
    msSincePrevious,
    nextQueued: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
  const queue = (id: number) => {
    queuedIds.add(id);
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };
  return { state, queue };
}

describe("batch gathering", () => {
  it("forms the batch at once when every generating sequence has queued", async () => {
    const { state } = loopState([0, 1, 2], [0, 1, 2], 100);
    const started = performance.now();
    await createBatchGather({ maxWaitMs: 1000, decodeShare: 1 })(state);
    assert.ok(performance.now() - started < 50);
  });

  it("waits for the stragglers and goes as soon as the last one queues", async () => {
    const { state, queue } = loopState([0, 1, 2, 3], [0, 2], 1000);
    let done = false;
    const gathering = createBatchGather({ maxWaitMs: 5000, decodeShare: 1 })(state).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    queue(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(done, false, "went before sequence 3 queued");
    const lastQueued = performance.now();
    queue(3);
    await gathering;
    assert.ok(performance.now() - lastQueued < 100, "did not go when the last straggler queued");
  });

  it("gives up on a sequence that never queues after its share of the decode time", async () => {
    const { state } = loopState([0, 1], [0], 200);
    const started = performance.now();
    await createBatchGather({ maxWaitMs: 10_000, decodeShare: 0.25 })(state);
    const waited = performance.now() - started;
    assert.ok(waited >= 45 && waited < 1000, `waited ${waited.toFixed(0)} ms for a budget of 50`);
  });

  it("never waits longer than maxWaitMs", async () => {
    const { state } = loopState([0, 1], [0], 100_000);
    const started = performance.now();
    await createBatchGather({ maxWaitMs: 30, decodeShare: 0.5 })(state);
    const waited = performance.now() - started;
    assert.ok(waited >= 25 && waited < 1000, `waited ${waited.toFixed(0)} ms for a budget of 30`);
  });

  it("does not wait when the previous batch is long past (its sequences have finished)", async () => {
    const { state } = loopState([0, 1, 2], [], 100, 150);
    const started = performance.now();
    await createBatchGather({ maxWaitMs: 1000, decodeShare: 1 })(state);
    assert.ok(performance.now() - started < 50);
  });
});
