import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AsyncQueue } from "./async-queue.js";

describe("AsyncQueue", () => {
  it("delivers pushed items in order, before and after the consumer waits", async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    const seen: number[] = [];
    const consumer = (async () => {
      for await (const n of queue) seen.push(n);
    })();
    queue.push(2);
    await new Promise((r) => setImmediate(r));
    queue.push(3);
    queue.end();
    await consumer;
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it("drains buffered items, then throws the failure", async () => {
    const queue = new AsyncQueue<string>();
    queue.push("x");
    queue.fail(new Error("boom"));
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const s of queue) seen.push(s);
    }, /boom/);
    assert.deepEqual(seen, ["x"]);
  });
});
