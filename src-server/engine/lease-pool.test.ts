import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { LeasePool } from "./lease-pool.js";

describe("LeasePool", () => {
  it("hands each item to one holder and queues the rest in FIFO order", async () => {
    const pool = new LeasePool(["a"], 10);
    const first = await pool.acquire(new AbortController().signal);
    const order: string[] = [];
    const second = pool.acquire(new AbortController().signal).then((x) => order.push(`2:${x}`));
    const third = pool.acquire(new AbortController().signal).then((x) => order.push(`3:${x}`));
    assert.equal(pool.queued, 2);
    pool.release(first);
    await second;
    pool.release("a");
    await third;
    assert.deepEqual(order, ["2:a", "3:a"]);
  });

  it("takes the free item with the best affinity, ties to the most recently returned", async () => {
    const signal = new AbortController().signal;
    const pool = new LeasePool(["aa", "b", "cc"], 10);
    const length = (x: string) => x.length;
    assert.equal(await pool.acquire(signal, length), "cc", "ties (aa, cc): the last returned");
    assert.equal(await pool.acquire(signal, (x) => (x === "b" ? 5 : 0)), "b");
    pool.release("b");
    pool.release("cc");
    assert.equal(await pool.acquire(signal, length), "cc");
    assert.equal(await pool.acquire(signal, length), "aa");
    assert.equal(await pool.acquire(signal, length), "b", "the only one left");
    assert.equal(pool.available, 0);
  });

  it("tells the chooser which free items sit next to leased ones", async () => {
    const signal = new AbortController().signal;
    const pool = new LeasePool([0, 1, 2, 3, 4, 5, 6, 7], 10);
    const adjacentSeen = new Map<number, boolean>();
    const record = (item: number, candidate: { adjacent: boolean }) => (adjacentSeen.set(item, candidate.adjacent), item === 5 ? 1 : 0);
    assert.equal(await pool.acquire(signal, record), 5);
    assert.ok([...adjacentSeen.values()].every(Boolean), "with nothing leased every item is as good as any");
    adjacentSeen.clear();
    // Prefer adjacency: 4 and 6 touch 5, nothing else does.
    const taken = await pool.acquire(signal, (item, candidate) => (adjacentSeen.set(item, candidate.adjacent), candidate.adjacent ? 1 : 0));
    assert.ok(taken === 4 || taken === 6, `took ${taken}`);
    assert.deepEqual([...adjacentSeen.entries()].filter(([, adjacent]) => adjacent).map(([item]) => item).sort(), [4, 6]);
    adjacentSeen.clear();
    pool.release(5);
    await pool.acquire(signal, record);
    const leased = taken;
    assert.deepEqual([...adjacentSeen.entries()].filter(([, adjacent]) => adjacent).map(([item]) => item).sort(), [leased - 1, leased + 1].sort(), "only the neighbours of what is still leased");
  });

  it("refuses with 503 server_busy beyond maxQueued", async () => {
    const pool = new LeasePool([1], 1);
    await pool.acquire(new AbortController().signal);
    void pool.acquire(new AbortController().signal);
    await assert.rejects(pool.acquire(new AbortController().signal), (e: unknown) => e instanceof ServiceError && e.kind === "unavailable" && e.code === "server_busy");
  });

  it("drops an aborted waiter from the queue", async () => {
    const pool = new LeasePool([1], 5);
    const held = await pool.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    controller.abort(new Error("gone"));
    await assert.rejects(waiting, /gone/);
    assert.equal(pool.queued, 0);
    pool.release(held);
    assert.equal(pool.available, 1);
  });

  it("rejects waiters when closed", async () => {
    const pool = new LeasePool([1], 5);
    await pool.acquire(new AbortController().signal);
    const waiting = pool.acquire(new AbortController().signal);
    pool.close();
    await assert.rejects(waiting, (e: unknown) => e instanceof ServiceError && e.code === "server_shutting_down");
  });
});
