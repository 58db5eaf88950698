import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import { ReplicaPool, type ReplicaLease, type ReplicaPoolOptions } from "./replica-pool.js";

interface Upstream {
  id: string;
}

/** A clock the test moves by hand. */
function manualClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

function makePool(ids: string[], options: Partial<ReplicaPoolOptions> = {}): ReplicaPool<Upstream> {
  return new ReplicaPool(
    ids.map((id) => ({ id })),
    { model: "svc-merlion-13b", maxInFlight: 4, maxQueued: 10, queueTimeoutMs: 5_000, ...options },
  );
}

function take(pool: ReplicaPool<Upstream>, options: { affinity?: string[]; exclude?: string[]; signal?: AbortSignal } = {}): Promise<ReplicaLease<Upstream>> {
  return pool.acquire({
    signal: options.signal ?? new AbortController().signal,
    ...(options.affinity ? { affinity: options.affinity } : {}),
    ...(options.exclude ? { exclude: new Set(options.exclude) } : {}),
  });
}

/** Takes a lease and gives it straight back; the replica's id. */
async function touch(pool: ReplicaPool<Upstream>, options: { affinity?: string[]; exclude?: string[] } = {}): Promise<string> {
  const lease = await take(pool, options);
  lease.release("success");
  return lease.replica.id;
}

/** True once `promise` has settled (after the current microtasks have run). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** A rejection check: 503 upstream_unavailable, with the given Retry-After and message. */
function upstreamUnavailable(retryAfterSeconds: number | undefined, message?: RegExp | string) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ServiceError, `not a ServiceError: ${String(error)}`);
    assert.equal(error.kind, "unavailable");
    assert.equal(error.code, "upstream_unavailable");
    assert.equal(error.retryAfterSeconds, retryAfterSeconds);
    if (typeof message === "string") assert.equal(error.message, message);
    else if (message) assert.match(error.message, message);
    return true;
  };
}

function healthOf(pool: ReplicaPool<Upstream>, id: string) {
  const found = pool.health().find((h) => h.id === id);
  assert.ok(found, `no health for ${id}`);
  return found;
}

