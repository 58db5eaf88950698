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

export class LeasePool<T> {
  private readonly free: T[];
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
  acquire(signal: AbortSignal, affinity?: (item: T) => number): Promise<T> {
    if (this.closed) return Promise.reject(unavailable(`the ${this.what} pool is shutting down`, "server_shutting_down"));
    if (signal.aborted) return Promise.reject(asError(signal.reason));
    if (affinity && this.free.length > 1) {
      let best = this.free.length - 1;
      let bestScore = affinity(this.free[best]!);
      for (let i = best - 1; i >= 0; i--) {
        const score = affinity(this.free[i]!);
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
