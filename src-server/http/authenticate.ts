/**
 * Authentication for every /v1 route: a bearer API key (tools, the desktop app) or the
 * workbench's session cookie (browser mode), and per-route scope checks.
 */
import type { Request, RequestHandler, Response } from "express";
import type { AdminService } from "../admin/admin-service.js";
import type { SessionService } from "../admin/session-service.js";
import type { Principal, Scope } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import { readSessionCookie } from "./session-cookie.js";
import type { AuditService } from "../audit/audit-service.js";
import { toWireError } from "./error-handler.js";
import { recordSafely } from "./audit-trail.js";
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

export function authenticate(admin: AdminService, sessions: SessionService, audit?: AuditService, tokens?: TokenAuthenticator): RequestHandler {
  const resolve = async (req: Request, res: Response): Promise<void> => {
    // Anthropic's clients send the key as `x-api-key`; it is the same key.
    const apiKeyHeader = req.get("x-api-key");
    const header = req.get("authorization") ?? (apiKeyHeader ? `Bearer ${apiKeyHeader}` : undefined);
    if (!header) {
      const session = readSessionCookie(req);
      if (session) {
        assertSameOrigin(req);
        res.locals.principal = sessions.authenticate(session);
        return;
      }
      throw new ServiceError("authentication", "Missing API key: send 'Authorization: Bearer <API_KEY>'.", { code: "missing_api_key" });
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new ServiceError("authentication", "Malformed Authorization header: expected 'Bearer <API_KEY>'.", { code: "invalid_authorization_header" });
    res.locals.principal = tokens && looksLikeJwt(match[1]) ? await tokens.authenticateToken(match[1]) : admin.authenticate(match[1]);
  };
  return (req, res, next) => {
    resolve(req, res).then(
      () => next(),
      (error: unknown) => {
        // Failed authentication is audited in the instance chain (the caller proved no workspace), by the key's public prefix at most.
        if (audit) {
          const secret = /^Bearer\s+(\S+)/i.exec(req.get("authorization") ?? "")?.[1] ?? req.get("x-api-key");
          const data = {
            reason: toWireError(error).body.error.code,
            key_prefix: secret?.startsWith(SECRET_MARKER) ? secret.slice(0, PREFIX_LENGTH) : null,
            method: req.method,
            path: req.path.slice(0, 200),
            remote: req.socket.remoteAddress ?? null,
          };
          recordSafely(audit, res, { type: "auth.failed", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: res.locals.requestId, data });
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
