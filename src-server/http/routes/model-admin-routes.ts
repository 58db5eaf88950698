/**
 * Getting models: the catalog with what is installed, background pulls with progress
 * events, and GGUF files on this machine bound by path. Pulls and files need the
 * administrator's `workspaces.manage` (the service checks); the catalog only `inference`.
 * Mounted before `/v1/models/{id}`, which would otherwise take these paths for model ids.
 */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { ModelPullService } from "../../admin/model-pull-service.js";
import { formatParameterCount } from "../../models/gguf-summary.js";
import { principalOf, requireScope } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import { routeParam } from "../route-param.js";
import { SseWriter } from "../sse.js";
import { CreatePullSchema, RegisterFileSchema, catalogModelObject, pullObject } from "../wire/models-wire.js";

export function modelAdminRoutes(pulls: ModelPullService): Router {
  const router = Router();
  router.get("/v1/models/catalog", doc({ summary: "The model catalog, with what is installed", tag: "Models" }), requireScope("inference"), (_req, res) => {
    res.json({ object: "list", data: pulls.catalog().map(catalogModelObject) });
  });
  router.post("/v1/models/pulls", doc({ summary: "Start downloading a model in the background", tag: "Models", body: CreatePullSchema, response: { status: 202 } }), (req, res) => {
    const body = jsonBody(req, CreatePullSchema);
    res.status(202).json(pullObject(pulls.start(principalOf(res.locals), "starter" in body ? { starter: true } : { model: body.model })));
  });
  router.get("/v1/models/pulls", doc({ summary: "List model downloads", tag: "Models" }), (_req, res) => {
    res.json({ object: "list", data: pulls.list(principalOf(res.locals)).map(pullObject) });
  });
  /** Every pull's state as it changes: a snapshot first, then updates, until the client leaves. */
  router.get("/v1/models/pulls/events", doc({ summary: "Model download progress as server-sent events", tag: "Models", response: { contentType: "text/event-stream" } }), async (_req, res) => {
    const principal = principalOf(res.locals);
    const snapshot = pulls.list(principal).map(pullObject);
    const sse = new SseWriter(res);
    await sse.send({ object: "model.pull.snapshot", data: snapshot });
    let chain = Promise.resolve();
    const unsubscribe = pulls.subscribe((pull) => {
      chain = chain.then(() => sse.send({ object: "model.pull.updated", pull: pullObject(pull) }));
    });
    const keepAlive = setInterval(() => void sse.comment("keep-alive"), 15_000);
    await new Promise<void>((resolve) => res.on("close", resolve));
    clearInterval(keepAlive);
    unsubscribe();
  });
  router.get("/v1/models/pulls/:pullId", doc({ summary: "One model download", tag: "Models" }), (req, res) => {
    res.json(pullObject(pulls.get(principalOf(res.locals), routeParam(req, "pullId"))));
  });
  router.delete("/v1/models/pulls/:pullId", doc({ summary: "Cancel a model download", tag: "Models" }), async (req, res) => {
    res.json(pullObject(await pulls.cancel(principalOf(res.locals), routeParam(req, "pullId"))));
  });
  router.post("/v1/models/files", doc({ summary: "Use a GGUF file on this machine as a model", tag: "Models", body: RegisterFileSchema, response: { status: 201 } }), async (req, res) => {
    const body = jsonBody(req, RegisterFileSchema);
    const entry = await pulls.registerFile(principalOf(res.locals), body.path, body.id, body.type);
    res.status(201).json({
      object: "model.file",
      id: entry.id,
      type: entry.type,
      aliases: entry.aliases,
      file: entry.gguf.path,
      architecture: entry.gguf.architecture,
      parameters: formatParameterCount(entry.gguf.parameters),
    });
  });
  return router;
}
