/** Workspaces and their API keys under /v1/admin. Access rules live in AdminService. */
import { Router } from "express";
import type { AdminService } from "../../admin/admin-service.js";
import { principalOf } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import { parseWith } from "../validate.js";
import { CreateKeySchema, CreateWorkspaceSchema, apiKeyObject, createdApiKeyObject, principalObject, workspaceObject } from "../wire/admin-wire.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";

export function adminRoutes(admin: AdminService): Router {
  const router = Router();
  const page = (query: unknown) => toPageRequest(parseWith(ListQuerySchema, query, "query string"));

  router.post("/v1/admin/workspaces", (req, res) => {
    const body = jsonBody(req, CreateWorkspaceSchema);
    res.status(201).json(workspaceObject(admin.createWorkspace(principalOf(res.locals), body.name)));
  });
  router.get("/v1/admin/workspaces", (req, res) => {
    const result = admin.listWorkspaces(principalOf(res.locals), page(req.query));
    res.json(listObject(result.data.map(workspaceObject), result.hasMore));
  });
  router.get("/v1/admin/workspaces/:workspaceId", (req, res) => {
    res.json(workspaceObject(admin.getWorkspace(principalOf(res.locals), req.params.workspaceId)));
  });
  router.post("/v1/admin/workspaces/:workspaceId/api_keys", (req, res) => {
    const body = jsonBody(req, CreateKeySchema);
    const created = admin.createKey(principalOf(res.locals), req.params.workspaceId, { name: body.name, scopes: body.scopes, expiresInDays: body.expires_in_days });
    res.status(201).json(createdApiKeyObject(created.key, created.secret));
  });
  router.get("/v1/admin/workspaces/:workspaceId/api_keys", (req, res) => {
    const result = admin.listKeys(principalOf(res.locals), req.params.workspaceId, page(req.query));
    res.json(listObject(result.data.map(apiKeyObject), result.hasMore));
  });
  router.delete("/v1/admin/workspaces/:workspaceId/api_keys/:keyId", (req, res) => {
    res.json(apiKeyObject(admin.revokeKey(principalOf(res.locals), req.params.workspaceId, req.params.keyId)));
  });
  /** Who am I: the caller's workspace, key and scopes (used by the desktop UI). */
  router.get("/v1/me", (_req, res) => {
    res.json(principalObject(principalOf(res.locals)));
  });
  return router;
}