describe("ReplicaPool: choosing a replica", () => {
  it("sends each request to the replica with the fewest requests in flight", async () => {
    const pool = makePool(["a", "b", "c"]);
    const first = await Promise.all([take(pool), take(pool), take(pool)]);
    assert.deepEqual(first.map((l) => l.replica.id), ["a", "b", "c"]);
    const secondOnA = await take(pool);
    assert.equal(secondOnA.replica.id, "a");
    first[2].release("success"); // a 2, b 1, c 0
    assert.equal((await take(pool)).replica.id, "c", "the least loaded (round robin alone would pick b)");
    // a 2, b 1, c 1
    assert.equal((await take(pool)).replica.id, "b", "the first of the least loaded after c (round robin alone would pick a)");
    assert.equal((await take(pool)).replica.id, "c");
    assert.deepEqual(pool.health().map((h) => h.inFlight), [2, 2, 2]);
  });

  it("spreads equal load round robin", async () => {
    const pool = makePool(["a", "b", "c"]);
    const order: string[] = [];
    for (let i = 0; i < 7; i++) order.push(await touch(pool));
    assert.deepEqual(order, ["a", "b", "c", "a", "b", "c", "a"]);
  });

  it("follows affinity to the replica that served the prefix, and learns every key given", async () => {
    const pool = makePool(["a", "b", "c"]);
    assert.equal(await touch(pool, { affinity: ["p1"] }), "a");
    // Round robin would now pick b.
    assert.equal(await touch(pool, { affinity: ["p2", "p1"] }), "a", "the less specific key p1 leads to a");
    assert.equal(await touch(pool, { affinity: ["p2"] }), "a", "p2 was learnt for a");
    const held = await take(pool, { affinity: ["p1"] });
    assert.equal(held.replica.id, "a");
    assert.equal((await take(pool, { affinity: ["p1"] })).replica.id, "a", "1 more in flight than the least is within the slack (2)");
    assert.equal(await touch(pool, { affinity: ["unknown"] }), "b", "an unknown key: least loaded");
  });

  it("abandons affinity when the preferred replica is loaded beyond the slack, and re-learns it", async () => {
    const pool = makePool(["a", "b", "c"], { affinitySlack: 1, maxInFlight: 10 });
    const onA = [await take(pool, { affinity: ["k"] })];
    onA.push(await take(pool, { affinity: ["k"] }));
    assert.deepEqual(onA.map((l) => l.replica.id), ["a", "a"], "1 more than the least loaded: still within the slack");
    const moved = await take(pool, { affinity: ["k"] });
    assert.equal(moved.replica.id, "b", "a has 2 in flight, b 0: beyond the slack");
    for (const lease of onA) lease.release("success");
    // a 0, b 1, c 0: round robin would pick c, the old preference a.
    assert.equal((await take(pool, { affinity: ["k"] })).replica.id, "b", "k now leads to b");
  });

  it("falls back to a less specific key when the most specific one's replica is too loaded", async () => {
    const pool = makePool(["a", "b", "c"], { affinitySlack: 0 });
    const held = [await take(pool, { affinity: ["long"] }), await take(pool), await take(pool, { affinity: ["short"] })];
    assert.deepEqual(held.map((l) => l.replica.id), ["a", "b", "c"]);
    held.push(await take(pool, { affinity: ["long"] }));
    assert.equal(held[3]!.replica.id, "a", "equal load: affinity holds with no slack");
    // a 2, b 1, c 1: 'long' leads to a (too loaded), 'short' to c; round robin would pick b.
    assert.equal((await take(pool, { affinity: ["long", "short"] })).replica.id, "c");
  });

  it("abandons affinity for an ejected replica and keeps the new one after it recovers", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b", "c"], { now: clock.now });
    const lease = await take(pool, { affinity: ["k"] });
    assert.equal(lease.replica.id, "a");
    lease.release("failure", "read ETIMEDOUT");
    const moved = await take(pool, { affinity: ["k"] });
    assert.notEqual(moved.replica.id, "a");
    moved.release("success");
    clock.advance(1_000); // a's ejection is over
    assert.equal(healthOf(pool, "a").state, "healthy");
    assert.equal(await touch(pool, { affinity: ["k"] }), moved.replica.id, "k was re-learnt");
  });

  it("forgets the least recently used affinity keys beyond affinityEntries", async () => {
    const pool = makePool(["a", "b", "c"], { affinityEntries: 2 });
    assert.equal(await touch(pool, { affinity: ["k1"] }), "a");
    assert.equal(await touch(pool, { affinity: ["k2"] }), "b");
    assert.equal(await touch(pool, { affinity: ["k1"] }), "a", "k1 used again: now the most recent");
    assert.equal(await touch(pool, { affinity: ["k3"] }), "c", "k2, the least recent, is forgotten");
    assert.equal(await touch(pool), "a");
    assert.equal(await touch(pool, { affinity: ["k1"] }), "a", "k1 is still known (round robin would pick b)");
    assert.equal(await touch(pool), "b");
    assert.equal(await touch(pool, { affinity: ["k2"] }), "c", "k2 is forgotten (it led to b)");
  });

  it("keeps no affinity with affinityEntries 0", async () => {
    const pool = makePool(["a", "b"], { affinityEntries: 0 });
    assert.equal(await touch(pool, { affinity: ["k"] }), "a");
    assert.equal(await touch(pool, { affinity: ["k"] }), "b");
  });
});

