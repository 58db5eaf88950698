/**
 * Backoff for failed authentication, per source address, in memory and bounded.
 *
 * A source that fails `maxFailures` times within `windowMs` is blocked for `baseBlockMs`;
 * each failure after that (the source is on probation) blocks it again for twice as long,
 * up to `maxBlockMs`. A blocked source is answered 429 without its key being checked,
 * so guessing gets no answer at all. A source is forgiven once it has been quiet for
 * `forgetAfterMs`.
 *
 * What keeps the owner of a blocked address working (the workbench and local tools share
 * 127.0.0.1 with whatever else runs there): a credential that already succeeded from the
 * source is let through a block. It is remembered only as a digest, and only after it
 * was accepted, so the exception answers no guess.
 *
 * IPv6 sources count by /64 (one host usually holds a whole /64); at most `maxSources`
 * sources are remembered, the least recently seen forgotten first, so a flood of
 * addresses cannot grow memory.
 */
import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";

export interface AuthThrottleOptions {
  /** Failures within `windowMs` after which a source is blocked. Default 10. */
  maxFailures?: number;
  /** Milliseconds over which failures are counted. Default 60 000. */
  windowMs?: number;
  /** The first block, in milliseconds; doubled for each failure after it. Default 1 000. */
  baseBlockMs?: number;
  /** The longest block, in milliseconds. Default 300 000 (5 minutes). */
  maxBlockMs?: number;
  /** Milliseconds without a failure after which a source starts afresh. Default 900 000 (15 minutes). */
  forgetAfterMs?: number;
  /** Sources remembered at once. Default 10 000. */
  maxSources?: number;
  /** Credentials remembered per source as having succeeded there. Default 4. */
  maxKnownGood?: number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
}

interface SourceState {
  failures: number;
  windowStart: number;
  /** Blocks so far (0 = not on probation). */
  strikes: number;
  blockedUntil: number;
  lastFailureAt: number;
  /** Digests of credentials that succeeded from this source, newest last. */
  knownGood: string[];
}

/** The address failures are counted by: IPv4 as is (also when mapped into IPv6), IPv6 by its /64. */
export function sourceOf(remoteAddress: string | undefined): string {
  if (!remoteAddress) return "unknown";
  const address = remoteAddress.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = "", tail = ""] = address.split("%")[0]!.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::") ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/** A short digest of a presented credential, by which a known-good one is recognised. */
export function credentialDigest(kind: string, secret: string): string {
  return createHash("sha256").update(`${kind}\0${secret}`, "utf8").digest("base64url").slice(0, 22);
}

export class AuthThrottle {
  private readonly sources = new Map<string, SourceState>();
  private readonly options: Required<Omit<AuthThrottleOptions, "now">>;
  private readonly now: () => number;

  constructor(options: AuthThrottleOptions = {}) {
    this.options = {
      maxFailures: options.maxFailures ?? 10,
      windowMs: options.windowMs ?? 60_000,
      baseBlockMs: options.baseBlockMs ?? 1_000,
      maxBlockMs: options.maxBlockMs ?? 300_000,
      forgetAfterMs: options.forgetAfterMs ?? 900_000,
      maxSources: Math.max(1, options.maxSources ?? 10_000),
      maxKnownGood: options.maxKnownGood ?? 4,
    };
    this.now = options.now ?? Date.now;
  }

  /** Sources remembered (diagnostics and tests). */
  get size(): number {
    return this.sources.size;
  }

  /** Milliseconds `source` must still wait before its credentials are checked again; 0 = go ahead. */
  retryAfterMs(source: string, digest?: string): number {
    const state = this.sources.get(source);
    if (!state) return 0;
    const wait = state.blockedUntil - this.now();
    if (wait <= 0 || (digest !== undefined && state.knownGood.includes(digest))) return 0;
    return wait;
  }

  /** Counts a failed authentication from `source` (one that presented a credential). */
  failed(source: string): void {
    const now = this.now();
    const state = this.touch(source, now);
    if (now - state.lastFailureAt >= this.options.forgetAfterMs) state.strikes = 0;
    if (now - state.windowStart >= this.options.windowMs) {
      state.windowStart = now;
      state.failures = 0;
    }
    state.failures += 1;
    state.lastFailureAt = now;
    if (state.strikes > 0 || state.failures >= this.options.maxFailures) {
      state.strikes += 1;
      state.blockedUntil = now + Math.min(this.options.baseBlockMs * 2 ** Math.min(state.strikes - 1, 30), this.options.maxBlockMs);
      state.failures = 0;
    }
  }

  /** Remembers that the credential with `digest` succeeded from `source`. */
  succeeded(source: string, digest: string): void {
    const state = this.touch(source, this.now());
    if (state.knownGood.includes(digest)) return;
    state.knownGood.push(digest);
    if (state.knownGood.length > this.options.maxKnownGood) state.knownGood.shift();
  }

  /** The source's state, made the most recently seen; the least recently seen beyond the cap are forgotten. */
  private touch(source: string, now: number): SourceState {
    let state = this.sources.get(source);
    if (state) this.sources.delete(source);
    else state = { failures: 0, windowStart: now, strikes: 0, blockedUntil: 0, lastFailureAt: Number.NEGATIVE_INFINITY, knownGood: [] };
    this.sources.set(source, state);
    while (this.sources.size > this.options.maxSources) this.sources.delete(this.sources.keys().next().value!);
    return state;
  }
}
