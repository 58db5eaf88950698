/**
 * Authentication for every /v1 route: a bearer API key (tools, the desktop app) or the
 * workbench's session cookie (browser mode), and per-route scope checks.
 */
import type { Request, RequestHandler } from "express";
import type { AdminService } from "../admin/admin-service.js";
import type { SessionService } from "../admin/session-service.js";
import type { Principal, Scope } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import { readSessionCookie } from "./session-cookie.js";

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

export function authenticate(admin: AdminService, sessions: SessionService): RequestHandler {
  return (req, res, next) => {
    const header = req.get("authorization");
    if (!header) {
      const session = readSessionCookie(req);
      if (session) {
        assertSameOrigin(req);
        res.locals.principal = sessions.authenticate(session);
        next();
        return;
      }
      next(new ServiceError("authentication", "Missing API key: send 'Authorization: Bearer <API_KEY>'.", { code: "missing_api_key" }));
      return;
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      next(new ServiceError("authentication", "Malformed Authorization header: expected 'Bearer <API_KEY>'.", { code: "invalid_authorization_header" }));
      return;
    }
    res.locals.principal = admin.authenticate(match[1]);
    next();
  };
}

/** Refuses (403) a key without `scope`. */
export function requireScope(scope: Scope): RequestHandler {
  return (_req, res, next) => {
    const principal = res.locals.principal;
    if (!principal?.scopes.has(scope)) {
      next(new ServiceError("permission", `this API key lacks the '${scope}' scope`, { code: "insufficient_scope" }));
      return;
    }
    next();
  };
}

/** The authenticated caller; routes behind `authenticate` always have one. */
export function principalOf(locals: { principal?: Principal }): Principal {
  if (!locals.principal) throw new ServiceError("authentication", "not authenticated", { code: "missing_api_key" });
  return locals.principal;
}