describe("ReplicaPool: the queue", () => {
  it("caps requests per replica and wakes waiters in FIFO order on release", async () => {
    const pool = makePool(["a", "b"], { maxInFlight: 1 });
    const [onA, onB] = [await take(pool), await take(pool)];
    const order: string[] = [];
    const first = take(pool).then((l) => (order.push(`1:${l.replica.id}`), l));
    const second = take(pool).then((l) => (order.push(`2:${l.replica.id}`), l));
    assert.equal(pool.queued, 2);
    assert.deepEqual(pool.health().map((h) => h.queued), [2, 2]);
    assert.equal(await isSettled(first), false, "both replicas are at their cap");
    onB.release("success");
    const firstLease = await first;
    assert.equal(await isSettled(second), false, "one release wakes one waiter");
    onA.release("success");
    await second;
    assert.deepEqual(order, ["1:b", "2:a"]);
    assert.equal(pool.queued, 0);
    firstLease.release("success");
  });

  it("wakes the first waiter that can use the freed replica", async () => {
    const pool = makePool(["a", "b"], { maxInFlight: 1 });
    const [onA, onB] = [await take(pool), await take(pool)];
    const notA = take(pool, { exclude: ["a"] });
    const any = take(pool);
    onA.release("success");
    assert.equal((await any).replica.id, "a");
    assert.equal(await isSettled(notA), false, "a is excluded for the first waiter");
    onB.release("neutral");
    assert.equal((await notA).replica.id, "b");
  });

  it("refuses with 503 when the queue is full", async () => {
    const pool = makePool(["a"], { maxInFlight: 1, maxQueued: 1 });
    const held = await take(pool);
    const waiting = take(pool);
    await assert.rejects(take(pool), upstreamUnavailable(1, /All replicas of 'svc-merlion-13b' are busy \(1 request each\) and 1 request is already waiting/));
    assert.equal(pool.queued, 1);
    held.release("success");
    assert.equal((await waiting).replica.id, "a");

    const noQueue = makePool(["a"], { maxInFlight: 1, maxQueued: 0 });
    await take(noQueue);
    await assert.rejects(take(noQueue), upstreamUnavailable(1));
  });

  it("gives up after queueTimeoutMs with 503 and Retry-After", async () => {
    const pool = makePool(["a"], { maxInFlight: 1, queueTimeoutMs: 20 });
    const held = await take(pool);
    const started = Date.now();
    await assert.rejects(take(pool), upstreamUnavailable(1, "No replica of 'svc-merlion-13b' became free within 20 ms: all are busy. Retry after 1 s."));
    assert.ok(Date.now() - started >= 15, "waited for the timeout");
    assert.equal(pool.queued, 0);
    held.release("success");
    assert.equal(healthOf(pool, "a").inFlight, 0, "the timed-out waiter took nothing");
  });

  it("drops a waiter whose signal aborts, with the signal's reason", async () => {
    const pool = makePool(["a"], { maxInFlight: 1 });
    const held = await take(pool);
    const controller = new AbortController();
    const waiting = take(pool, { signal: controller.signal });
    controller.abort(new Error("client went away"));
    await assert.rejects(waiting, /client went away/);
    assert.equal(pool.queued, 0);
    held.release("success");
    assert.equal(healthOf(pool, "a").inFlight, 0, "the release went to nobody");
    assert.equal(healthOf(pool, "a").requests, 1);

    const aborted = new AbortController();
    aborted.abort(new Error("already gone"));
    await assert.rejects(take(pool, { signal: aborted.signal }), /already gone/);
    assert.equal(healthOf(pool, "a").requests, 1, "an aborted request is granted nothing");
  });

  it("rejects waiters and new requests once closed", async () => {
    const pool = makePool(["a"], { maxInFlight: 1 });
    const held = await take(pool);
    const waiting = take(pool);
    pool.close();
    await assert.rejects(waiting, upstreamUnavailable(undefined, /shutting down/));
    assert.equal(pool.queued, 0);
    await assert.rejects(take(pool), upstreamUnavailable(undefined, /shutting down/));
    held.release("success");
    assert.equal(healthOf(pool, "a").inFlight, 0, "leases still end after close");
  });
});

describe("ReplicaPool: excluded replicas", () => {
  it("retries elsewhere and refuses with 503 (Retry-After 1) when every replica is excluded", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now, ejectAfterFailures: 2 });
    const first = await take(pool);
    assert.equal(first.replica.id, "a");
    first.release("failure", "upstream returned 502");
    assert.equal(healthOf(pool, "a").state, "healthy", "one failure of two needed");
    assert.equal(await touch(pool), "b");
    assert.equal(await touch(pool, { exclude: ["a"] }), "b", "round robin would pick a");
    await assert.rejects(
      take(pool, { exclude: ["a", "b"] }),
      upstreamUnavailable(1, "No replica of 'svc-merlion-13b' can take the request: 2 of 2 already failed this request (last error: upstream returned 502). Retry after 1 s."),
    );
  });
});

