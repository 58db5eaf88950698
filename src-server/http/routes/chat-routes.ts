/** POST /v1/chat/completions (= /v1/inference/chat). */
import { doc } from "../openapi/route-doc.js";
import { Router, type RequestHandler } from "express";
import type { Admission } from "../../admin/rate-limit-service.js";
import type { ChatEvent, ChatRun } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import { newId, nowSeconds } from "../../ids.js";
import type { ChatService } from "../../inference/chat-service.js";
import { requireScope } from "../authenticate.js";
import { streamError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { pipeSse } from "../sse.js";
import { ChatRequestSchema, chatChunks, chatCompletionObject, toChatInput } from "../wire/chat-wire.js";
import type { Trail } from "../audit-trail.js";

/**
 * Passes the events through and reports the completion tokens once the run ends (or 0 when
 * cut short), with the prompt's tokens when the end says them (a remote model's upstream
 * counts them; admission used an estimate).
 */
export async function* metered(events: AsyncIterable<ChatEvent>, onEnd: (completionTokens: number, promptTokens: number | undefined) => void | Promise<void>, onFirstText?: () => void): AsyncGenerator<ChatEvent, void, undefined> {
  let completionTokens = 0;
  let promptTokens: number | undefined;
  let first = true;
  try {
    for await (const event of events) {
      if (event.type === "end") {
        completionTokens = event.completionTokens;
        promptTokens = event.promptTokens;
      } else if (first && event.text) {
        first = false;
        onFirstText?.();
      }
      yield event;
    }
  } finally {
    await onEnd(completionTokens, promptTokens);
  }
}

/** Starts an admitted run (remote models: the upstream answers); a run that cannot start used no tokens. */
export async function begin(run: ChatRun, admission: Admission | undefined): Promise<void> {
  if (!run.ready) return;
  try {
    await run.ready();
  } catch (error) {
    await admission?.settle(0);
    throw error;
  }
}

export function chatRoutes(chat: ChatService, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  const audit = trail("chat.completion", { digest: { name: "prompt", of: (body) => body.messages } });
  router.post(["/v1/chat/completions", "/v1/inference/chat"], doc({ summary: "Chat completions (OpenAI)", tag: "Inference", body: ChatRequestSchema, streams: true }), audit, requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, ChatRequestSchema);
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, stream: body.stream === true });
    if (body.stream_options && !body.stream) throw invalidRequest("stream_options is only allowed when stream is true", "invalid_parameter", "stream_options");
    const input = toChatInput(body);
    const started = await chat.start(body.model, input, res.locals.signal);
    const { promptTokens, contextSize } = started.run;
    Object.assign(facts, { model: started.model, prompt_tokens: promptTokens, completion_tokens: 0 });
    // Reserve the most this run can use before it generates anything; settle to the real count.
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
        return res.locals.admission?.settle((counted ?? promptTokens) + completion);
      },
      () => (res.locals.firstTokenAt ??= performance.now()),
    );
    const meta = { id: newId("chatcmpl-"), created: nowSeconds(), model: started.model };
    if (!body.stream) {
      res.json(chatCompletionObject(meta, await chat.collect({ ...started, run: { ...started.run, events } })));
      return;
    }
    const chunks = chatChunks(meta, events, promptTokens, body.stream_options?.include_usage === true);
    await pipeSse(res, chunks, {
      done: true,
      onError: (error) => streamError(res, error),
    });
  });
  return router;
}
