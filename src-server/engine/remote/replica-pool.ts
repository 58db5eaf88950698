/**
 * Routing across the replicas of one remote model (upstream OpenAI-compatible servers such as
 * llama-server or vLLM): which replica takes a request attempt, how many requests each may
 * hold, who waits when all are full, and which replicas are kept out after errors.
 *
 * Pure logic: no HTTP. The caller reports each attempt's outcome through its lease and the
 * active health check's verdicts through `reportCheck`; the only timers are the waiters'
 * queue timeouts. Ejections are measured with the injected clock (`now`).
 *
 * Health, per replica:
 * - healthy: takes requests up to `maxInFlight`.
 * - ejected (passive): after `ejectAfterFailures` consecutive failed requests it is kept out for
 *   `baseEjectMs`, doubling with every further consecutive failure up to `maxEjectMs`. When the
 *   ejection has run out the replica is "half-open": it takes one request at a time (a probe);
 *   a success makes it healthy, a failure ejects it again for twice as long.
 * - down (active): the health check failed; kept out until a check passes.
 *
 * Failures of requests that were sent before the replica's latest change of health (its
 * ejection, or a verdict of the health check) are counted but do not escalate the backoff:
 * eight concurrent requests refused by one crashed server are one piece of evidence, not eight.
 */
import { asError, unavailable, type ServiceError } from "../../errors.js";

export interface ReplicaHealth {
  id: string;
  /** "healthy" | "ejected" (passive: errors/timeouts, with backoff) | "down" (the active health check failed) */
  state: "healthy" | "ejected" | "down";
  /** True while healthy only on probation: its ejection ran out and no request has succeeded since (one request at a time). */
  halfOpen: boolean;
  inFlight: number;
  /** Requests waiting for any replica of the model: the pool has one queue, so every replica shows the same number. */
  queued: number;
  /** Failures since the last success (or passing health check) that count towards ejection. */
  consecutiveFailures: number;
  /** Unix ms until which the replica is ejected, or null (not ejected, or the ejection has run out). */
  ejectedUntil: number | null;
  /** The latest error reported for the replica (a failed request or health check), or null. */
  lastError: string | null;
  /** Unix ms of the last active check, or null. */
  lastCheckedAt: number | null;
  /** Leases granted so far. */
  requests: number;
  /** Leases released with "failure" so far (health check verdicts are not counted). */
  failures: number;
}

export interface ReplicaPoolOptions {
  /** Most requests in flight on one replica; beyond it requests queue. */
  maxInFlight: number;
  /** Requests allowed to wait (all replicas at their cap); beyond it: 503 upstream_unavailable. 0: no queue. */
  maxQueued: number;
  /** Longest wait in the queue, ms (a real timer, not `now`); then 503 upstream_unavailable with Retry-After. Infinity: no limit. */
  queueTimeoutMs: number;
  /** First ejection lasts this long (ms), doubling per consecutive failure up to maxEjectMs. Defaults 1000 / 30000. */
  baseEjectMs?: number;
  maxEjectMs?: number;
  /** Consecutive failures before a replica is ejected (default 1: a connection refused or a timeout is reason enough). */
  ejectAfterFailures?: number;
  /** Affinity is honoured while the preferred replica has at most this many more requests in flight than the least loaded eligible one (default 2). */
  affinitySlack?: number;
  /** Affinity keys remembered (LRU), default 10000. 0: no affinity. */
  affinityEntries?: number;
  /** Clock, default Date.now. */
  now?: () => number;
  /** Name of the model, for error messages ("no replica of 'x' can take the request"). */
  model: string;
}

export interface ReplicaLease<R> {
  replica: R;
  /** Ends the lease: "success" clears the replica's failure count (and ends an ejection early); "failure" counts towards ejection with exponential backoff; "neutral" (client cancelled, 4xx caused by the request) changes no health. Idempotent. */
  release(outcome: "success" | "failure" | "neutral", error?: string): void;
}

