/** /v1/admin/workspaces/{ws}/service_accounts: service accounts of a workspace (`keys.manage`). */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { RateLimitService } from "../../admin/rate-limit-service.js";
import type { ServiceAccountService } from "../../admin/service-account-service.js";
import type { AdminService } from "../../admin/admin-service.js";
import type { ServiceAccountRecord } from "../../store/service-account-store.js";
import { principalOf } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { jsonBody } from "../json-body.js";
import { routeParam } from "../route-param.js";
import { parseWith } from "../validate.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";
import { CreateServiceAccountSchema, PatchServiceAccountSchema, createdServiceAccountObject, serviceAccountObject } from "../wire/service-account-wire.js";

export function serviceAccountRoutes(accounts: ServiceAccountService, admin: AdminService, rate: RateLimitService, trail: Trail): Router {
  const router = Router();
  const base = "/v1/admin/workspaces/:workspaceId/service_accounts";
  const view = async (a: ServiceAccountRecord) => serviceAccountObject(a, await rate.tierOf(a.id));
  const facts = (res: { locals: Express.Locals }, a: ServiceAccountRecord, data: Record<string, unknown> = {}) => {
    if (!res.locals.audit) return;
    res.locals.audit.workspaceId = a.workspaceId;
    Object.assign(res.locals.audit.data, { service_account_id: a.id, ...data });
  };

  router.post(base, doc({ summary: "Create a service account (OAuth 2.0 client)", tag: "Administration", body: CreateServiceAccountSchema, response: { status: 201 } }), trail("service_account.create", { params: ["workspaceId"] }), async (req, res) => {
    const body = jsonBody(req, CreateServiceAccountSchema);
    const { account, secret } = await accounts.create(principalOf(res.locals), routeParam(req, "workspaceId"), { name: body.name, scopes: body.scopes, publicJwk: body.public_key });
    facts(res, account, { name: account.name, scopes: account.scopes, auth: secret ? "client_secret" : "private_key_jwt" });
    res.status(201).json(createdServiceAccountObject(account, await rate.tierOf(account.id), secret));
  });
  router.get(base, doc({ summary: "List a workspace's service accounts", tag: "Administration", query: ListQuerySchema }), async (req, res) => {
    const page = await accounts.list(principalOf(res.locals), routeParam(req, "workspaceId"), toPageRequest(parseWith(ListQuerySchema, req.query, "query string")));
    res.json(listObject(await Promise.all(page.data.map(view)), page.hasMore));
  });
  router.get(`${base}/:accountId`, doc({ summary: "One service account", tag: "Administration" }), async (req, res) => {
    res.json(await view(await accounts.get(principalOf(res.locals), routeParam(req, "workspaceId"), routeParam(req, "accountId"))));
  });
  router.patch(`${base}/:accountId`, doc({ summary: "Change a service account (name, scopes, key, tier, disabled)", tag: "Administration", body: PatchServiceAccountSchema }), trail("service_account.update", { params: ["workspaceId"] }), async (req, res) => {
    const body = jsonBody(req, PatchServiceAccountSchema);
    const principal = principalOf(res.locals);
    const workspaceId = routeParam(req, "workspaceId");
    const accountId = routeParam(req, "accountId");
    await accounts.get(principal, workspaceId, accountId);
    // Raising or lowering limits is the administrator's, as for keys; checked before anything is saved.
    if (body.rate_limit_tier !== undefined) {
      admin.require(principal, "workspaces.manage");
      rate.checkTier(body.rate_limit_tier);
    }
    const updated = await accounts.update(principal, workspaceId, accountId, { name: body.name, scopes: body.scopes, disabled: body.disabled, publicJwk: body.public_key });
    if (body.rate_limit_tier !== undefined) await rate.assignTier(updated.id, body.rate_limit_tier);
    facts(res, updated, { changed: Object.keys(body).sort(), disabled: updated.disabledAt !== null, scopes: updated.scopes });
    res.json(await view(updated));
  });
  router.post(`${base}/:accountId/secret`, doc({ summary: "Issue a new client secret (shown once)", tag: "Administration" }), trail("service_account.update", { params: ["workspaceId"] }), async (req, res) => {
    const { account, secret } = await accounts.rotateSecret(principalOf(res.locals), routeParam(req, "workspaceId"), routeParam(req, "accountId"));
    facts(res, account, { changed: ["client_secret"] });
    res.json(createdServiceAccountObject(account, await rate.tierOf(account.id), secret));
  });
  router.delete(`${base}/:accountId`, doc({ summary: "Delete a service account", tag: "Administration" }), trail("service_account.delete", { params: ["workspaceId"] }), async (req, res) => {
    const deleted = await accounts.delete(principalOf(res.locals), routeParam(req, "workspaceId"), routeParam(req, "accountId"));
    facts(res, deleted);
    res.json({ id: deleted.id, object: "service_account", deleted: true });
  });
  return router;
}
