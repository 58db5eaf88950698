/** POST /v1/rag/corpora/{id}/query: grounded answers, streamed or not, always with citations. */
import { doc } from "../openapi/route-doc.js";
import { Router, type RequestHandler, type Response } from "express";
import type { FinishReason } from "../../engine/types.js";
import { newId, nowSeconds } from "../../ids.js";
import type { QueryService, StartedQuery } from "../../rag/answer/query-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import { streamError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { routeParam } from "../route-param.js";
import { SseWriter } from "../sse.js";
import type { Trail } from "../audit-trail.js";
import { ServiceError } from "../../errors.js";
import type { SearchTuningService } from "../../rag/search-tuning-service.js";
import { QuerySchema, SearchSchema, TuneSearchSchema, searchDefaultsObject, searchTuningObject, answerCitationsEvent, answerDeltaEvent, answerObject, fusionOf, rerankOf, searchResultObject, type AnswerEnding } from "../wire/rag-wire.js";

export function queryRoutes(queries: QueryService, tuning: SearchTuningService, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  const ending = (res: Response, started: StartedQuery, answer: string, completionTokens: number, finishReason: FinishReason): AnswerEnding => {
    const result: AnswerEnding = {
      ...queries.attribute(started, answer),
      promptTokens: (started.run?.promptTokens ?? 0) + started.queryTokens,
      completionTokens,
      finishReason,
    };
    Object.assign(res.locals.audit?.data ?? {}, {
      citations: result.citations.map((c) => ({ document_id: c.documentId, chunk_id: c.chunkId, cited: c.cited })),
      prompt_tokens: result.promptTokens,
      completion_tokens: completionTokens,
      grounded: started.fallback === null,
    });
    return result;
  };
  const auditQuery = trail("rag.query", { params: ["corpusId"], digest: { name: "question", of: (body) => body.question ?? body.query } });
  const auditTune = trail("rag.search.tune", { params: ["corpusId"], digest: { name: "questions", of: (body) => body.questions } });
  const auditSearch = trail("rag.search", { params: ["corpusId"], digest: { name: "query", of: (body) => body.query ?? body.question } });

  router.post("/v1/rag/corpora/:corpusId/query", doc({ summary: "Answer a question from a corpus, with mandatory citations", tag: "Grounded answers", body: QuerySchema, streams: true }), auditQuery, requireScope("rag.read"), requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, QuerySchema);
    const started = await queries.start(
      principalOf(res.locals),
      routeParam(req, "corpusId"),
      { question: body.question, topK: body.top_k, search: body.search, filter: body.filter, fusion: fusionOf(body.fusion), rerank: rerankOf(body.rerank), model: body.model, temperature: body.temperature, maxTokens: body.max_tokens },
      res.locals.signal,
    );
    if (res.locals.audit) res.locals.audit.data.model = started.model;
    // The question's embedding is done; the answer's most is reserved before it generates.
    const promptTokens = (started.run?.promptTokens ?? 0) + started.queryTokens;
    try {
      await res.locals.admission?.reserve(promptTokens + (started.run ? (body.max_tokens ?? started.run.contextSize - started.run.promptTokens) : 0));
    } catch (error) {
      await started.run?.events.return();
      throw error;
    }
    await started.run?.ready?.();
    let settled = false;
    const settle = (completionTokens: number) => {
      if (settled) return;
      settled = true;
      // A remote chat model's upstream counted the prompt itself (admission used an estimate).
      void res.locals.admission?.settle((started.run?.promptTokens ?? 0) + started.queryTokens + completionTokens);
    };
    res.on("close", () => settle(0));
    const id = newId("ans_");
    if (!body.stream) {
      const { answer, completionTokens, finishReason } = await queries.finish(started);
      settle(completionTokens);
      res.json(answerObject(id, started, answer, ending(res, started, answer, completionTokens, finishReason), nowSeconds()));
      return;
    }
    const sse = new SseWriter(res);
    sse.open();
    let answer = "";
    try {
      let completionTokens = 0;
      let finishReason: FinishReason = "stop";
      if (started.fallback !== null) {
        answer = started.fallback;
        await sse.send(answerDeltaEvent(id, answer));
      }
      if (started.run) {
        for await (const event of started.run.events) {
          if (sse.closed) break;
          if (event.type === "text") {
            answer += event.text;
            if (event.text) await sse.send(answerDeltaEvent(id, event.text));
          } else {
            completionTokens = event.completionTokens;
            finishReason = event.finishReason;
            if (event.promptTokens !== undefined) started.run.promptTokens = event.promptTokens;
          }
        }
      }
      settle(completionTokens);
      // The citation event ends the stream (spec: streamed queries end with it).
      await sse.send(answerCitationsEvent(id, started, ending(res, started, answer, completionTokens, finishReason)));
    } catch (error) {
      await sse.send(streamError(res, error));
    }
    sse.end();
  });
  /** Retrieval without generation: the chunks a query would cite, best first. */
  router.post("/v1/rag/corpora/:corpusId/search", doc({ summary: "Search a corpus: the passages a question would cite", tag: "Grounded answers", body: SearchSchema }), auditSearch, requireScope("rag.read"), costly, async (req, res) => {
    const body = jsonBody(req, SearchSchema);
    const found = await queries.retrieve(principalOf(res.locals), routeParam(req, "corpusId"), { question: body.query, topK: body.top_k, search: body.search, filter: body.filter, fusion: fusionOf(body.fusion), rerank: rerankOf(body.rerank) }, res.locals.signal);
    await res.locals.admission?.settle(found.queryTokens);
    Object.assign(res.locals.audit?.data ?? {}, { results: found.citations.map((c) => ({ document_id: c.documentId, chunk_id: c.chunkId })), prompt_tokens: found.queryTokens });
    res.json(searchResultObject(found));
  });
  /** Which search settings rank the corpus's own judged questions best; stored as its defaults with `apply`. */
  router.post(
    "/v1/rag/corpora/:corpusId/search/tune",
    doc({ summary: "Tune a corpus's search on questions whose answers are known", tag: "Grounded answers", body: TuneSearchSchema }),
    auditTune,
    requireScope("rag.read"),
    costly,
    async (req, res) => {
      const body = jsonBody(req, TuneSearchSchema);
      const principal = principalOf(res.locals);
      // Storing the result changes the corpus's settings: that takes the write scope.
      if (body.apply && !principal.scopes.has("rag.write")) throw new ServiceError("permission", "this API key lacks the 'rag.write' scope (needed for apply: true)", { code: "insufficient_scope" });
      const result = await tuning.tune(principal, routeParam(req, "corpusId"), { questions: body.questions, apply: body.apply }, res.locals.signal);
      await res.locals.admission?.settle(result.promptTokens);
      Object.assign(res.locals.audit?.data ?? {}, { questions: result.questions, applied: result.applied, prompt_tokens: result.promptTokens, ...(result.applied && result.corpus.searchDefaults ? { search_defaults: searchDefaultsObject(result.corpus.searchDefaults) } : {}) });
      res.json(searchTuningObject(result));
    },
  );
  return router;
}
