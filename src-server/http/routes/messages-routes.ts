/**
 * POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API over the same
 * chat service. Errors on these routes are in Anthropic's shape (see `error-handler.ts`),
 * and the key may come as `x-api-key`.
 */
import { Router, type RequestHandler } from "express";
import { newId } from "../../ids.js";
import type { ChatService } from "../../inference/chat-service.js";
import type { Trail } from "../audit-trail.js";
import { requireScope } from "../authenticate.js";
import { streamError, toWireError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { doc } from "../openapi/route-doc.js";
import { pipeNamedSse } from "../sse.js";
import { anthropicError, CountTokensRequestSchema, MessagesRequestSchema, messageEvents, messageObject, toAnthropicChatInput, toCountInput } from "../wire/anthropic-wire.js";
import { begin, metered } from "./chat-routes.js";

export function messagesRoutes(chat: ChatService, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  const audit = trail("chat.completion", { digest: { name: "prompt", of: (body) => ({ system: body.system ?? null, messages: body.messages }) } });
  router.post("/v1/messages", doc({ summary: "Messages (Anthropic), streamed or not", tag: "Inference", body: MessagesRequestSchema, streams: true }), audit, requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, MessagesRequestSchema);
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, stream: body.stream === true, api: "anthropic" });
    const input = toAnthropicChatInput(body);
    const started = await chat.start(body.model, input, res.locals.signal);
    const { promptTokens } = started.run;
    Object.assign(facts, { model: started.model, prompt_tokens: promptTokens, completion_tokens: 0 });
    try {
      await res.locals.admission?.reserve(promptTokens + body.max_tokens);
    } catch (error) {
      await started.run.events.return();
      throw error;
    }
    await begin(started.run, res.locals.admission);
    let stopSequence: string | undefined;
    const events = metered(
      (async function* () {
        for await (const event of started.run.events) {
          if (event.type === "end") stopSequence = event.stopSequence;
          yield event;
        }
      })(),
      (completion, counted) => {
        facts.completion_tokens = completion;
        facts.prompt_tokens = counted ?? promptTokens;
        return res.locals.admission?.settle((counted ?? promptTokens) + completion);
      },
      () => (res.locals.firstTokenAt ??= performance.now()),
    );
    const meta = { id: newId("msg_"), model: started.model };
    if (!body.stream) {
      const result = await chat.collect({ ...started, run: { ...started.run, events } });
      res.json(messageObject(meta, { ...result, stopSequence }));
      return;
    }
    await pipeNamedSse(res, messageEvents(meta, events, promptTokens), (error) => {
      const wire = streamError(res, error);
      return { event: "error", data: anthropicError(toWireError(error).status, wire) };
    });
  });
  // Counting is a request against the key's limit like any other (it tokenises, and loads the
  // model): the usual headers, 429 in Anthropic's shape; no tokens are reserved for it.
  router.post("/v1/messages/count_tokens", doc({ summary: "Count a Messages request's input tokens (Anthropic)", tag: "Inference", body: CountTokensRequestSchema }), requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, CountTokensRequestSchema);
    const { tokens } = await chat.countPromptTokens(body.model, toCountInput(body));
    res.json({ input_tokens: tokens });
  });
  return router;
}
