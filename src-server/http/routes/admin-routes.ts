/** Workspaces and their API keys under /v1/admin, with their rate-limit tiers; and /v1/me. Access rules live in the services. */
import { doc } from "../openapi/route-doc.js";
import { Router, type Response } from "express";
import type { AdminService } from "../../admin/admin-service.js";
import type { RateLimitService } from "../../admin/rate-limit-service.js";
import type { ApiKeyRecord } from "../../store/api-key-store.js";
import type { WorkspaceRecord } from "../../store/workspace-store.js";
import { principalOf } from "../authenticate.js";
import { routeParam } from "../route-param.js";
import type { Trail } from "../audit-trail.js";
import { jsonBody } from "../json-body.js";
import { parseWith } from "../validate.js";
import { CreateKeySchema, CreateWorkspaceSchema, PatchTierSchema, apiKeyObject, createdApiKeyObject, principalObject, workspaceObject } from "../wire/admin-wire.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";

export function adminRoutes(admin: AdminService, rate: RateLimitService, trail: Trail): Router {
  const router = Router();
  /** The facts of an administrative change, in the chain of the workspace it touched. */
  const facts = (res: Response, workspaceId: string, data: Record<string, unknown>) => {
    if (!res.locals.audit) return;
    res.locals.audit.workspaceId = workspaceId;
    Object.assign(res.locals.audit.data, data);
  };
  const page = (query: unknown) => toPageRequest(parseWith(ListQuerySchema, query, "query string"));
  const workspace = async (w: WorkspaceRecord) => workspaceObject(w, await rate.tierOf(w.id));
  const key = async (k: ApiKeyRecord) => apiKeyObject(k, await rate.tierOf(k.id));

  router.post("/v1/admin/workspaces", doc({ summary: "Create a workspace", tag: "Administration", body: CreateWorkspaceSchema, response: { status: 201 } }), trail("workspace.create"), async (req, res) => {
    const body = jsonBody(req, CreateWorkspaceSchema);
    const created = await admin.createWorkspace(principalOf(res.locals), body.name);
    facts(res, created.id, { workspace_id: created.id, name: created.name });
    res.status(201).json(await workspace(created));
  });
  router.get("/v1/admin/workspaces", doc({ summary: "List workspaces", tag: "Administration", query: ListQuerySchema }), async (req, res) => {
    const result = await admin.listWorkspaces(principalOf(res.locals), page(req.query));
    res.json(listObject(await Promise.all(result.data.map(workspace)), result.hasMore));
  });
  router.get("/v1/admin/workspaces/:workspaceId", doc({ summary: "One workspace", tag: "Administration" }), async (req, res) => {
    res.json(await workspace(await admin.getWorkspace(principalOf(res.locals), routeParam(req, "workspaceId"))));
  });
  /** Raising or lowering limits is the administrator's (`workspaces.manage`). */
  router.patch("/v1/admin/workspaces/:workspaceId", doc({ summary: "Change a workspace's rate-limit tier", tag: "Administration", body: PatchTierSchema }), trail("workspace.update", { params: ["workspaceId"] }), async (req, res) => {
    const body = jsonBody(req, PatchTierSchema);
    const principal = principalOf(res.locals);
    const found = await admin.getWorkspace(principal, routeParam(req, "workspaceId"));
    admin.require(principal, "workspaces.manage");
    await rate.assignTier(found.id, body.rate_limit_tier);
    facts(res, found.id, { rate_limit_tier: body.rate_limit_tier });
    res.json(await workspace(found));
  });
  router.post("/v1/admin/workspaces/:workspaceId/api_keys", doc({ summary: "Create an API key (the secret is shown once)", tag: "Administration", body: CreateKeySchema, response: { status: 201 } }), trail("api_key.create", { params: ["workspaceId"] }), async (req, res) => {
    const body = jsonBody(req, CreateKeySchema);
    const created = await admin.createKey(principalOf(res.locals), routeParam(req, "workspaceId"), { name: body.name, scopes: body.scopes, expiresInDays: body.expires_in_days });
    facts(res, created.key.workspaceId, { key_id: created.key.id, name: created.key.name, scopes: created.key.scopes, expires_at: created.key.expiresAt });
    res.status(201).json(createdApiKeyObject(created.key, await rate.tierOf(created.key.id), created.secret));
  });
  router.get("/v1/admin/workspaces/:workspaceId/api_keys", doc({ summary: "List a workspace's API keys", tag: "Administration", query: ListQuerySchema }), async (req, res) => {
    const result = await admin.listKeys(principalOf(res.locals), routeParam(req, "workspaceId"), page(req.query));
    res.json(listObject(await Promise.all(result.data.map(key)), result.hasMore));
  });
  router.patch("/v1/admin/workspaces/:workspaceId/api_keys/:keyId", doc({ summary: "Change an API key's rate-limit tier", tag: "Administration", body: PatchTierSchema }), trail("api_key.update", { params: ["workspaceId", "keyId"] }), async (req, res) => {
    const body = jsonBody(req, PatchTierSchema);
    const principal = principalOf(res.locals);
    const found = await admin.getKey(principal, routeParam(req, "workspaceId"), routeParam(req, "keyId"));
    admin.require(principal, "workspaces.manage");
    await rate.assignTier(found.id, body.rate_limit_tier);
    facts(res, found.workspaceId, { rate_limit_tier: body.rate_limit_tier });
    res.json(await key(found));
  });
  router.delete("/v1/admin/workspaces/:workspaceId/api_keys/:keyId", doc({ summary: "Revoke an API key", tag: "Administration" }), trail("api_key.revoke", { params: ["workspaceId", "keyId"] }), async (req, res) => {
    const revoked = await admin.revokeKey(principalOf(res.locals), routeParam(req, "workspaceId"), routeParam(req, "keyId"));
    facts(res, revoked.workspaceId, {});
    res.json(await key(revoked));
  });
  /** Who am I: the caller's workspace, key, scopes and rate limits (used by the workbench). */
  router.get("/v1/me", doc({ summary: "The calling key's workspace, scopes and limits", tag: "Administration" }), async (_req, res) => {
    const principal = principalOf(res.locals);
    res.json(principalObject(principal, await rate.peek(principal)));
  });
  return router;
}
