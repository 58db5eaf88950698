/** Workspaces and their API keys under /v1/admin, with their rate-limit tiers; and /v1/me. Access rules live in the services. */
import { Router } from "express";
import type { AdminService } from "../../admin/admin-service.js";
import type { RateLimitService } from "../../admin/rate-limit-service.js";
import type { ApiKeyRecord } from "../../store/api-key-store.js";
import type { WorkspaceRecord } from "../../store/workspace-store.js";
import { principalOf } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import { parseWith } from "../validate.js";
import { CreateKeySchema, CreateWorkspaceSchema, PatchTierSchema, apiKeyObject, createdApiKeyObject, principalObject, workspaceObject } from "../wire/admin-wire.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";

export function adminRoutes(admin: AdminService, rate: RateLimitService): Router {
  const router = Router();
  const page = (query: unknown) => toPageRequest(parseWith(ListQuerySchema, query, "query string"));
  const workspace = (w: WorkspaceRecord) => workspaceObject(w, rate.tierOf(w.id));
  const key = (k: ApiKeyRecord) => apiKeyObject(k, rate.tierOf(k.id));

  router.post("/v1/admin/workspaces", (req, res) => {
    const body = jsonBody(req, CreateWorkspaceSchema);
    res.status(201).json(workspace(admin.createWorkspace(principalOf(res.locals), body.name)));
  });
  router.get("/v1/admin/workspaces", (req, res) => {
    const result = admin.listWorkspaces(principalOf(res.locals), page(req.query));
    res.json(listObject(result.data.map(workspace), result.hasMore));
  });
  router.get("/v1/admin/workspaces/:workspaceId", (req, res) => {
    res.json(workspace(admin.getWorkspace(principalOf(res.locals), req.params.workspaceId)));
  });
  /** Raising or lowering limits is the administrator's (`workspaces.manage`). */
  router.patch("/v1/admin/workspaces/:workspaceId", (req, res) => {
    const body = jsonBody(req, PatchTierSchema);
    const principal = principalOf(res.locals);
    const found = admin.getWorkspace(principal, req.params.workspaceId);
    admin.require(principal, "workspaces.manage");
    rate.assignTier(found.id, body.rate_limit_tier);
    res.json(workspace(found));
  });
  router.post("/v1/admin/workspaces/:workspaceId/api_keys", (req, res) => {
    const body = jsonBody(req, CreateKeySchema);
    const created = admin.createKey(principalOf(res.locals), req.params.workspaceId, { name: body.name, scopes: body.scopes, expiresInDays: body.expires_in_days });
    res.status(201).json(createdApiKeyObject(created.key, rate.tierOf(created.key.id), created.secret));
  });
  router.get("/v1/admin/workspaces/:workspaceId/api_keys", (req, res) => {
    const result = admin.listKeys(principalOf(res.locals), req.params.workspaceId, page(req.query));
    res.json(listObject(result.data.map(key), result.hasMore));
  });
  router.patch("/v1/admin/workspaces/:workspaceId/api_keys/:keyId", (req, res) => {
    const body = jsonBody(req, PatchTierSchema);
    const principal = principalOf(res.locals);
    const found = admin.getKey(principal, req.params.workspaceId, req.params.keyId);
    admin.require(principal, "workspaces.manage");
    rate.assignTier(found.id, body.rate_limit_tier);
    res.json(key(found));
  });
  router.delete("/v1/admin/workspaces/:workspaceId/api_keys/:keyId", (req, res) => {
    res.json(key(admin.revokeKey(principalOf(res.locals), req.params.workspaceId, req.params.keyId)));
  });
  /** Who am I: the caller's workspace, key, scopes and rate limits (used by the workbench). */
  router.get("/v1/me", (_req, res) => {
    const principal = principalOf(res.locals);
    res.json(principalObject(principal, rate.peek(principal)));
  });
  return router;
}