describe("ReplicaPool: ejection", () => {
  it("ejects after a failure with exponential backoff, and recovers half-open", async () => {
    const clock = manualClock();
    const t0 = clock.now();
    const pool = makePool(["a", "b"], { now: clock.now, baseEjectMs: 1_000, maxEjectMs: 4_000 });
    const onlyA = { exclude: ["b"] };
    const fail = async (error: string): Promise<void> => (await take(pool, onlyA)).release("failure", error);

    await fail("connect ECONNREFUSED 127.0.0.1:8081");
    assert.deepEqual(
      { state: healthOf(pool, "a").state, until: healthOf(pool, "a").ejectedUntil, failures: healthOf(pool, "a").consecutiveFailures },
      { state: "ejected", until: t0 + 1_000, failures: 1 },
    );
    assert.equal(pool.healthyCount(), 1);
    await assert.rejects(
      take(pool, onlyA),
      upstreamUnavailable(1, "No replica of 'svc-merlion-13b' can take the request: 1 of 2 already failed this request, 1 is failing (last error: connect ECONNREFUSED 127.0.0.1:8081). Retry after 1 s."),
    );
    clock.advance(999);
    await assert.rejects(take(pool, onlyA), upstreamUnavailable(1), "1 ms of the ejection left");
    clock.advance(1);
    assert.deepEqual([healthOf(pool, "a").state, healthOf(pool, "a").halfOpen, healthOf(pool, "a").ejectedUntil], ["healthy", true, null]);
    assert.equal(pool.healthyCount(), 2);

    // Half-open probes that fail: twice as long each time, up to maxEjectMs.
    const expected = [2_000, 4_000, 4_000];
    for (const duration of expected) {
      await fail("read ETIMEDOUT");
      assert.equal(healthOf(pool, "a").ejectedUntil, clock.now() + duration);
      clock.advance(duration);
    }
    assert.equal(healthOf(pool, "a").consecutiveFailures, 4);

    // A successful probe makes it healthy; the next failure starts from the base again.
    (await take(pool, onlyA)).release("success");
    assert.deepEqual([healthOf(pool, "a").state, healthOf(pool, "a").halfOpen, healthOf(pool, "a").consecutiveFailures], ["healthy", false, 0]);
    await fail("read ETIMEDOUT");
    assert.equal(healthOf(pool, "a").ejectedUntil, clock.now() + 1_000);
  });

  it("lets a half-open replica take one request at a time until one succeeds", async () => {
    const clock = manualClock();
    const pool = makePool(["a"], { now: clock.now, maxInFlight: 4 });
    (await take(pool)).release("failure", "boom");
    clock.advance(1_000);
    const probe = await take(pool);
    const waiting = take(pool);
    assert.equal(await isSettled(waiting), false, "the probe is out");
    probe.release("neutral");
    const secondProbe = await waiting;
    assert.equal(healthOf(pool, "a").halfOpen, true, "a neutral outcome proves nothing");
    const stillWaiting = take(pool);
    assert.equal(await isSettled(stillWaiting), false);
    secondProbe.release("success");
    const afterSuccess = await stillWaiting;
    const concurrent = await take(pool);
    assert.deepEqual([afterSuccess.replica.id, concurrent.replica.id, healthOf(pool, "a").inFlight], ["a", "a", 2]);
  });

  it("does not escalate the backoff for failures of requests sent before the ejection", async () => {
    const clock = manualClock();
    const pool = makePool(["a"], { now: clock.now, maxInFlight: 4 });
    const leases = await Promise.all([take(pool), take(pool), take(pool)]);
    for (const lease of leases) lease.release("failure", "connect ECONNREFUSED");
    const a = healthOf(pool, "a");
    assert.deepEqual([a.ejectedUntil, a.consecutiveFailures, a.failures], [clock.now() + 1_000, 1, 3]);
  });

  it("ejects only after ejectAfterFailures consecutive failures; a success in between resets", async () => {
    const clock = manualClock();
    const pool = makePool(["a"], { now: clock.now, ejectAfterFailures: 3, baseEjectMs: 500 });
    const fail = async (): Promise<void> => (await take(pool)).release("failure", "HTTP 500");
    await fail();
    await fail();
    (await take(pool)).release("success");
    await fail();
    await fail();
    assert.equal(healthOf(pool, "a").state, "healthy", "2 consecutive failures, not 3");
    await fail();
    assert.deepEqual([healthOf(pool, "a").state, healthOf(pool, "a").ejectedUntil], ["ejected", clock.now() + 500]);
  });

  it("ends an ejection early when a request sent before it succeeds", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now });
    const [failing, slow] = [await take(pool, { exclude: ["b"] }), await take(pool, { exclude: ["b"] })];
    failing.release("failure", "read ETIMEDOUT");
    assert.equal(healthOf(pool, "a").state, "ejected");
    slow.release("success");
    assert.deepEqual([healthOf(pool, "a").state, healthOf(pool, "a").consecutiveFailures, pool.healthyCount()], ["healthy", 0, 2]);
    assert.equal(await touch(pool, { exclude: ["b"] }), "a");
  });

  it("tells the client to retry when the earliest ejection ends (ceil, in seconds)", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now, baseEjectMs: 2_500 });
    (await take(pool)).release("failure", "error on a");
    clock.advance(1_000);
    (await take(pool)).release("failure", "error on b");
    await assert.rejects(take(pool), upstreamUnavailable(2, "No replica of 'svc-merlion-13b' can take the request: 2 of 2 are failing (last error: error on b). Retry after 2 s."));
    clock.advance(600); // a: 900 ms left
    await assert.rejects(take(pool), upstreamUnavailable(1));
  });

  it("gives a replica whose ejection ran out to the oldest waiter before a newcomer", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now, maxInFlight: 1 });
    (await take(pool, { exclude: ["a"] })).release("failure", "HTTP 503");
    const held = await take(pool);
    assert.equal(held.replica.id, "a");
    const waiting = take(pool);
    clock.advance(1_000);
    const newcomer = take(pool);
    assert.equal((await waiting).replica.id, "b");
    assert.equal(await isSettled(newcomer), false, "the newcomer queues behind");
    held.release("success");
    assert.equal((await newcomer).replica.id, "a");
  });

  it("rejects a waiter whose every replica is ejected while it waits", async () => {
    const clock = manualClock();
    const pool = makePool(["a"], { now: clock.now, maxInFlight: 1 });
    const held = await take(pool);
    const waiting = take(pool);
    held.release("failure", "socket hang up");
    await assert.rejects(waiting, upstreamUnavailable(1, /1 of 1 is failing \(last error: socket hang up\)/));
    assert.equal(pool.queued, 0);
  });
});