export interface AcquireOptions {
  signal: AbortSignal;
  /** Keys from the most specific to the least (hashes of the prompt's prefixes). */
  affinity?: readonly string[];
  /** Replicas this request already failed on (ids). */
  exclude?: ReadonlySet<string>;
}

/** What the pool tracks of one replica. */
interface ReplicaState<R> {
  readonly replica: R;
  readonly index: number;
  inFlight: number;
  consecutiveFailures: number;
  /** Set while ejected and, once it has run out, while half-open (until a success or a passing check). */
  ejectedUntil: number | null;
  down: boolean;
  /** The outstanding probe of a half-open replica. */
  probe: object | null;
  /** Bumped at every change of health; a lease from an older generation reports stale evidence. */
  generation: number;
  lastError: string | null;
  lastErrorAt: number;
  lastCheckedAt: number | null;
  requests: number;
  failures: number;
}

interface Waiter<R> {
  affinity: readonly string[];
  exclude: ReadonlySet<string>;
  resolve: (lease: ReplicaLease<R>) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** The outcome of choosing: a replica, or why there is none now. */
type Choice<R> = { kind: "replica"; state: ReplicaState<R> } | { kind: "busy" } | { kind: "none" };

const NO_EXCLUSIONS: ReadonlySet<string> = new Set();
/** Retry-After when every replica is down per the health check (its next round may bring one back). */
const DOWN_RETRY_SECONDS = 5;
/** setTimeout fires at once beyond this (a 32-bit delay). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class ReplicaPool<R extends { id: string }> {
  private readonly replicas: ReplicaState<R>[];
  private readonly byId = new Map<string, ReplicaState<R>>();
  /** Affinity key → replica id, least recently set first. */
  private readonly affinity = new Map<string, string>();
  private readonly waiters: Waiter<R>[] = [];
  /** Where the round robin among equally loaded replicas starts next. */
  private cursor = 0;
  private closed = false;

  private readonly model: string;
  private readonly maxInFlight: number;
  private readonly maxQueued: number;
  private readonly queueTimeoutMs: number;
  private readonly baseEjectMs: number;
  private readonly maxEjectMs: number;
  private readonly ejectAfterFailures: number;
  private readonly affinitySlack: number;
  private readonly affinityEntries: number;
  private readonly now: () => number;

  /** Throws a RangeError on an empty list, duplicate ids or options out of range (configuration bugs). */
  constructor(replicas: R[], options: ReplicaPoolOptions) {
    this.model = options.model;
    this.maxInFlight = options.maxInFlight;
    this.maxQueued = options.maxQueued;
    this.queueTimeoutMs = options.queueTimeoutMs;
    this.baseEjectMs = options.baseEjectMs ?? 1000;
    this.maxEjectMs = options.maxEjectMs ?? Math.max(30_000, this.baseEjectMs);
    this.ejectAfterFailures = options.ejectAfterFailures ?? 1;
    this.affinitySlack = options.affinitySlack ?? 2;
    this.affinityEntries = options.affinityEntries ?? 10_000;
    this.now = options.now ?? Date.now;

    const where = `replica pool of '${this.model}'`;
    if (replicas.length === 0) throw new RangeError(`${where}: no replicas`);
    const atLeast = (name: string, value: number, min: number, integer = true): void => {
      if (!(value >= min) || (integer && !Number.isInteger(value))) throw new RangeError(`${where}: ${name} must be ${integer ? "an integer " : ""}>= ${min}, not ${value}`);
    };
    atLeast("maxInFlight", this.maxInFlight, 1);
    atLeast("maxQueued", this.maxQueued, 0);
    atLeast("queueTimeoutMs", this.queueTimeoutMs, 0, false);
    atLeast("baseEjectMs", this.baseEjectMs, 1, false);
    atLeast("maxEjectMs", this.maxEjectMs, this.baseEjectMs, false);
    atLeast("ejectAfterFailures", this.ejectAfterFailures, 1);
    atLeast("affinitySlack", this.affinitySlack, 0);
    atLeast("affinityEntries", this.affinityEntries, 0);

    this.replicas = replicas.map((replica, index) => ({
      replica,
      index,
      inFlight: 0,
      consecutiveFailures: 0,
      ejectedUntil: null,
      down: false,
      probe: null,
      generation: 0,
      lastError: null,
      lastErrorAt: -Infinity,
      lastCheckedAt: null,
      requests: 0,
      failures: 0,
    }));
    for (const state of this.replicas) {
      if (this.byId.has(state.replica.id)) throw new RangeError(`${where}: replica id '${state.replica.id}' appears twice`);
      this.byId.set(state.replica.id, state);
    }
  }

