import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { EmbedBatcher, type EmbedWorker } from "./embed-batcher.js";

/**
 * A worker that records each group it is given and answers when the test says so. Each
 * input is `[id, ...padding]`; its "vector" is `[id]`, so results can be traced to inputs.
 */
class ScriptedWorker implements EmbedWorker {
  readonly groups: number[][] = [];
  private pending: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  constructor(
    readonly sequences: number,
    readonly batchTokens: number,
    readonly maxInputTokens = 10_000,
  ) {}
  evaluate(inputs: Uint32Array[]): Promise<Float32Array[]> {
    this.groups.push(inputs.map((input) => input[0]!));
    return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject })).then(() => inputs.map((input) => Float32Array.of(input[0]!)));
  }
  /** Lets the oldest running evaluation finish (or fail) and waits for the batcher to react. */
  async finish(error?: Error): Promise<void> {
    await waitFor(() => this.pending.length > 0);
    const next = this.pending.shift()!;
    if (error) next.reject(error);
    else next.resolve();
    await new Promise((resolve) => setImmediate(resolve));
  }
  /** Finishes evaluations until `done` resolves. */
  async drain(done: Promise<unknown>): Promise<void> {
    let settled = false;
    void done.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled) await this.finish();
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(condition(), "condition never held");
}

/** Inputs with ids `from..from+count-1`, each `length` tokens long. */
function inputs(from: number, count: number, length = 1): Uint32Array[] {
  return Array.from({ length: count }, (_, i) => {
    const input = new Uint32Array(length);
    input[0] = from + i;
    return input;
  });
}

const ids = (vectors: Float32Array[]) => vectors.map((vector) => vector[0]);
const live = () => new AbortController().signal;

describe("EmbedBatcher", () => {
  it("evaluates many inputs together, within the sequence limit, and returns them in order", async () => {
    const worker = new ScriptedWorker(4, 100);
    const batcher = new EmbedBatcher([worker], 8);
    const result = batcher.embed(inputs(0, 10), live());
    await worker.drain(result);
    assert.deepEqual(ids(await result), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(worker.groups, [
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ]);
    assert.deepEqual(batcher.stats, { evaluations: 3, inputs: 10 });
  });

  it("keeps a group within its token budget, and evaluates an input longer than the budget alone", async () => {
    const worker = new ScriptedWorker(8, 10);
    const batcher = new EmbedBatcher([worker], 8);
    const result = batcher.embed([...inputs(0, 3, 4), ...inputs(3, 1, 25), ...inputs(4, 2, 5)], live());
    await worker.drain(result);
    assert.deepEqual(ids(await result), [0, 1, 2, 3, 4, 5]);
    // 4+4 fits in 10, the third 4 does not; the 25-token input goes alone.
    assert.deepEqual(worker.groups, [[0, 1], [2], [3], [4, 5]]);
  });

  it("lets a request that arrives later share the very next evaluation (requests take turns)", async () => {
    const worker = new ScriptedWorker(4, 100);
    const batcher = new EmbedBatcher([worker], 8);
    const ingestion = batcher.embed(inputs(0, 12), live());
    await waitFor(() => worker.groups.length === 1);
    const query = batcher.embed(inputs(100, 1), live());
    await worker.finish();
    // The query's one input is in the second evaluation, not after the ingestion's 12.
    assert.deepEqual(worker.groups[1], [4, 100, 5, 6]);
    await worker.finish();
    assert.deepEqual(ids(await query), [100]);
    await worker.drain(ingestion);
    assert.deepEqual(ids(await ingestion), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("runs an evaluation on every worker at once", async () => {
    const a = new ScriptedWorker(2, 100);
    const b = new ScriptedWorker(2, 100);
    const batcher = new EmbedBatcher([a, b], 8);
    const result = batcher.embed(inputs(0, 4), live());
    await waitFor(() => a.groups.length + b.groups.length === 2);
    assert.equal(batcher.available, 0);
    await a.finish();
    await b.finish();
    assert.deepEqual(ids(await result), [0, 1, 2, 3]);
    assert.equal(batcher.available, 4);
  });

  it("drops an aborted request's waiting inputs at once and rejects it with the abort reason", async () => {
    const worker = new ScriptedWorker(2, 100);
    const batcher = new EmbedBatcher([worker], 8);
    const controller = new AbortController();
    const aborted = batcher.embed(inputs(0, 6), controller.signal);
    const other = batcher.embed(inputs(100, 2), live());
    await waitFor(() => worker.groups.length === 1);
    controller.abort(new Error("client went away"));
    await assert.rejects(aborted, /client went away/);
    await worker.drain(other);
    assert.deepEqual(ids(await other), [100, 101]);
    // Nothing of the aborted request was evaluated after the abort.
    assert.deepEqual(worker.groups, [
      [0, 1],
      [100, 101],
    ]);
    assert.equal(batcher.queued, 0);
  });

  it("fails the requests of a failed evaluation and goes on with the others", async () => {
    const worker = new ScriptedWorker(1, 100);
    const batcher = new EmbedBatcher([worker], 8);
    const first = batcher.embed(inputs(0, 2), live());
    const second = batcher.embed(inputs(100, 1), live());
    const firstFails = assert.rejects(first, /decode failed/);
    await worker.finish(new Error("decode failed"));
    await firstFails;
    await worker.drain(second);
    assert.deepEqual(ids(await second), [100]);
    // The failed request's second input was never evaluated.
    assert.deepEqual(worker.groups, [[0], [100]]);
  });

  it("refuses requests beyond its queue with 503 server_busy, and inputs longer than a context", async () => {
    const worker = new ScriptedWorker(1, 100, 50);
    const batcher = new EmbedBatcher([worker], 1);
    const running = batcher.embed(inputs(0, 3), live());
    const waiting = batcher.embed(inputs(10, 1), live());
    await assert.rejects(batcher.embed(inputs(20, 1), live()), (error: unknown) => error instanceof ServiceError && error.code === "server_busy" && error.kind === "unavailable");
    await assert.rejects(batcher.embed(inputs(30, 1, 51), live()), /51 tokens/);
    await worker.drain(Promise.all([running, waiting]));
    assert.deepEqual(ids(await waiting), [10]);
    assert.deepEqual(await batcher.embed([], live()), []);
  });

  it("rejects waiting requests when closed, letting the running evaluation finish", async () => {
    const worker = new ScriptedWorker(1, 100);
    const batcher = new EmbedBatcher([worker], 8);
    const running = batcher.embed(inputs(0, 1), live());
    const waiting = batcher.embed(inputs(10, 1), live());
    await waitFor(() => worker.groups.length === 1);
    batcher.close();
    await assert.rejects(waiting, (error: unknown) => error instanceof ServiceError && error.code === "server_shutting_down");
    await worker.finish();
    assert.deepEqual(ids(await running), [0]);
    await assert.rejects(batcher.embed(inputs(20, 1), live()), (error: unknown) => error instanceof ServiceError && error.code === "server_shutting_down");
  });
});
