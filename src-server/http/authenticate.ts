/**
 * Authentication for every /v1 route: a bearer API key (tools, the desktop app) or the
 * workbench's session cookie (browser mode), and per-route scope checks. Ambiguous
 * credentials are refused; failures are throttled per source and audited coalesced.
 */
import type { Request, RequestHandler, Response } from "express";
import type { AdminService } from "../admin/admin-service.js";
import type { SessionService } from "../admin/session-service.js";
import type { Principal, Scope } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import { readSessionCookie } from "./session-cookie.js";
import type { AuditService } from "../audit/audit-service.js";
import { toWireError } from "./error-handler.js";
import { recordCoalescedSafely } from "./audit-trail.js";
import { AuthThrottle, credentialDigest, sourceOf } from "./auth-throttle.js";
import { PREFIX_LENGTH, SECRET_MARKER } from "../security/secrets.js";
import { withScope } from "./openapi/route-doc.js";

/** Header the workbench sends with cookie-authenticated requests (a cross-origin page cannot without a preflight we never grant). */
export const CSRF_HEADER = "x-pustaka-csrf";

/**
 * Refuses a cookie-carrying request that a page of another origin could have made:
 * the browser marks it (`Sec-Fetch-Site`, `Origin`), or it lacks the workbench's header.
 */
export function assertSameOrigin(req: Request): void {
  const site = req.get("sec-fetch-site");
  const origin = req.get("origin");
  const crossSite = site !== undefined && site !== "same-origin" && site !== "none";
  const otherOrigin = origin !== undefined && origin !== `${req.protocol}://${req.get("host") ?? ""}`;
  if (crossSite || otherOrigin || req.get(CSRF_HEADER) !== "1") {
    throw new ServiceError("permission", "a session can only be used by the Pustaka workbench itself (same origin); other tools use an API key", { code: "cross_origin_request" });
  }
}

/** Verifies OAuth access tokens (service accounts). */
export interface TokenAuthenticator {
  authenticateToken(token: string): Promise<Principal>;
}

/** A JWT (three base64url parts, a JSON header): an OAuth access token rather than an API key. */
const looksLikeJwt = (token: string) => /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token) && token.length <= 8192;

/** What a request presents as its credential, read from its headers without checking it. */
export type PresentedCredential =
  | { kind: "bearer"; token: string }
  | { kind: "session"; secret: string }
  | { kind: "none" }
  /** Something was presented, but it cannot be used as it is (malformed or ambiguous). */
  | { kind: "unusable"; error: ServiceError };

/** How many times a header appears on the wire (Node keeps only the first of some, joins others). */
function headerCount(req: Request, name: string): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === name) count += 1;
  return count;
}

const ambiguous = (why: string) => new ServiceError("authentication", `Ambiguous credentials: ${why}. Send one key, as 'Authorization: Bearer <API_KEY>' or 'x-api-key'.`, { code: "ambiguous_credentials" });

/**
 * The credential a request presents: a bearer token (`Authorization`, or `x-api-key` as
 * Anthropic's clients send it; both may be sent when they carry the same key), else the
 * workbench's session cookie. Two different keys, or either header sent twice, are
 * refused rather than one of them picked.
 */
export function presentedCredential(req: Request): PresentedCredential {
  if (headerCount(req, "authorization") > 1) return { kind: "unusable", error: ambiguous("the Authorization header was sent more than once") };
  if (headerCount(req, "x-api-key") > 1) return { kind: "unusable", error: ambiguous("the x-api-key header was sent more than once") };
  const authorization = req.get("authorization") || undefined;
  const apiKey = req.get("x-api-key") || undefined;
  if (authorization !== undefined) {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    if (apiKey !== undefined && token !== apiKey) return { kind: "unusable", error: ambiguous("Authorization and x-api-key carry different keys") };
    if (!token) return { kind: "unusable", error: new ServiceError("authentication", "Malformed Authorization header: expected 'Bearer <API_KEY>'.", { code: "invalid_authorization_header" }) };
    return { kind: "bearer", token };
  }
  if (apiKey !== undefined) {
    if (!/^\S+$/.test(apiKey)) return { kind: "unusable", error: new ServiceError("authentication", "Malformed x-api-key header: expected the API key alone.", { code: "invalid_authorization_header" }) };
    return { kind: "bearer", token: apiKey };
  }
  const session = readSessionCookie(req);
  return session ? { kind: "session", secret: session } : { kind: "none" };
}

