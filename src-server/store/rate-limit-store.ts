/**
 * Rate-limit accounting: a sliding one-minute log of what each bucket (a workspace, a
 * key) was admitted. `take` checks every bucket and records the cost in all of them in
 * one transaction, so concurrent requests are admitted exactly up to the limit; the log
 * lives in the store's database (SQLite, or Postgres shared by several replicas), so a
 * restart forgets nothing.
 */
import type { Sql, SqlDatabase } from "./sql-database.js";

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
  take(buckets: { bucket: string; limit: Limit }[], cost: { requests: number; tokens: number }, now: number): Promise<TakeResult>;
  /** Changes the tokens of recorded entries (a reservation settled to the real count). */
  settle(entries: number[], tokens: number): Promise<void>;
  /** The buckets' state without taking anything. */
  peek(buckets: { bucket: string; limit: Limit }[], now: number): Promise<BucketState[]>;
  /** Records a cost in the buckets without checking them (work already done). */
  record(buckets: readonly string[], cost: { requests: number; tokens: number }, now: number): Promise<void>;
  /** The named tier assigned to a workspace or key, if any. */
  tierOf(subject: string): Promise<string | undefined>;
  /** The tiers of several subjects (those without one are absent). */
  tiersOf(subjects: readonly string[]): Promise<Map<string, string>>;
  setTier(subject: string, tier: string | null): Promise<void>;
}

interface Usage {
  requests: number;
  tokens: number;
  oldest: number | null;
  newest: number | null;
}

/**
 * The ledger in the store's database. On Postgres each bucket is an advisory lock held for
 * the transaction, so replicas sharing the database admit exactly up to the limit.
 */
export class SqlRateLimitLedger implements RateLimitLedger {
  constructor(private readonly store: SqlDatabase) {}

  take(buckets: { bucket: string; limit: Limit }[], cost: { requests: number; tokens: number }, now: number): Promise<TakeResult> {
    return this.store.transaction(async (tx) => {
      await this.store.lock(
        tx,
        buckets.map((b) => `rate:${b.bucket}`),
      );
      const usage = await this.usage(tx, buckets.map((b) => b.bucket), now);
      let retryAfterMs = 0;
      for (const [i, b] of buckets.entries()) {
        const u = usage[i]!;
        const overRequests = b.limit.requestsPerMinute > 0 && u.requests + cost.requests > b.limit.requestsPerMinute;
        const overTokens = b.limit.tokensPerMinute > 0 && cost.tokens > 0 && u.tokens + cost.tokens > b.limit.tokensPerMinute;
        if (overRequests || overTokens) retryAfterMs = Math.max(retryAfterMs, await this.waitFor(tx, b.bucket, b.limit, cost, now, overRequests, overTokens));
      }
      const admitted = retryAfterMs === 0;
      const entries: number[] = [];
      if (admitted && buckets.length > 0) {
        const rows = await tx
          .insertInto("rate_limit_events")
          .values(buckets.map((b) => ({ bucket: b.bucket, at_ms: now, requests: cost.requests, tokens: cost.tokens })))
          .returning("id")
          .execute();
        entries.push(...rows.map((r) => Number(r.id)));
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
    });
  }

  async record(buckets: readonly string[], cost: { requests: number; tokens: number }, now: number): Promise<void> {
    if (buckets.length === 0) return;
    await this.store.db
      .insertInto("rate_limit_events")
      .values(buckets.map((bucket) => ({ bucket, at_ms: now, requests: cost.requests, tokens: cost.tokens })))
      .execute();
  }

  async settle(entries: number[], tokens: number): Promise<void> {
    if (entries.length === 0) return;
    await this.store.db
      .updateTable("rate_limit_events")
      .set({ tokens: Math.max(0, Math.round(tokens)) })
      .where("id", "in", entries)
      .execute();
  }

  async peek(buckets: { bucket: string; limit: Limit }[], now: number): Promise<BucketState[]> {
    const usage = await this.usage(this.store.db, buckets.map((b) => b.bucket), now, false);
    return buckets.map((b, i) => {
      const u = usage[i]!;
      return { bucket: b.bucket, limit: b.limit, usedRequests: u.requests, usedTokens: u.tokens, nextFreeAt: u.oldest === null ? now : u.oldest + WINDOW_MS, resetAt: u.newest === null ? now : u.newest + WINDOW_MS };
    });
  }

  async tierOf(subject: string): Promise<string | undefined> {
    const row = await this.store.db.selectFrom("rate_limit_tiers").select("tier").where("subject", "=", subject).executeTakeFirst();
    return row?.tier;
  }

  async setTier(subject: string, tier: string | null): Promise<void> {
    if (tier === null) await this.store.db.deleteFrom("rate_limit_tiers").where("subject", "=", subject).execute();
    else
      await this.store.db
        .insertInto("rate_limit_tiers")
        .values({ subject, tier })
        .onConflict((oc) => oc.column("subject").doUpdateSet({ tier }))
        .execute();
  }

  /** The named tiers of several subjects at once (one query: every request asks for its key's and its workspace's). */
  async tiersOf(subjects: readonly string[]): Promise<Map<string, string>> {
    if (subjects.length === 0) return new Map();
    const rows = await this.store.db.selectFrom("rate_limit_tiers").select(["subject", "tier"]).where("subject", "in", [...subjects]).execute();
    return new Map(rows.map((r) => [r.subject, r.tier]));
  }

  /** What each bucket used in the window ending now, in one query (inside `take`, older entries are dropped first). */
  private async usage(db: Sql, buckets: readonly string[], now: number, prune = true): Promise<Usage[]> {
    if (buckets.length === 0) return [];
    if (prune) await db.deleteFrom("rate_limit_events").where("bucket", "in", [...buckets]).where("at_ms", "<=", now - WINDOW_MS).execute();
    const rows = await db
      .selectFrom("rate_limit_events")
      .select((eb) => [
        "bucket",
        eb.fn.coalesce(eb.fn.sum<number>("requests"), eb.lit(0)).as("requests"),
        eb.fn.coalesce(eb.fn.sum<number>("tokens"), eb.lit(0)).as("tokens"),
        eb.fn.min<number | null>("at_ms").as("oldest"),
        eb.fn.max<number | null>("at_ms").as("newest"),
      ])
      .where("bucket", "in", [...buckets])
      .where("at_ms", ">", now - WINDOW_MS)
      .groupBy("bucket")
      .execute();
    const found = new Map(rows.map((r) => [r.bucket, r]));
    return buckets.map((bucket) => {
      const row = found.get(bucket);
      return row ? { requests: Number(row.requests), tokens: Number(row.tokens), oldest: row.oldest === null ? null : Number(row.oldest), newest: row.newest === null ? null : Number(row.newest) } : { requests: 0, tokens: 0, oldest: null, newest: null };
    });
  }

  /** Ms until enough old entries leave the window for `cost` to fit (the cost alone above the limit: a full window). */
  private async waitFor(db: Sql, bucket: string, limit: Limit, cost: { requests: number; tokens: number }, now: number, overRequests: boolean, overTokens: boolean): Promise<number> {
    const rows = await db.selectFrom("rate_limit_events").select(["at_ms", "requests", "tokens"]).where("bucket", "=", bucket).where("at_ms", ">", now - WINDOW_MS).orderBy("at_ms").execute();
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