describe("ReplicaPool: the active health check", () => {
  it("keeps a down replica out until a check passes", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now });
    pool.reportCheck("a", false, "GET /health: 503");
    const a = healthOf(pool, "a");
    assert.deepEqual([a.state, a.lastError, a.lastCheckedAt, a.failures], ["down", "GET /health: 503", clock.now(), 0]);
    assert.equal(pool.healthyCount(), 1);
    assert.deepEqual([await touch(pool), await touch(pool), await touch(pool)], ["b", "b", "b"]);
    clock.advance(60_000);
    assert.equal(healthOf(pool, "a").state, "down", "no time limit on down");
    pool.reportCheck("b", false);
    await assert.rejects(take(pool), upstreamUnavailable(5, "No replica of 'svc-merlion-13b' can take the request: 2 of 2 are down (health check failing) (last error: the health check failed). Retry after 5 s."));
    clock.advance(5);
    pool.reportCheck("a", true);
    assert.deepEqual([healthOf(pool, "a").state, healthOf(pool, "a").lastCheckedAt, pool.healthyCount()], ["healthy", clock.now(), 1]);
    assert.equal(await touch(pool), "a");
  });

  it("a request's success does not bring a down replica back", async () => {
    const pool = makePool(["a", "b"]);
    const lease = await take(pool);
    pool.reportCheck("a", false, "GET /health: connection refused");
    lease.release("success");
    assert.equal(healthOf(pool, "a").state, "down");
  });

  it("a passing check ends an ejection and resets the failures", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now });
    (await take(pool, { exclude: ["a"] })).release("failure", "HTTP 503");
    assert.equal(healthOf(pool, "b").state, "ejected");
    pool.reportCheck("b", true);
    const b = healthOf(pool, "b");
    assert.deepEqual([b.state, b.halfOpen, b.ejectedUntil, b.consecutiveFailures, b.failures], ["healthy", false, null, 0, 1]);
    assert.equal(await touch(pool, { exclude: ["a"] }), "b");
  });

  it("wakes a waiter when a replica comes back, and rejects one when its replicas go down", async () => {
    const pool = makePool(["a", "b"], { maxInFlight: 1 });
    pool.reportCheck("b", false, "down for maintenance");
    const held = await take(pool);
    const waiting = take(pool);
    assert.equal(await isSettled(waiting), false);
    pool.reportCheck("b", true);
    const woken = await waiting;
    assert.equal(woken.replica.id, "b");

    const queued = take(pool);
    pool.reportCheck("a", false, "GET /health: 500");
    assert.equal(await isSettled(queued), false, "b is still up, only busy");
    pool.reportCheck("b", false, "GET /health: timeout");
    await assert.rejects(queued, upstreamUnavailable(5, /2 of 2 are down/));
    held.release("success");
    woken.release("success");
  });

  it("throws on an unknown replica id", () => {
    const pool = makePool(["a"]);
    assert.throws(() => pool.reportCheck("zz", true), /no replica 'zz'/);
  });
});