/** Refusals of a credential that is genuinely ours but no longer valid: a stale client, not a guess (no backoff). */
const STALE = new Set(["revoked_api_key", "expired_api_key", "expired_access_token", "service_account_disabled"]);

/** The key's public prefix, when what was presented looks like one of our keys. */
function keyPrefixOf(req: Request, presented: PresentedCredential): string | null {
  const secret = presented.kind === "bearer" ? presented.token : (/^Bearer\s+(\S+)/i.exec(req.get("authorization") ?? "")?.[1] ?? req.get("x-api-key"));
  return secret?.startsWith(SECRET_MARKER) ? secret.slice(0, PREFIX_LENGTH) : null;
}

/**
 * Authenticates every request it sees (a bearer key or OAuth token, or the workbench's
 * session) into `res.locals.principal`. Failures are audited in the instance chain,
 * repeats from one source coalesced into counted entries; a source that keeps failing is
 * answered 429 (`too_many_auth_failures`, with `Retry-After`) for a while without its
 * key being checked (see `AuthThrottle`).
 */
export function authenticate(admin: AdminService, sessions: SessionService, audit?: AuditService, tokens?: TokenAuthenticator, throttle: AuthThrottle = new AuthThrottle()): RequestHandler {
  const resolve = async (req: Request, res: Response, presented: PresentedCredential): Promise<void> => {
    switch (presented.kind) {
      case "unusable":
        throw presented.error;
      case "none":
        throw new ServiceError("authentication", "Missing API key: send 'Authorization: Bearer <API_KEY>'.", { code: "missing_api_key" });
      case "session":
        assertSameOrigin(req);
        res.locals.principal = await sessions.authenticate(presented.secret);
        return;
      case "bearer":
        res.locals.principal = tokens && looksLikeJwt(presented.token) ? await tokens.authenticateToken(presented.token) : await admin.authenticate(presented.token);
    }
  };
  return (req, res, next) => {
    const source = sourceOf(req.socket.remoteAddress);
    const presented = presentedCredential(req);
    const digest = presented.kind === "bearer" ? credentialDigest("bearer", presented.token) : presented.kind === "session" ? credentialDigest("session", presented.secret) : undefined;
    const waitMs = throttle.retryAfterMs(source, digest);
    const attempt =
      waitMs > 0
        ? Promise.reject(new ServiceError("rate_limit", "Too many failed authentication attempts from this address; retry later.", { code: "too_many_auth_failures", retryAfterSeconds: Math.ceil(waitMs / 1000) }))
        : resolve(req, res, presented);
    attempt.then(
      () => {
        if (digest !== undefined) throttle.succeeded(source, digest);
        next();
      },
      (error: unknown) => {
        const wire = toWireError(error);
        const reason = wire.body.error.code ?? "unknown";
        // Only a credential that was presented and not recognised is a guess; a missing or a stale one is not.
        if (waitMs === 0 && wire.status === 401 && presented.kind !== "none" && !STALE.has(reason)) throttle.failed(source);
        // Failed authentication is audited in the instance chain (the caller proved no workspace), by the key's public prefix at most.
        if (audit) {
          // While a source is blocked its keys are not looked at, so the prefixes it sends cannot multiply entries.
          const keyPrefix = waitMs > 0 ? null : keyPrefixOf(req, presented);
          const data = { reason, key_prefix: keyPrefix, method: req.method, path: req.path.slice(0, 200), remote: req.socket.remoteAddress ?? null };
          recordCoalescedSafely(audit, res, `auth.failed\0${source}\0${reason}\0${keyPrefix ?? ""}`, { type: "auth.failed", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: res.locals.requestId, data });
        }
        next(error);
      },
    );
  };
}

/** Refuses (403) a key without `scope`. */
export function requireScope(scope: Scope): RequestHandler {
  const check: RequestHandler = (_req, res, next) => {
    const principal = res.locals.principal;
    if (!principal?.scopes.has(scope)) {
      next(new ServiceError("permission", `this API key lacks the '${scope}' scope`, { code: "insufficient_scope" }));
      return;
    }
    next();
  };
  // The OpenAPI document reads the scope from the route's handlers.
  return withScope(check, scope);
}

/** The authenticated caller; routes behind `authenticate` always have one. */
export function principalOf(locals: { principal?: Principal }): Principal {
  if (!locals.principal) throw new ServiceError("authentication", "not authenticated", { code: "missing_api_key" });
  return locals.principal;
}
