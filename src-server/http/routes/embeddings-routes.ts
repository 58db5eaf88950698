/** POST /v1/embeddings (= /v1/inference/embeddings). */
import { Router } from "express";
import type { EmbeddingsService } from "../../inference/embeddings-service.js";
import { requireScope } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import { EmbeddingsRequestSchema, embeddingsObject, inputStrings } from "../wire/embeddings-wire.js";

export function embeddingsRoutes(embeddings: EmbeddingsService): Router {
  const router = Router();
  router.post(["/v1/embeddings", "/v1/inference/embeddings"], requireScope("inference"), async (req, res) => {
    const body = jsonBody(req, EmbeddingsRequestSchema);
    const inputs = inputStrings(body.input);
    const result = await embeddings.embed(body.model, inputs, res.locals.signal, body.dimensions);
    res.json(embeddingsObject(result.model, result.vectors, body.encoding_format, result.promptTokens));
  });
  return router;
}
