/**
 * POST /v1/rerank (= /v1/reranking, llama.cpp's alias). llama-server's unversioned
 * `/rerank` and `/reranking` are not served: every route lives under `/v1/`, behind
 * authentication, and clients configured with `{base}/v1` reach `/v1/rerank` anyway.
 */
import { doc } from "../openapi/route-doc.js";
import { Router, type RequestHandler } from "express";
import type { RerankService } from "../../inference/rerank-service.js";
import { newId } from "../../ids.js";
import { requireScope } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import type { Trail } from "../audit-trail.js";
import { RerankRequestSchema, rerankInput, rerankObject } from "../wire/rerank-wire.js";

export function rerankRoutes(rerank: RerankService, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  // What was ranked is recorded only as the SHA-256 of {query, documents}, never as text.
  const audit = trail("rerank.create", { digest: { name: "input", of: (body) => ({ query: body.query, documents: body.documents }) } });
  router.post(["/v1/rerank", "/v1/reranking"], doc({ summary: "Rerank documents against a query (llama.cpp, Jina, Cohere shape)", tag: "Inference", body: RerankRequestSchema }), audit, requireScope("inference"), costly, async (req, res) => {
    const input = rerankInput(jsonBody(req, RerankRequestSchema));
    const facts = res.locals.audit?.data ?? {};
    facts.documents = input.documents.length;
    // The pairs' tokens are reserved before ranking, with the model's own tokenizer.
    await res.locals.admission?.reserve(await rerank.countTokens(input));
    const result = await rerank.rerank(input, res.locals.signal);
    await res.locals.admission?.settle(result.promptTokens);
    Object.assign(facts, { model: result.model, prompt_tokens: result.promptTokens });
    res.json(rerankObject(newId("rerank-"), result));
  });
  return router;
}