describe("ReplicaPool: leases and counters", () => {
  it("ignores a second release of the same lease", async () => {
    const clock = manualClock();
    const pool = makePool(["a"], { now: clock.now, maxInFlight: 1, ejectAfterFailures: 2 });
    const lease = await take(pool);
    const first = take(pool);
    const second = take(pool);
    lease.release("failure", "HTTP 502");
    lease.release("failure", "HTTP 502");
    lease.release("success");
    const a = healthOf(pool, "a");
    assert.deepEqual([a.failures, a.consecutiveFailures, a.state, a.inFlight], [1, 1, "healthy", 1]);
    const woken = await first;
    assert.equal(await isSettled(second), false, "one release, one waiter");
    woken.release("success");
    (await second).release("success");
    assert.equal(healthOf(pool, "a").inFlight, 0);
  });

  it("counts requests, failures, in-flight and the last error per replica", async () => {
    const clock = manualClock();
    const pool = makePool(["a", "b"], { now: clock.now, ejectAfterFailures: 5 });
    const leases = await Promise.all([take(pool), take(pool), take(pool), take(pool), take(pool)]);
    leases[0].release("failure", "HTTP 500 from a");
    leases[1].release("neutral");
    leases[2].release("failure", "HTTP 502 from a");
    assert.deepEqual(pool.health(), [
      { id: "a", state: "healthy", halfOpen: false, inFlight: 1, queued: 0, consecutiveFailures: 2, ejectedUntil: null, lastError: "HTTP 502 from a", lastCheckedAt: null, requests: 3, failures: 2 },
      { id: "b", state: "healthy", halfOpen: false, inFlight: 1, queued: 0, consecutiveFailures: 0, ejectedUntil: null, lastError: null, lastCheckedAt: null, requests: 2, failures: 0 },
    ]);
    assert.equal(pool.healthyCount(), 2);
  });

  it("refuses configurations that cannot work", () => {
    assert.throws(() => makePool([]), /no replicas/);
    assert.throws(() => makePool(["a", "a"]), /'a' appears twice/);
    assert.throws(() => makePool(["a"], { maxInFlight: 0 }), /maxInFlight/);
    assert.throws(() => makePool(["a"], { maxQueued: -1 }), /maxQueued/);
    assert.throws(() => makePool(["a"], { baseEjectMs: 5_000, maxEjectMs: 1_000 }), /maxEjectMs/);
  });
});