  /** Requests waiting for a replica. */
  get queued(): number {
    return this.waiters.length;
  }

  /**
   * A replica for one request attempt.
   * - Eligible: not ejected (or whose ejection has expired: then it is tried again, "half-open",
   *   one request at a time), not down, not in `exclude`, below maxInFlight.
   * - `affinity`: the first key remembered for an eligible replica whose inFlight is at most the
   *   least among eligible ones + affinitySlack wins; otherwise the least loaded, ties broken by
   *   round robin. The chosen replica is remembered for every key.
   * - All usable replicas at their cap: waits in a FIFO queue (maxQueued, queueTimeoutMs).
   * - No replica usable at all: rejects at once with 503 upstream_unavailable and a Retry-After
   *   (the earliest end of an ejection; 5 s when all are down; 1 s when only excluded). A waiter
   *   whose replicas all drop out while it waits is rejected the same way.
   * - `signal` aborted while waiting: rejects with the signal's reason and leaves the queue.
   */
  acquire(options: AcquireOptions): Promise<ReplicaLease<R>> {
    const { signal } = options;
    const affinity = options.affinity ?? [];
    const exclude = options.exclude ?? NO_EXCLUSIONS;
    if (this.closed) return Promise.reject(this.shuttingDown());
    if (signal.aborted) return Promise.reject(asError(signal.reason));
    // An ejection may have run out since the last event: serve the waiters first (FIFO).
    this.dispatch();
    const choice = this.choose(affinity, exclude);
    if (choice.kind === "replica") return Promise.resolve(this.grant(choice.state, affinity));
    if (choice.kind === "none") return Promise.reject(this.noReplica(exclude));
    if (this.waiters.length >= this.maxQueued) return Promise.reject(this.queueFull());
    return new Promise<ReplicaLease<R>>((resolve, reject) => {
      const waiter: Waiter<R> = {
        affinity,
        exclude,
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.leaveQueue(waiter);
          reject(asError(signal.reason));
        },
        timer: undefined,
      };
      if (Number.isFinite(this.queueTimeoutMs)) {
        waiter.timer = setTimeout(() => {
          this.leaveQueue(waiter);
          reject(this.queueTimeout());
        }, Math.min(this.queueTimeoutMs, MAX_TIMER_MS));
      }
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** The active health check's verdict: ok=true makes a down/ejected replica healthy again (failures reset) and wakes waiters; ok=false marks it down (kept out until a check passes). Throws on an unknown id. */
  reportCheck(id: string, ok: boolean, error?: string): void {
    const state = this.byId.get(id);
    if (!state) throw new RangeError(`replica pool of '${this.model}': no replica '${id}'`);
    const now = this.now();
    state.lastCheckedAt = now;
    if (ok) {
      if (state.down || state.ejectedUntil !== null || state.consecutiveFailures > 0) state.generation++;
      state.down = false;
      state.ejectedUntil = null;
      state.consecutiveFailures = 0;
      state.probe = null;
    } else {
      if (!state.down) state.generation++;
      state.down = true;
      this.noteError(state, error ?? "the health check failed", now);
    }
    this.dispatch();
  }

  /** Per replica, in the order given. */
  health(): ReplicaHealth[] {
    const now = this.now();
    return this.replicas.map((state) => {
      const ejected = this.isEjected(state, now);
      return {
        id: state.replica.id,
        state: state.down ? "down" : ejected ? "ejected" : "healthy",
        halfOpen: !state.down && this.isHalfOpen(state, now),
        inFlight: state.inFlight,
        queued: this.waiters.length,
        consecutiveFailures: state.consecutiveFailures,
        ejectedUntil: ejected ? state.ejectedUntil : null,
        lastError: state.lastError,
        lastCheckedAt: state.lastCheckedAt,
        requests: state.requests,
        failures: state.failures,
      };
    });
  }

  /** How many replicas are healthy now (not ejected, not down; half-open ones count). */
  healthyCount(): number {
    const now = this.now();
    return this.replicas.filter((state) => !state.down && !this.isEjected(state, now)).length;
  }

  /** Rejects every waiter (503 upstream_unavailable, "shutting down") and refuses new acquires. Leases out may still be released. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      this.forget(waiter);
      waiter.reject(this.shuttingDown());
    }
  }

  // ---- choosing ----

  private isEjected(state: ReplicaState<R>, now: number): boolean {
    return state.ejectedUntil !== null && now < state.ejectedUntil;
  }

  private isHalfOpen(state: ReplicaState<R>, now: number): boolean {
    return state.ejectedUntil !== null && now >= state.ejectedUntil;
  }

  /** The replica for a request now, or "busy" (some could take it but are full) or "none" (none could). */
  private choose(affinity: readonly string[], exclude: ReadonlySet<string>): Choice<R> {
    const now = this.now();
    const eligible: ReplicaState<R>[] = [];
    let usable = false;
    for (const state of this.replicas) {
      if (exclude.has(state.replica.id) || state.down || this.isEjected(state, now)) continue;
      usable = true;
      if (state.inFlight >= this.maxInFlight) continue;
      if (state.probe !== null && this.isHalfOpen(state, now)) continue;
      eligible.push(state);
    }
    if (eligible.length === 0) return usable ? { kind: "busy" } : { kind: "none" };

    const least = Math.min(...eligible.map((state) => state.inFlight));
    for (const key of affinity) {
      const id = this.affinity.get(key);
      const preferred = id === undefined ? undefined : eligible.find((state) => state.replica.id === id);
      if (preferred && preferred.inFlight <= least + this.affinitySlack) return { kind: "replica", state: preferred };
    }
    // Least outstanding; among equals the first at or after the round-robin cursor.
    const n = this.replicas.length;
    let best: ReplicaState<R> | undefined;
    for (const state of eligible) {
      if (state.inFlight !== least) continue;
      if (!best || (state.index - this.cursor + n) % n < (best.index - this.cursor + n) % n) best = state;
    }
    this.cursor = (best!.index + 1) % n;
    return { kind: "replica", state: best! };
  }

  /** Hands `state` out and remembers it for every affinity key. */
  private grant(state: ReplicaState<R>, affinity: readonly string[]): ReplicaLease<R> {
    state.inFlight++;
    state.requests++;
    const token = {};
    if (this.isHalfOpen(state, this.now())) state.probe = token;
    const generation = state.generation;
    if (this.affinityEntries > 0) {
      for (const key of affinity) {
        this.affinity.delete(key);
        this.affinity.set(key, state.replica.id);
      }
      for (const oldest of this.affinity.keys()) {
        if (this.affinity.size <= this.affinityEntries) break;
        this.affinity.delete(oldest);
      }
    }
    let released = false;
    return {
      replica: state.replica,
      release: (outcome, error) => {
        if (released) return;
        released = true;
        this.settle(state, token, generation, outcome, error);
      },
    };
  }

  // ---- outcomes ----

  private settle(state: ReplicaState<R>, token: object, generation: number, outcome: "success" | "failure" | "neutral", error: string | undefined): void {
    state.inFlight--;
    if (state.probe === token) state.probe = null;
    const now = this.now();
    if (outcome === "success") {
      if (state.ejectedUntil !== null) state.generation++;
      state.consecutiveFailures = 0;
      state.ejectedUntil = null;
      state.probe = null;
    } else if (outcome === "failure") {
      state.failures++;
      this.noteError(state, error ?? "the request failed", now);
      // Stale evidence (sent before the latest change of health) does not escalate the backoff.
      if (generation === state.generation) {
        state.consecutiveFailures++;
        if (state.consecutiveFailures >= this.ejectAfterFailures) {
          const doublings = state.consecutiveFailures - this.ejectAfterFailures;
          state.ejectedUntil = now + Math.min(this.maxEjectMs, this.baseEjectMs * 2 ** doublings);
          state.probe = null;
          state.generation++;
        }
      }
    }
    this.dispatch();
  }

  private noteError(state: ReplicaState<R>, error: string, now: number): void {
    state.lastError = error;
    state.lastErrorAt = now;
  }

  /** Serves, in FIFO order, every waiter that can be served now; rejects those no replica can ever take as things stand. */
  private dispatch(): void {
    for (let i = 0; i < this.waiters.length; ) {
      const waiter = this.waiters[i]!;
      const choice = this.choose(waiter.affinity, waiter.exclude);
      if (choice.kind === "busy") {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      this.forget(waiter);
      if (choice.kind === "replica") waiter.resolve(this.grant(choice.state, waiter.affinity));
      else waiter.reject(this.noReplica(waiter.exclude));
    }
  }

  private leaveQueue(waiter: Waiter<R>): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
    this.forget(waiter);
  }

  private forget(waiter: Waiter<R>): void {
    waiter.signal.removeEventListener("abort", waiter.onAbort);
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
  }

  // ---- errors ----

  /** 503 when no replica can take a request: why, the latest error, and when to retry. */
  private noReplica(exclude: ReadonlySet<string>): ServiceError {
    const now = this.now();
    let excluded = 0;
    let down = 0;
    let ejected = 0;
    let retryAfter = Infinity;
    let latest: ReplicaState<R> | undefined;
    for (const state of this.replicas) {
      if (state.down) retryAfter = Math.min(retryAfter, DOWN_RETRY_SECONDS);
      else if (this.isEjected(state, now)) retryAfter = Math.min(retryAfter, Math.max(1, Math.ceil((state.ejectedUntil! - now) / 1000)));
      else retryAfter = 1; // only excluded: a fresh request may use it at once
      if (exclude.has(state.replica.id)) excluded++;
      else if (state.down) down++;
      else ejected++;
      if (state.lastError !== null && (!latest || state.lastErrorAt > latest.lastErrorAt)) latest = state;
    }
    const total = this.replicas.length;
    const parts: string[] = [];
    const part = (count: number, singular: string, plural: string): void => {
      if (count > 0) parts.push(`${count}${parts.length === 0 ? ` of ${total}` : ""} ${count === 1 ? singular : plural}`);
    };
    part(excluded, "already failed this request", "already failed this request");
    part(ejected, "is failing", "are failing");
    part(down, "is down (health check failing)", "are down (health check failing)");
    const lastError = latest ? ` (last error: ${latest.lastError})` : "";
    const seconds = Number.isFinite(retryAfter) ? retryAfter : 1;
    return unavailable(`No replica of '${this.model}' can take the request: ${parts.join(", ")}${lastError}. Retry after ${seconds} s.`, "upstream_unavailable", seconds);
  }

  private queueFull(): ServiceError {
    return unavailable(
      `All replicas of '${this.model}' are busy (${this.maxInFlight} request${this.maxInFlight === 1 ? "" : "s"} each) and ${this.waiters.length} request${this.waiters.length === 1 ? " is" : "s are"} already waiting. Retry after 1 s.`,
      "upstream_unavailable",
      1,
    );
  }

  private queueTimeout(): ServiceError {
    const wait = this.queueTimeoutMs < 1000 ? `${this.queueTimeoutMs} ms` : `${Math.round(this.queueTimeoutMs / 100) / 10} s`;
    return unavailable(`No replica of '${this.model}' became free within ${wait}: all are busy. Retry after 1 s.`, "upstream_unavailable", 1);
  }

  private shuttingDown(): ServiceError {
    return unavailable(`The replicas of '${this.model}' are shutting down.`, "upstream_unavailable");
  }
}
