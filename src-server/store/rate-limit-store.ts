/**
 * Rate-limit accounting: a sliding one-minute log of what each bucket (a workspace, a
 * key) was admitted. `take` checks every bucket and records the cost in all of them in
 * one transaction, so concurrent requests are admitted exactly up to the limit; the log
 * lives in SQLite, so a restart forgets nothing. `RateLimitLedger` is the interface a
 * shared store (Redis, for several servers) implements.
 */
import type { Database } from "./database.js";

export const WINDOW_MS = 60_000;

/** 0 means unlimited. */
export interface Limit {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

export interface BucketState {
  bucket: string;
  limit: Limit;
  /** Used in the last minute, this request included when admitted. */
  usedRequests: number;
  usedTokens: number;
  /** Unix ms when the oldest counted entry leaves the window (capacity frees up), or now when empty. */
  nextFreeAt: number;
  /** Unix ms when everything counted has left the window. */
  resetAt: number;
}

export interface TakeResult {
  admitted: boolean;
  buckets: BucketState[];
  /** Entry ids to settle later (one per bucket), when admitted. */
  entries: number[];
  /** When refused: ms until this cost would fit. */
  retryAfterMs: number;
}

export interface RateLimitLedger {
  /** Admits `cost` if every bucket has room for it, recording it in all of them; else records nothing. */
  take(buckets: { bucket: string; limit: Limit }[], cost: { requests: number; tokens: number }, now: number): TakeResult;
  /** Changes the tokens of recorded entries (a reservation settled to the real count). */
  settle(entries: number[], tokens: number): void;
  /** The buckets' state without taking anything. */
  peek(buckets: { bucket: string; limit: Limit }[], now: number): BucketState[];
  /** The named tier assigned to a workspace or key, if any. */
  tierOf(subject: string): string | undefined;
  setTier(subject: string, tier: string | null): void;
}

interface Usage {
  requests: number;
  tokens: number;
  oldest: number | null;
  newest: number | null;
}

export class SqliteRateLimitLedger implements RateLimitLedger {
  constructor(private readonly db: Database) {}

  take(buckets: { bucket: string; limit: Limit }[], cost: { requests: number; tokens: number }, now: number): TakeResult {
    return this.db.transaction(() => {
      const usage = buckets.map((b) => this.usage(b.bucket, now));
      let retryAfterMs = 0;
      buckets.forEach((b, i) => {
        const u = usage[i]!;
        const overRequests = b.limit.requestsPerMinute > 0 && u.requests + cost.requests > b.limit.requestsPerMinute;
        const overTokens = b.limit.tokensPerMinute > 0 && cost.tokens > 0 && u.tokens + cost.tokens > b.limit.tokensPerMinute;
        if (overRequests || overTokens) retryAfterMs = Math.max(retryAfterMs, this.waitFor(b.bucket, b.limit, cost, now, overRequests, overTokens));
      });
      const admitted = retryAfterMs === 0;
      const entries: number[] = [];
      if (admitted) {
        const insert = this.db.prepare("INSERT INTO rate_limit_events (bucket, at_ms, requests, tokens) VALUES (?, ?, ?, ?)");
        for (const b of buckets) entries.push(Number(insert.run(b.bucket, now, cost.requests, cost.tokens).lastInsertRowid));
      }
      const states = buckets.map((b, i) => {
        const u = usage[i]!;
        const requests = u.requests + (admitted ? cost.requests : 0);
        const tokens = u.tokens + (admitted ? cost.tokens : 0);
        const oldest = u.oldest ?? (admitted ? now : null);
        const newest = admitted ? now : u.newest;
        return { bucket: b.bucket, limit: b.limit, usedRequests: requests, usedTokens: tokens, nextFreeAt: oldest === null ? now : oldest + WINDOW_MS, resetAt: newest === null ? now : newest + WINDOW_MS };
      });
      return { admitted, buckets: states, entries, retryAfterMs };
    })();
  }

  settle(entries: number[], tokens: number): void {
    const update = this.db.prepare("UPDATE rate_limit_events SET tokens = ? WHERE id = ?");
    this.db.transaction(() => {
      for (const id of entries) update.run(Math.max(0, Math.round(tokens)), id);
    })();
  }

  peek(buckets: { bucket: string; limit: Limit }[], now: number): BucketState[] {
    return buckets.map((b) => {
      const u = this.usage(b.bucket, now);
      return { bucket: b.bucket, limit: b.limit, usedRequests: u.requests, usedTokens: u.tokens, nextFreeAt: u.oldest === null ? now : u.oldest + WINDOW_MS, resetAt: u.newest === null ? now : u.newest + WINDOW_MS };
    });
  }

  tierOf(subject: string): string | undefined {
    return (this.db.prepare("SELECT tier FROM rate_limit_tiers WHERE subject = ?").get(subject) as { tier: string } | undefined)?.tier;
  }

  setTier(subject: string, tier: string | null): void {
    if (tier === null) this.db.prepare("DELETE FROM rate_limit_tiers WHERE subject = ?").run(subject);
    else this.db.prepare("INSERT INTO rate_limit_tiers (subject, tier) VALUES (?, ?) ON CONFLICT(subject) DO UPDATE SET tier = excluded.tier").run(subject, tier);
  }

  /** What the bucket used in the window ending now (older entries are dropped first). */
  private usage(bucket: string, now: number): Usage {
    this.db.prepare("DELETE FROM rate_limit_events WHERE bucket = ? AND at_ms <= ?").run(bucket, now - WINDOW_MS);
    const row = this.db
      .prepare("SELECT COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(tokens), 0) AS tokens, MIN(at_ms) AS oldest, MAX(at_ms) AS newest FROM rate_limit_events WHERE bucket = ?")
      .get(bucket) as Usage;
    return row;
  }

  /** Ms until enough old entries leave the window for `cost` to fit (the cost alone above the limit: a full window). */
  private waitFor(bucket: string, limit: Limit, cost: { requests: number; tokens: number }, now: number, overRequests: boolean, overTokens: boolean): number {
    const rows = this.db.prepare("SELECT at_ms, requests, tokens FROM rate_limit_events WHERE bucket = ? ORDER BY at_ms").all(bucket) as { at_ms: number; requests: number; tokens: number }[];
    let requests = rows.reduce((n, r) => n + r.requests, 0);
    let tokens = rows.reduce((n, r) => n + r.tokens, 0);
    for (const r of rows) {
      const fits = (!overRequests || requests + cost.requests <= limit.requestsPerMinute) && (!overTokens || tokens + cost.tokens <= limit.tokensPerMinute);
      if (fits) break;
      requests -= r.requests;
      tokens -= r.tokens;
      if ((!overRequests || requests + cost.requests <= limit.requestsPerMinute) && (!overTokens || tokens + cost.tokens <= limit.tokensPerMinute)) return Math.max(1, r.at_ms + WINDOW_MS - now);
    }
    return WINDOW_MS;
  }
}
