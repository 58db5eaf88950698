/**
 * Bearer authentication for every /v1 route, and per-route scope checks.
 */
import type { RequestHandler } from "express";
import type { AdminService } from "../admin/admin-service.js";
import type { Principal, Scope } from "../admin/scopes.js";
import { ServiceError } from "../errors.js";

export function authenticate(admin: AdminService): RequestHandler {
  return (req, res, next) => {
    const header = req.get("authorization");
    if (!header) {
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
