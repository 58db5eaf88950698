/** POST /v1/rag/corpora/{id}/query: grounded answers, streamed or not, always with citations. */
import { Router } from "express";
import { newId, nowSeconds } from "../../ids.js";
import { citedIndexes } from "../../rag/answer/grounded-prompt.js";
import type { QueryService, StartedQuery } from "../../rag/answer/query-service.js";
import type { FinishReason } from "../../engine/types.js";
import { principalOf, requireScope } from "../authenticate.js";
import { routeParam } from "../route-param.js";
import { toWireError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { SseWriter } from "../sse.js";
import { QuerySchema, SearchSchema, citationObject } from "../wire/rag-wire.js";

function finalParts(started: StartedQuery, answer: string, completionTokens: number, finishReason: FinishReason) {
  const cited = citedIndexes(answer, started.citations.length);
  const promptTokens = (started.run?.promptTokens ?? 0) + started.queryTokens;
  return {
    citations: started.citations.map((c) => citationObject(c, cited.has(c.index))),
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    finish_reason: finishReason,
  };
}

export function queryRoutes(queries: QueryService): Router {
  const router = Router();
  router.post("/v1/rag/corpora/:corpusId/query", requireScope("rag.read"), requireScope("inference"), async (req, res) => {
    const body = jsonBody(req, QuerySchema);
    const started = await queries.start(
      principalOf(res.locals),
      routeParam(req, "corpusId"),
      { question: body.question, topK: body.top_k, search: body.search, filter: body.filter, model: body.model, temperature: body.temperature, maxTokens: body.max_tokens },
      res.locals.signal,
    );
    const id = newId("ans_");
    if (!body.stream) {
      let answer = started.fallback ?? "";
      let completionTokens = 0;
      let finishReason: FinishReason = "stop";
      if (started.run) {
        for await (const event of started.run.events) {
          if (event.type === "text") answer += event.text;
          else {
            completionTokens = event.completionTokens;
            finishReason = event.finishReason;
          }
        }
      }
      const parts = finalParts(started, answer, completionTokens, finishReason);
      res.json({ id, object: "rag.answer", corpus_id: started.corpusId, model: started.model, answer: answer.trim(), ...parts, created_at: nowSeconds() });
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
        await sse.send({ object: "rag.answer.delta", id, delta: answer });
      }
      if (started.run) {
        for await (const event of started.run.events) {
          if (sse.closed) break;
          if (event.type === "text") {
            answer += event.text;
            if (event.text) await sse.send({ object: "rag.answer.delta", id, delta: event.text });
          } else {
            completionTokens = event.completionTokens;
            finishReason = event.finishReason;
          }
        }
      }
      // The citation event ends the stream (spec: streamed queries end with it).
      await sse.send({ object: "rag.answer.citations", id, ...finalParts(started, answer, completionTokens, finishReason) });
    } catch (error) {
      await sse.send(toWireError(error).body);
    }
    sse.end();
  });
  /** Retrieval without generation: the chunks a query would cite, best first. */
  router.post("/v1/rag/corpora/:corpusId/search", requireScope("rag.read"), async (req, res) => {
    const body = jsonBody(req, SearchSchema);
    const found = await queries.retrieve(principalOf(res.locals), routeParam(req, "corpusId"), { question: body.query, topK: body.top_k, search: body.search, filter: body.filter }, res.locals.signal);
    res.json({
      object: "list",
      data: found.citations.map(({ headingPath, ...c }) => ({ ...citationObject(c, false), heading_path: headingPath })),
      relevant: found.relevant,
      best_similarity: found.bestSimilarity,
    });
  });
  return router;
}
