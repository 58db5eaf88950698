/**
 * When to start the server again after it crashed: exponential backoff, a cap on
 * consecutive crashes (a crash loop ends in `failed` instead of burning the CPU), and
 * forgiveness once the server has run stably for a while.
 */

export interface RestartPolicyOptions {
  /** Delay before the first restart, in ms. Default 1000. */
  initialDelayMs: number;
  /** Longest delay between restarts, in ms. Default 30 000. */
  maxDelayMs: number;
  /** Consecutive crashes allowed; the next one gives up. Default 5. */
  maxRestarts: number;
  /** Running this long (ms since ready) counts as stable and clears the crash count. Default 60 000. */
  stableAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = { initialDelayMs: 1000, maxDelayMs: 30_000, maxRestarts: 5, stableAfterMs: 60_000 };

export class RestartPolicy {
  private readonly options: RestartPolicyOptions;
  private crashCount = 0;
  private readyAt: number | null = null;

  /** `now` returns milliseconds (injected so tests can drive a fake clock). */
  constructor(
    private readonly now: () => number,
    options: Partial<RestartPolicyOptions> = {},
  ) {
    this.options = { ...DEFAULT_RESTART_POLICY, ...options };
  }

  /** Crashes since the server last ran stably. */
  get crashes(): number {
    return this.crashCount;
  }

  /** The server reported ready: the stable-period clock starts. */
  markReady(): void {
    this.readyAt = this.now();
  }

  /**
   * Records a crash and returns the delay before the next start (ms), or null when the
   * cap is reached and the server should stay down.
   */
  onCrash(): number | null {
    if (this.readyAt !== null && this.now() - this.readyAt >= this.options.stableAfterMs) this.crashCount = 0;
    this.readyAt = null;
    this.crashCount += 1;
    if (this.crashCount > this.options.maxRestarts) return null;
    return Math.min(this.options.initialDelayMs * 2 ** (this.crashCount - 1), this.options.maxDelayMs);
  }

  /** Forgets past crashes (the user asked for a restart, or changed the settings). */
  reset(): void {
    this.crashCount = 0;
    this.readyAt = null;
  }
}
