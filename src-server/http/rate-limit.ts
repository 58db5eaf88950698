/**
 * Rate-limit headers on every authenticated response, and admission of costly
 * operations. `X-RateLimit-Limit/-Remaining/-Reset` describe the request limit closest to
 * running out (the key's or the workspace's; Reset in Unix seconds, when capacity next
 * frees up); OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` give both
 * kinds (the tighter scope of each), so existing clients back off on their own. Unlimited
 * tiers send none.
 */
import type { RequestHandler, Response } from "express";
import { RateLimitExceeded, type RateLimitService, type ScopedState } from "../admin/rate-limit-service.js";

/** "1s", "6m0s": OpenAI's duration format. */
export function openAiDuration(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m${seconds % 60}s` : `${seconds}s`;
}

function tightest(states: ScopedState[], kind: "requests" | "tokens"): { state: ScopedState; limit: number; remaining: number } | undefined {
  const rows = states
    .map((state) => {
      const limit = kind === "requests" ? state.limit.requestsPerMinute : state.limit.tokensPerMinute;
      const used = kind === "requests" ? state.usedRequests : state.usedTokens;
      return { state, limit, remaining: Math.max(0, limit - used) };
    })
    .filter((r) => r.limit > 0);
  return rows.sort((a, b) => a.remaining / a.limit - b.remaining / b.limit || a.remaining - b.remaining)[0];
}

/** Writes the rate-limit headers for `states`, unless the response has started. */
export function setRateLimitHeaders(res: Response, states: ScopedState[], now = Date.now()): void {
  if (res.headersSent) return;
  const requests = tightest(states, "requests");
  const tokens = tightest(states, "tokens");
  if (requests) {
    res.setHeader("X-RateLimit-Limit", String(requests.limit));
    res.setHeader("X-RateLimit-Remaining", String(requests.remaining));
    res.setHeader("X-RateLimit-Reset", String(Math.ceil(requests.state.nextFreeAt / 1000)));
    res.setHeader("x-ratelimit-limit-requests", String(requests.limit));
    res.setHeader("x-ratelimit-remaining-requests", String(requests.remaining));
    res.setHeader("x-ratelimit-reset-requests", openAiDuration(requests.state.resetAt - now));
  }
  if (tokens) {
    res.setHeader("x-ratelimit-limit-tokens", String(tokens.limit));
    res.setHeader("x-ratelimit-remaining-tokens", String(tokens.remaining));
    res.setHeader("x-ratelimit-reset-tokens", openAiDuration(tokens.state.resetAt - now));
  }
}

/** After authentication: every response tells the caller where its limits stand. */
export function rateLimitHeaders(rate: RateLimitService): RequestHandler {
  return async (_req, res, next) => {
    const principal = res.locals.principal;
    if (principal) setRateLimitHeaders(res, await rate.peek(principal));
    next();
  };
}

/** On costly routes (chat, embeddings, query, search, upload): counts the request or answers 429. */
export function costly(rate: RateLimitService): RequestHandler {
  return async (_req, res, next) => {
    const principal = res.locals.principal;
    if (!principal) {
      next();
      return;
    }
    try {
      const admission = await rate.admit(principal);
      setRateLimitHeaders(res, admission.states);
      res.locals.admission = admission;
      next();
    } catch (error) {
      if (error instanceof RateLimitExceeded) setRateLimitHeaders(res, error.states);
      next(error);
    }
  };
}
