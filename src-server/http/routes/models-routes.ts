/** GET /v1/models and GET /v1/models/{id}. */
import { Router } from "express";
import type { ModelRegistry } from "../../models/model-registry.js";
import { requireScope } from "../authenticate.js";
import { modelNames, modelObject } from "../wire/models-wire.js";

export function modelsRoutes(registry: ModelRegistry, startedAt: number): Router {
  const router = Router();
  router.get("/v1/models", requireScope("inference"), (_req, res) => {
    res.json({ object: "list", data: modelNames(registry.entries).map(({ name, entry }) => modelObject(name, entry, startedAt)) });
  });
  router.get("/v1/models/{*id}", requireScope("inference"), (req, res) => {
    const raw = (req.params as { id: string | string[] }).id;
    const name = Array.isArray(raw) ? raw.join("/") : raw;
    res.json(modelObject(name, registry.resolve(name, "model"), startedAt));
  });
  return router;
}
