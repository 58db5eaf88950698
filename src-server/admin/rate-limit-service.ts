/**
 * Rate limits per workspace and per key at once (spec: 60 requests and 100,000 tokens a
 * minute by default): a request is admitted only if its key (or session, or service
 * account) and its workspace both have room. Costly operations take a request when they
 * start and reserve their tokens before running (prompt + completion limit, or the
 * inputs' tokens), settled to the real count afterwards. Limits come from named tiers
 * (configuration), assigned per workspace and per key by an administrator.
 */
import type { Principal } from "../domain/scopes.js";
import { invalidRequest, ServiceError } from "../errors.js";
import type { BucketState, Limit, RateLimitLedger } from "../store/rate-limit-store.js";

export interface RateLimitOptions {
  /** Named tiers; each limit 0 = unlimited. */
  tiers: Record<string, Limit>;
  /** The tier of a workspace or key without one of its own. */
  defaultTier: string;
  /** Unix ms; tests pass their own clock. */
  now?: () => number;
  /** A settlement that could not be written (the server logs it). */
  onError?: (error: unknown) => void;
}

export interface ScopedState extends BucketState {
  scope: "key" | "workspace";
  tier: string;
}

/** Thrown with the buckets' state, so the response still carries the rate-limit headers. */
export class RateLimitExceeded extends ServiceError {
  constructor(
    message: string,
    retryAfterSeconds: number,
    readonly states: ScopedState[],
  ) {
    super("rate_limit", message, { code: "rate_limit_exceeded", retryAfterSeconds });
  }
}

/** One admitted operation: its request is counted; tokens are reserved and settled through it. */
export class Admission {
  /** Ledger entries of each reservation (one entry per scope). */
  private reservations: number[][] = [];

  constructor(
    private readonly service: RateLimitService,
    private readonly principal: Principal,
    public states: ScopedState[],
  ) {}

  /** Reserves `tokens` more before running; throws `RateLimitExceeded` (nothing reserved) when either scope lacks them. */
  async reserve(tokens: number): Promise<void> {
    if (tokens <= 0) return;
    const taken = await this.service.take(this.principal, { requests: 0, tokens });
    this.states = taken.states;
    this.reservations.push(taken.entries);
  }

  /**
   * Replaces what was reserved by what was really used (never refused: the work is done).
   * Once. Never rejects: the answer is already given, so a ledger that cannot be written
   * (the database restarting) is reported to the service's `onError` and the reservation
   * stands until it leaves the window.
   */
  async settle(tokensUsed: number): Promise<void> {
    const [first, ...rest] = this.reservations;
    this.reservations = [];
    try {
      if (!first) {
        if (tokensUsed > 0) await this.service.charge(this.principal, tokensUsed);
        return;
      }
      await this.service.settle(first, tokensUsed);
      for (const entries of rest) await this.service.settle(entries, 0);
    } catch (error) {
      this.service.reportError(error);
    }
  }
}

export class RateLimitService {
  private readonly now: () => number;

  constructor(
    private readonly ledger: RateLimitLedger,
    private readonly options: RateLimitOptions,
  ) {
    if (!options.tiers[options.defaultTier]) throw new Error(`the default rate-limit tier '${options.defaultTier}' is not among the tiers (${Object.keys(options.tiers).join(", ")})`);
    this.now = options.now ?? Date.now;
  }

  get tiers(): Readonly<Record<string, Limit>> {
    return this.options.tiers;
  }

  /** The key's and the workspace's buckets with their tiers. */
  async bucketsOf(principal: Principal): Promise<{ bucket: string; limit: Limit; scope: "key" | "workspace"; tier: string }[]> {
    const assigned = await this.ledger.tiersOf([principal.keyId, principal.workspaceId]);
    const known = (tier: string | undefined) => (tier && this.options.tiers[tier] ? tier : this.options.defaultTier);
    const keyTier = known(assigned.get(principal.keyId));
    const workspaceTier = known(assigned.get(principal.workspaceId));
    return [
      { bucket: `key:${principal.keyId}`, limit: this.options.tiers[keyTier]!, scope: "key", tier: keyTier },
      { bucket: `workspace:${principal.workspaceId}`, limit: this.options.tiers[workspaceTier]!, scope: "workspace", tier: workspaceTier },
    ];
  }

