/** GET /v1/models and GET /v1/models/{id}. */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { ModelType } from "../../models/gguf-summary.js";
import type { InferenceEngine } from "../../engine/types.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import { principalOf, requireScope } from "../authenticate.js";
import { modelNames, modelObject } from "../wire/models-wire.js";

/** The configured default names per type (`svc-merlion-13b`, `svc-embed-1024`; no reranker is shipped: ""). */
export interface ModelDefaults {
  chat: string;
  embedding: string;
  rerank: string;
}

export function modelsRoutes(registry: ModelRegistry, defaults: ModelDefaults, startedAt: number, engine: Pick<InferenceEngine, "contextFor" | "upstreams">): Router {
  const router = Router();
  const isDefault = (name: string, type: ModelType) => registry.defaultName(type, defaults[type]) === name;
  // Where files lie on this machine is for its administrator; other keys see file names.
  const fullPath = (locals: Parameters<typeof principalOf>[0]) => principalOf(locals).scopes.has("workspaces.manage");
  router.get("/v1/models", doc({ summary: "Every model and alias (OpenAI), with type, context and what backs it", tag: "Models" }), requireScope("inference"), (_req, res) => {
    const full = fullPath(res.locals);
    res.json({ object: "list", data: modelNames(registry.entries).map(({ name, entry }) => modelObject(name, entry, startedAt, isDefault(name, entry.type), engine.contextFor(entry), full, engine.upstreams(entry))) });
  });
  router.get("/v1/models/{*id}", doc({ summary: "One model or alias", tag: "Models" }), requireScope("inference"), (req, res) => {
    const raw = (req.params as { id: string | string[] }).id;
    const name = Array.isArray(raw) ? raw.join("/") : raw;
    const entry = registry.resolve(name, "model");
    res.json(modelObject(name, entry, startedAt, isDefault(name, entry.type), engine.contextFor(entry), fullPath(res.locals), engine.upstreams(entry)));
  });
  return router;
}
