/**
 * Browser-mode sign-in: `POST /v1/session` trades the sign-in token (from the link's
 * fragment) for an HttpOnly session cookie; `DELETE /v1/session` signs out. Mounted
 * before authentication: signing in is how a browser gets credentials.
 */
import { doc } from "../openapi/route-doc.js";
import express, { Router } from "express";
import { z } from "zod";
import type { RateLimitService } from "../../admin/rate-limit-service.js";
import type { SessionService } from "../../admin/session-service.js";
import { nowSeconds } from "../../ids.js";
import { assertSameOrigin } from "../authenticate.js";
import { jsonBody, refuseDeepJson } from "../json-body.js";
import { clearSessionCookie, readSessionCookie, setSessionCookie } from "../session-cookie.js";
import { principalObject } from "../wire/admin-wire.js";
import { actorOf, type AuditService } from "../../audit/audit-service.js";
import { recordSafely } from "../audit-trail.js";

const SignInSchema = z.object({ token: z.string().min(1).max(256) }).strict();

export function sessionRoutes(sessions: SessionService, rate: RateLimitService, audit?: AuditService): Router {
  const router = Router();
  router.post("/v1/session", doc({ summary: "Browser mode: trade the sign-in token for a session cookie", tag: "Workbench", body: SignInSchema, public: true }), express.json({ limit: 4096, verify: refuseDeepJson }), async (req, res) => {
    assertSameOrigin(req);
    const { token } = jsonBody(req, SignInSchema);
    const started = await sessions.signIn(token, req.get("user-agent") ?? "");
    setSessionCookie(res, started.secret, started.expiresAt - nowSeconds());
    if (audit) {
      const principal = started.principal;
      recordSafely(audit, res, { type: "session.create", workspaceId: principal.workspaceId, actor: actorOf(principal), outcome: "success", requestId: res.locals.requestId, data: { expires_at: started.expiresAt, user_agent: (req.get("user-agent") ?? "").slice(0, 200) } });
    }
    res.status(201).json({ object: "session", expires_at: started.expiresAt, principal: principalObject(started.principal, await rate.peek(started.principal)) });
  });
  router.delete("/v1/session", doc({ summary: "Browser mode: sign out", tag: "Workbench", public: true }), async (req, res) => {
    assertSameOrigin(req);
    const secret = readSessionCookie(req);
    if (secret) await sessions.signOut(secret);
    clearSessionCookie(res);
    res.json({ object: "session.deleted", deleted: true });
  });
  return router;
}