  /** Counts one request of a costly operation (chat, embeddings, query, search, upload), or throws 429. */
  async admit(principal: Principal): Promise<Admission> {
    return new Admission(this, principal, (await this.take(principal, { requests: 1, tokens: 0 })).states);
  }

  /** The state of both scopes, for headers and `GET /v1/me`. */
  async peek(principal: Principal): Promise<ScopedState[]> {
    const buckets = await this.bucketsOf(principal);
    return (await this.ledger.peek(buckets, this.now())).map((s, i) => ({ ...s, scope: buckets[i]!.scope, tier: buckets[i]!.tier }));
  }

  /** Assigns a named tier to a workspace or key (null: back to the default). */
  async assignTier(subject: string, tier: string | null): Promise<void> {
    this.checkTier(tier);
    await this.ledger.setTier(subject, tier);
  }

  /** Throws 400 `unknown_tier` unless `tier` is null (the default) or a configured tier. */
  checkTier(tier: string | null): void {
    if (tier !== null && !this.options.tiers[tier]) throw invalidRequest(`unknown rate-limit tier '${tier}' (known: ${Object.keys(this.options.tiers).join(", ")})`, "unknown_tier", "rate_limit_tier");
  }

  async tierOf(subject: string): Promise<string> {
    const tier = await this.ledger.tierOf(subject);
    return tier && this.options.tiers[tier] ? tier : this.options.defaultTier;
  }

  /** @internal Takes `cost` in both scopes or throws `RateLimitExceeded`. */
  async take(principal: Principal, cost: { requests: number; tokens: number }): Promise<{ states: ScopedState[]; entries: number[] }> {
    const buckets = await this.bucketsOf(principal);
    const result = await this.ledger.take(buckets, cost, this.now());
    const states = result.buckets.map((s, i) => ({ ...s, scope: buckets[i]!.scope, tier: buckets[i]!.tier }));
    if (!result.admitted) {
      const full = states.find((s) => (s.limit.requestsPerMinute > 0 && s.usedRequests + cost.requests > s.limit.requestsPerMinute) || (s.limit.tokensPerMinute > 0 && s.usedTokens + cost.tokens > s.limit.tokensPerMinute));
      const what = cost.tokens > 0 && full && full.limit.tokensPerMinute > 0 && full.usedTokens + cost.tokens > full.limit.tokensPerMinute ? `${full.limit.tokensPerMinute} tokens` : `${full?.limit.requestsPerMinute ?? 0} requests`;
      const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      const tooBig = full && cost.tokens > full.limit.tokensPerMinute && full.limit.tokensPerMinute > 0;
      throw new RateLimitExceeded(
        tooBig
          ? `this request needs ${cost.tokens} tokens, more than the ${full.scope}'s whole limit of ${full.limit.tokensPerMinute} a minute; lower max_tokens or the input`
          : `rate limit reached: the ${full?.scope ?? "key"} may use ${what} a minute; retry in ${seconds} s`,
        seconds,
        states,
      );
    }
    return { states, entries: result.entries };
  }

  /** @internal */
  reportError(error: unknown): void {
    this.options.onError?.(error);
  }

  /** @internal */
  settle(entries: number[], tokens: number): Promise<void> {
    return this.ledger.settle(entries, tokens);
  }

  /** @internal Records tokens used without a reservation (never refused: the work is done). */
  async charge(principal: Principal, tokens: number): Promise<void> {
    // Nothing to check (never refused): the cost is recorded in both buckets, no tier needed.
    await this.ledger.record([`key:${principal.keyId}`, `workspace:${principal.workspaceId}`], { requests: 0, tokens }, this.now());
  }
}
