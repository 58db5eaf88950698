/**
 * Remote models through the admin API (`workspaces.manage`, checked by the service): list
 * with each replica's health, test a connection before adding, add (secrets sealed), test
 * again, remove. Every change is audited; secrets never enter the trail.
 */
import { Router } from "express";
import type { RemoteModelService } from "../../admin/remote-model-service.js";
import { principalOf } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { jsonBody } from "../json-body.js";
import { doc } from "../openapi/route-doc.js";
import { routeParam } from "../route-param.js";
import { CreateRemoteModelSchema, remoteModelInput, remoteModelObject, remoteModelTestObject } from "../wire/remote-models-wire.js";

export function remoteModelRoutes(remote: RemoteModelService, trail: Trail): Router {
  const router = Router();
  router.get("/v1/admin/remote-models", doc({ summary: "Remote models (configured and added) with each replica's health", tag: "Models" }), async (_req, res) => {
    res.json({ object: "list", data: (await remote.list(principalOf(res.locals))).map(remoteModelObject) });
  });
  router.post("/v1/admin/remote-models/test", doc({ summary: "Test the upstreams of a remote model before adding it", tag: "Models", body: CreateRemoteModelSchema }), trail("remote_model.test"), async (req, res) => {
    const input = remoteModelInput(jsonBody(req, CreateRemoteModelSchema));
    Object.assign(res.locals.audit?.data ?? {}, { model: input.id, upstreams: input.upstreams.map((u) => u.url) });
    res.json(remoteModelTestObject(await remote.test(principalOf(res.locals), input)));
  });
  router.post("/v1/admin/remote-models", doc({ summary: "Add a remote model served by upstream servers (secrets are sealed, never returned)", tag: "Models", body: CreateRemoteModelSchema, response: { status: 201 } }), trail("remote_model.create"), async (req, res) => {
    const input = remoteModelInput(jsonBody(req, CreateRemoteModelSchema));
    Object.assign(res.locals.audit?.data ?? {}, { model: input.id, upstreams: input.upstreams.map((u) => u.url), api_keys: input.upstreams.filter((u) => u.apiKey).length });
    res.status(201).json(remoteModelObject(await remote.create(principalOf(res.locals), input)));
  });
  router.post("/v1/admin/remote-models/:modelId/test", doc({ summary: "Test a remote model's upstreams now", tag: "Models" }), trail("remote_model.test", { params: ["modelId"] }), async (req, res) => {
    res.json(remoteModelTestObject(await remote.testExisting(principalOf(res.locals), routeParam(req, "modelId"))));
  });
  router.delete("/v1/admin/remote-models/:modelId", doc({ summary: "Remove a remote model added through the API", tag: "Models" }), trail("remote_model.delete", { params: ["modelId"] }), async (req, res) => {
    const id = routeParam(req, "modelId");
    await remote.remove(principalOf(res.locals), id);
    res.json({ id, object: "remote_model", deleted: true });
  });
  return router;
}
