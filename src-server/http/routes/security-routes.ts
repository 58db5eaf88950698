/** `GET /v1/admin/security`: the key provider in use, the audit and token signing keys, the transport (`workspaces.manage`). */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { AdminService } from "../../admin/admin-service.js";
import type { SecurityStatus } from "../../contract/index.js";
import { principalOf } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";

export function securityRoutes(admin: AdminService, status: () => Promise<SecurityStatus>, rotateTokenKey: () => Promise<{ kid: string; published: string[] }>, trail: Trail): Router {
  const router = Router();
  /** A new access-token signing key; the old ones keep verifying until the tokens they signed expire. */
  router.post("/v1/admin/oauth/rotate-signing-key", doc({ summary: "Rotate the OAuth token signing key", tag: "Administration" }), trail("oauth.rotate_key"), async (_req, res) => {
    admin.require(principalOf(res.locals), "workspaces.manage");
    const rotated = await rotateTokenKey();
    Object.assign(res.locals.audit?.data ?? {}, rotated);
    res.json({ object: "oauth.signing_key", ...rotated });
  });
  router.get("/v1/admin/security", doc({ summary: "Key provider, HSM and encryption status", tag: "Administration" }), async (_req, res) => {
    admin.require(principalOf(res.locals), "workspaces.manage");
    res.json(await status());
  });
  return router;
}
