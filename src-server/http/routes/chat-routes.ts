/** POST /v1/chat/completions (= /v1/inference/chat). */
import { Router } from "express";
import { invalidRequest } from "../../errors.js";
import { newId, nowSeconds } from "../../ids.js";
import type { ChatService } from "../../inference/chat-service.js";
import { requireScope } from "../authenticate.js";
import { toWireError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { pipeSse } from "../sse.js";
import { ChatRequestSchema, chatChunks, chatCompletionObject, toChatInput } from "../wire/chat-wire.js";

export function chatRoutes(chat: ChatService): Router {
  const router = Router();
  router.post(["/v1/chat/completions", "/v1/inference/chat"], requireScope("inference"), async (req, res) => {
    const body = jsonBody(req, ChatRequestSchema);
    if (body.stream_options && !body.stream) throw invalidRequest("stream_options is only allowed when stream is true", "invalid_parameter", "stream_options");
    const input = toChatInput(body);
    const started = await chat.start(body.model, input, res.locals.signal);
    const meta = { id: newId("chatcmpl-"), created: nowSeconds(), model: started.model };
    if (!body.stream) {
      res.json(chatCompletionObject(meta, await chat.collect(started)));
      return;
    }
    const chunks = chatChunks(meta, started.run.events, started.run.promptTokens, body.stream_options?.include_usage === true);
    await pipeSse(res, chunks, { done: true, onError: (error) => toWireError(error).body });
  });
  return router;
}
