/** POST /v1/completions: OpenAI's legacy text completions, one choice per prompt. */
import { doc } from "../openapi/route-doc.js";
import { Router, type RequestHandler } from "express";
import type { TextCompletionInput } from "../../engine/types.js";
import { invalidRequest, ServiceError } from "../../errors.js";
import { newId, nowSeconds } from "../../ids.js";
import type { ChatService, StartedCompletion } from "../../inference/chat-service.js";
import type { Trail } from "../audit-trail.js";
import { requireScope } from "../authenticate.js";
import { streamError } from "../error-handler.js";
import { jsonBody } from "../json-body.js";
import { pipeSse } from "../sse.js";
import type { Usage } from "../wire/chat-wire.js";
import { CompletionRequestSchema, completionChunks, textCompletionObject, toCompletionInputs, type StreamedChoice } from "../wire/completions-wire.js";
import { metered } from "./chat-routes.js";

export function completionsRoutes(chat: ChatService, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  const audit = trail("text.completion", { digest: { name: "prompt", of: (body) => (body.suffix == null ? body.prompt : { prompt: body.prompt, suffix: body.suffix }) } });
  router.post(["/v1/completions", "/v1/inference/completions"], doc({ summary: "Text completions (OpenAI legacy), with fill-in-the-middle", tag: "Inference", body: CompletionRequestSchema, streams: true }), audit, requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, CompletionRequestSchema);
    const locals = res.locals;
    const facts = locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, stream: body.stream === true });
    if (body.stream_options && !body.stream) throw invalidRequest("stream_options is only allowed when stream is true", "invalid_parameter", "stream_options");
    const inputs = toCompletionInputs(body);
    const usage: Usage = { promptTokens: 0, completionTokens: 0 };
    Object.assign(facts, { prompt_tokens: 0, completion_tokens: 0, prompts: inputs.length });

    /** Admits one prompt: its tokens are reserved against the rate limits before it runs, and counted once it ends. */
    const admit = async (input: TextCompletionInput, index: number): Promise<StartedCompletion> => {
      let started: StartedCompletion;
      try {
        started = await chat.startCompletion(body.model, input, locals.signal);
      } catch (error) {
        throw inputs.length > 1 ? relocate(error, index) : error;
      }
      const { promptTokens, contextSize } = started.run;
      Object.assign(facts, { model: started.model });
      try {
        await locals.admission?.reserve(promptTokens + (input.maxTokens ?? contextSize - promptTokens));
      } catch (error) {
        await started.run.events.return();
        throw error;
      }
      try {
        await started.run.ready?.();
      } catch (error) {
        throw inputs.length > 1 ? relocate(error, index) : error;
      }
      usage.promptTokens += promptTokens;
      facts.prompt_tokens = usage.promptTokens;
      const events = metered(
        started.run.events,
        (completion, counted) => {
          usage.completionTokens += completion;
          facts.completion_tokens = usage.completionTokens;
          if (counted !== undefined) {
            usage.promptTokens += counted - promptTokens;
            facts.prompt_tokens = usage.promptTokens;
          }
        },
        () => (locals.firstTokenAt ??= performance.now()),
      );
      return { ...started, run: { ...started.run, events } };
    };
    const settle = () => locals.admission?.settle(usage.promptTokens + usage.completionTokens);
    const meta = { id: newId("cmpl-"), created: nowSeconds(), model: body.model ?? "" };
    const echo = body.echo === true;

    if (!body.stream) {
      try {
        const choices: { text: string; finishReason: "stop" | "length" | "tool_calls" }[] = [];
        for (const [index, input] of inputs.entries()) {
          const started = await admit(input, index);
          meta.model = started.model;
          const result = await chat.collect(started);
          choices.push({ text: (echo ? started.run.promptText : "") + result.content, finishReason: result.finishReason });
        }
        res.json(textCompletionObject(meta, choices, usage));
      } finally {
        await settle();
      }
      return;
    }
    // The first prompt is admitted before the stream opens, so its errors are plain HTTP errors.
    const first = await admit(inputs[0]!, 0);
    meta.model = first.model;
    async function* choices(): AsyncGenerator<StreamedChoice, void, undefined> {
      try {
        for (const [index, input] of inputs.entries()) {
          const started = index === 0 ? first : await admit(input, index);
          yield { index, echo: echo ? started.run.promptText : null, events: started.run.events };
        }
      } finally {
        await settle();
      }
    }
    await pipeSse(res, completionChunks(meta, choices(), body.stream_options?.include_usage === true, () => usage), {
      done: true,
      onError: (error) => streamError(res, error),
    });
  });
  return router;
}

/** An error about "the prompt" of a request with several, pointed at the one at fault. */
function relocate(error: unknown, index: number): unknown {
  if (!(error instanceof ServiceError) || error.location?.in !== "prompt" || error.location.index !== undefined) return error;
  return new ServiceError(error.kind, `prompt ${index}: ${error.message}`, { code: error.code, location: { in: "prompt", index }, cause: error });
}
