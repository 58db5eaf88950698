/**
 * The OpenAI Responses API over the chat service: POST /v1/responses (streamed or not),
 * GET and DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items. A response is
 * stored (sealed, per workspace, for the retention set) unless the request says
 * `store: false`; `previous_response_id` continues from a stored one.
 */
import { Router, type RequestHandler } from "express";
import type { ChatMessage } from "../../engine/types.js";
import { invalidRequest, ServiceError } from "../../errors.js";
import { newId, nowSeconds, randomBase62 } from "../../ids.js";
import type { ChatService } from "../../inference/chat-service.js";
import type { ResponseArchive } from "../../inference/response-archive.js";
import type { Trail } from "../audit-trail.js";
import { principalOf, requireScope } from "../authenticate.js";
import { streamError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { doc } from "../openapi/route-doc.js";
import { routeParam } from "../route-param.js";
import { pipeNamedSse } from "../sse.js";
import { citationAnnotations, fileSearchToolOf, inputItemsOf, inputMessages, responseEvents, responseObject, ResponsesRequestSchema, toResponsesChatInput, transcriptTurn, type FileSearchOutput, type ResponseOutcome } from "../wire/responses-wire.js";
import { stripCitationMarkers } from "../../rag/answer/citation-markers.js";
import { lastUserText, runFileSearch, withSources } from "../../rag/vector-stores/file-search.js";
import type { VectorStoreSearch } from "../../rag/vector-stores/vector-store-search.js";
import { begin, metered } from "./chat-routes.js";

export function responsesRoutes(chat: ChatService, archive: ResponseArchive, costly: RequestHandler, trail: Trail, vectorStores?: VectorStoreSearch): Router {
  const router = Router();
  const inference = requireScope("inference");
  const audit = trail("response.create", { digest: { name: "prompt", of: (body) => ({ instructions: body.instructions ?? null, input: body.input, previous_response_id: body.previous_response_id ?? null }) } });

  router.post("/v1/responses", doc({ summary: "Create a model response (OpenAI Responses API), streamed or not", tag: "Inference", body: ResponsesRequestSchema, streams: true }), audit, inference, costly, async (req, res) => {
    const body = jsonBody(req, ResponsesRequestSchema);
    if (body.stream_options && !body.stream) throw invalidRequest("stream_options is only allowed when stream is true", "invalid_parameter", "stream_options");
    const principal = principalOf(res.locals);
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, stream: body.stream === true, store: body.store !== false });
    const earlier: ChatMessage[] = body.previous_response_id ? (await archive.load(principal, body.previous_response_id, "previous_response_id")).transcript : [];
    let input = toResponsesChatInput(body, earlier);
    // file_search: the vector stores are searched first and the model answers from what was found.
    const tool = fileSearchToolOf(body);
    let fileSearch: FileSearchOutput | undefined;
    if (tool) {
      if (!vectorStores) throw invalidRequest("file_search is not available on this server", "unsupported_tool_type", "tools");
      if (!principal.scopes.has("rag.read")) throw new ServiceError("permission", "this API key lacks the 'rag.read' scope, which file_search needs", { code: "insufficient_scope" });
      const run = await runFileSearch(vectorStores, principal, tool, lastUserText(input.messages), res.locals.signal);
      input = { ...input, messages: withSources(input.messages, run) };
      fileSearch = { run, includeResults: body.include?.includes("file_search_call.results") ?? false };
      facts.file_search = { vector_store_ids: tool.vectorStoreIds, results: run.hits.map((h) => ({ file_id: h.fileId, chunk_id: h.chunkId })), query_tokens: run.queryTokens };
    }
    const searchTokens = fileSearch?.run.queryTokens ?? 0;
    const started = await chat.start(body.model, input, res.locals.signal);
    const { promptTokens, contextSize } = started.run;
    Object.assign(facts, { model: started.model, prompt_tokens: promptTokens, completion_tokens: 0 });
    try {
      await res.locals.admission?.reserve(promptTokens + (input.maxTokens ?? contextSize - promptTokens));
    } catch (error) {
      await started.run.events.return();
      throw error;
    }
    await begin(started.run, res.locals.admission);
    const events = metered(
      started.run.events,
      (completion, counted) => {
        facts.completion_tokens = completion;
        facts.prompt_tokens = counted ?? promptTokens;
        return res.locals.admission?.settle((counted ?? promptTokens) + completion + searchTokens);
      },
      () => (res.locals.firstTokenAt ??= performance.now()),
    );
    const meta = { id: newId("resp_"), createdAt: nowSeconds(), model: started.model, messageId: `msg_${randomBase62(24)}`, fileSearch };
    Object.assign(facts, { response_id: meta.id });
    const keep = async (outcome: ResponseOutcome) => {
      if (body.store === false) return;
      const transcript = [...earlier, ...inputMessages(body), transcriptTurn(outcome)];
      await archive.save(principal, meta.id, { response: responseObject(meta, body, outcome), inputItems: inputItemsOf(body), transcript });
    };
    if (!body.stream) {
      const result = await chat.collect({ ...started, run: { ...started.run, events } });
      const cited = fileSearch ? stripCitationMarkers(result.content, fileSearch.run.hits.length) : null;
      const outcome: ResponseOutcome = {
        text: cited ? cited.text : result.content,
        toolCalls: result.toolCalls,
        finishReason: result.finishReason,
        usage: result.usage,
        annotations: cited && fileSearch ? citationAnnotations(cited.text, cited.annotations, fileSearch.run) : undefined,
      };
      await keep(outcome);
      res.json(responseObject(meta, body, outcome));
      return;
    }
    await pipeNamedSse(res, responseEvents(meta, body, events, promptTokens, keep), (error) => {
      const wire = streamError(res, error);
      return { event: "error", data: { type: "error", code: wire.error.code, message: wire.error.message, param: wire.error.param } };
    });
  });

  router.get("/v1/responses/:responseId", doc({ summary: "A stored response", tag: "Inference" }), inference, async (req, res) => {
    res.json((await archive.load(principalOf(res.locals), routeParam(req, "responseId"))).response);
  });

  router.get("/v1/responses/:responseId/input_items", doc({ summary: "The input items of a stored response", tag: "Inference" }), inference, async (req, res) => {
    const items = (await archive.load(principalOf(res.locals), routeParam(req, "responseId"))).inputItems as { id: string }[];
    res.json({ object: "list", data: items, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: false });
  });

  router.delete("/v1/responses/:responseId", doc({ summary: "Delete a stored response (irreversible: its key goes with it)", tag: "Inference" }), trail("response.delete", { params: ["responseId"] }), inference, async (req, res) => {
    const id = routeParam(req, "responseId");
    await archive.delete(principalOf(res.locals), id);
    res.json({ id, object: "response", deleted: true });
  });
  return router;
}
