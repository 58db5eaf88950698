/** POST /v1/embeddings (= /v1/inference/embeddings). */
import { doc } from "../openapi/route-doc.js";
import { Router, type RequestHandler } from "express";
import type { EmbeddingsService } from "../../inference/embeddings-service.js";
import { requireScope } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import type { Trail } from "../audit-trail.js";
import { EmbeddingsRequestSchema, embeddingsObject, inputStrings } from "../wire/embeddings-wire.js";

export function embeddingsRoutes(embeddings: EmbeddingsService, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  const audit = trail("embeddings.create", { digest: { name: "input", of: (body) => body.input } });
  router.post(["/v1/embeddings", "/v1/inference/embeddings"], doc({ summary: "Embeddings (OpenAI)", tag: "Inference", body: EmbeddingsRequestSchema }), audit, requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, EmbeddingsRequestSchema);
    const inputs = inputStrings(body.input);
    const facts = res.locals.audit?.data ?? {};
    facts.inputs = inputs.length;
    // The inputs' tokens are reserved before embedding, with the model's own tokenizer.
    await res.locals.admission?.reserve(await embeddings.countTokens(body.model, inputs));
    const result = await embeddings.embed(body.model, inputs, res.locals.signal, body.dimensions);
    await res.locals.admission?.settle(result.promptTokens);
    Object.assign(facts, { model: result.model, prompt_tokens: result.promptTokens });
    res.json(embeddingsObject(result.model, result.vectors, body.encoding_format, result.promptTokens));
  });
  return router;
}
