/**
 * Coalescing of repeated audit events, so that a flood of identical events (a stranger
 * retrying bad keys) costs the append-only log a bounded number of entries instead of
 * one each. Events are grouped by a caller-chosen key:
 *
 * - the first event of a quiet key is written at once, as it is;
 * - repeats within the window that follows are only counted; when the window closes,
 *   they are written as one entry (the first repeat's facts plus `count`, `first_seen`,
 *   `last_seen`), and a new window opens; a window that closes with nothing counted
 *   forgets its key;
 * - `close()` writes every pending count, and at most `maxKeys` keys are tracked (the
 *   oldest window is closed early beyond that): counts are delayed, never lost.
 *
 * So a key costs at most one entry per window however fast it repeats, and a reader sums
 * `count` (absent = 1) to know how many events happened.
 */
import type { AuditEvent } from "./audit-service.js";

export interface AuditCoalescerOptions {
  /** Milliseconds a window lasts. Default 60 000. */
  windowMs?: number;
  /** Keys tracked at once; beyond it the oldest window is closed (written) early. Default 10 000. */
  maxKeys?: number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
  /** A write that failed when a window closed on its timer (nothing else may throw from a timer). */
  onError?: (error: unknown) => void;
}

interface Window {
  openedAt: number;
  /** The first repeat in this window (its facts are those written), if any. */
  sample: AuditEvent | undefined;
  count: number;
  firstAt: number;
  lastAt: number;
  lastRequestId: string | null;
}

export class AuditCoalescer {
  /** In the order the windows opened, which is also the order in which they close. */
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;

  constructor(
    private readonly write: (event: AuditEvent) => void,
    options: AuditCoalescerOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 60_000;
    this.maxKeys = Math.max(1, options.maxKeys ?? 10_000);
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => {});
  }

  /** Keys with an open window (diagnostics and tests). */
  get size(): number {
    return this.windows.size;
  }

  /** Writes `event` now when `key` is quiet; otherwise counts it into the key's open window. */
  record(key: string, event: AuditEvent): void {
    if (this.closed) {
      this.write(event);
      return;
    }
    const now = this.now();
    this.closeExpired(now);
    const open = this.windows.get(key);
    if (open) {
      open.sample ??= event;
      if (open.count === 0) open.firstAt = now;
      open.count += 1;
      open.lastAt = now;
      open.lastRequestId = event.requestId ?? null;
      return;
    }
    this.write(event);
    this.open(key, now);
    while (this.windows.size > this.maxKeys) {
      const [oldest, window] = this.windows.entries().next().value as [string, Window];
      this.windows.delete(oldest);
      this.emit(window);
    }
    this.schedule(now);
  }

  /** Writes every pending count and stops coalescing (later events are written as they come). Idempotent. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.closed = true;
    const pending = [...this.windows.values()];
    this.windows.clear();
    for (const window of pending) this.emit(window);
  }

  private open(key: string, now: number): void {
    this.windows.set(key, { openedAt: now, sample: undefined, count: 0, firstAt: now, lastAt: now, lastRequestId: null });
  }

  /** Closes the windows whose time is up: counted ones are written and reopened, empty ones forgotten. */
  private closeExpired(now: number): void {
    for (const [key, window] of this.windows) {
      if (now - window.openedAt < this.windowMs) break;
      this.windows.delete(key);
      if (window.count > 0) {
        this.emit(window);
        // Still busy: the next repeat is counted too, not written at once.
        this.open(key, now);
      }
    }
  }

  private emit(window: Window): void {
    if (window.count === 0 || !window.sample) return;
    const { sample } = window;
    this.write({
      ...sample,
      requestId: window.lastRequestId,
      data: { ...sample.data, count: window.count, first_seen: new Date(window.firstAt).toISOString(), last_seen: new Date(window.lastAt).toISOString() },
    });
  }

  /** One timer, for the oldest window; it never keeps the process alive (`close` writes what is left). */
  private schedule(now: number): void {
    if (this.timer || this.closed) return;
    const first = this.windows.values().next();
    if (first.done) return;
    const delay = Math.max(10, first.value.openedAt + this.windowMs - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const at = this.now();
      try {
        this.closeExpired(at);
      } catch (error) {
        this.onError(error);
      }
      this.schedule(at);
    }, delay);
    this.timer.unref();
  }
}
