/**
 * A fixed set of interchangeable resources (context sequences, embedding contexts)
 * handed out one caller at a time, with a bounded FIFO queue of waiters.
 */
import { asError, unavailable } from "../errors.js";

interface Waiter<T> {
  resolve: (item: T) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/** What a pool knows of a free item when asked to choose (see `acquire`). */
export interface LeaseCandidate {
  /**
   * The item sits next to one that is leased, in the order the pool was given its items
   * (or nothing is leased): taking it keeps the leased items contiguous.
   */
  adjacent: boolean;
}

export class LeasePool<T> {
  private readonly free: T[];
  /** Each item's position in the list the pool was made with. */
  private readonly positions: Map<T, number>;
  private readonly waiters: Waiter<T>[] = [];
  private closed = false;
  /** How many items the pool holds in all. */
  readonly size: number;

  /**
   * @param items the resources; each is given to one holder at a time
   * @param maxQueued waiters allowed beyond the free items; more get 503 `server_busy`
   */
  constructor(
    items: T[],
    private readonly maxQueued: number,
    private readonly what = "model slot",
  ) {
    this.free = [...items];
    this.size = items.length;
    this.positions = new Map(items.map((item, i) => [item, i]));
  }

  get available(): number {
    return this.free.length;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Waits for a free item. Rejects with `signal.reason` when aborted while waiting.
   * `affinity` scores the free items (e.g. how much of a prompt a sequence already holds):
   * the best-scoring one is taken, ties going to the most recently returned. A waiter takes
   * whichever item is returned first.
   */
  acquire(signal: AbortSignal, affinity?: (item: T, candidate: LeaseCandidate) => number): Promise<T> {
    if (this.closed) return Promise.reject(unavailable(`the ${this.what} pool is shutting down`, "server_shutting_down"));
    if (signal.aborted) return Promise.reject(asError(signal.reason));
    if (affinity && this.free.length > 1) {
      const candidate = this.candidateInfo();
      let best = this.free.length - 1;
      let bestScore = affinity(this.free[best]!, candidate(this.free[best]!));
      for (let i = best - 1; i >= 0; i--) {
        const score = affinity(this.free[i]!, candidate(this.free[i]!));
        if (score > bestScore) [best, bestScore] = [i, score];
      }
      return Promise.resolve(this.free.splice(best, 1)[0]!);
    }
    const item = this.free.pop();
    if (item !== undefined) return Promise.resolve(item);
    if (this.waiters.length >= this.maxQueued) {
      return Promise.reject(unavailable(`all ${this.what}s are busy and ${this.waiters.length} requests are waiting; retry shortly`, "server_busy", 1));
    }
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(asError(signal.reason));
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** How each free item stands against the leased ones. */
  private candidateInfo(): (item: T) => LeaseCandidate {
    const leased = new Set<number>();
    const free = new Set(this.free);
    for (const [item, position] of this.positions) if (!free.has(item)) leased.add(position);
    return (item) => {
      const position = this.positions.get(item)!;
      return { adjacent: leased.size === 0 || leased.has(position - 1) || leased.has(position + 1) };
    };
  }

  /** Returns an item: the oldest waiter gets it, else it goes back to the free list. */
  release(item: T): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.resolve(item);
    } else {
      this.free.push(item);
    }
  }

  /** Rejects every waiter; later `acquire` calls fail. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.reject(unavailable(`the ${this.what} pool is shutting down`, "server_shutting_down"));
    }
  }
}
