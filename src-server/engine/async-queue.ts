/**
 * Push-to-pull adapter: the one place where callback-style producers (node-llama-cpp's
 * `onTextChunk`) become an async iterable. Buffers what the consumer has not taken yet.
 */
import { asError } from "../errors.js";

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  private ended = false;
  private failure: { error: unknown } | null = null;

  push(item: T): void {
    if (this.ended || this.failure) return;
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** No more items: the iterator finishes once the buffer is drained. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** The iterator throws `error` once the buffer is drained. */
  fail(error: unknown): void {
    this.failure = { error };
    this.wake();
  }

  get buffered(): number {
    return this.items.length;
  }

  private wake(): void {
    if (!this.waiting) return;
    const { resolve, reject } = this.waiting;
    this.waiting = null;
    if (this.failure) reject(asError(this.failure.error));
    else resolve({ value: undefined, done: true });
  }

  private next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.failure) return Promise.reject(asError(this.failure.error));
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}
