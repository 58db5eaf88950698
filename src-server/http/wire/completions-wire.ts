/**
 * OpenAI legacy completions wire format (`POST /v1/completions`): the request schema
 * (strict, as for chat: what cannot be honoured is refused by name), its translation
 * into one engine input per prompt, and the `text_completion` objects and chunks.
 */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { ChatEvent, FinishReason, TextCompletionInput } from "../../engine/types.js";
import type { CompletionMeta, Usage } from "./chat-wire.js";

/** Prompts one request may carry (each is generated in turn, one choice each). */
export const MAX_PROMPTS = 32;

const unsupported = (why: string) =>
  z
    .unknown()
    .optional()
    .refine((v) => v === undefined || v === null, { message: why });

const TokenIds = z.array(z.number().int().min(0)).min(1, "a token-id prompt needs at least one token");

export const CompletionRequestSchema = z
  .object({
    model: z.string().min(1).max(256).optional(),
    prompt: z.union([
      z.string(),
      z.array(z.string()).min(1, "prompt must hold at least one text").max(MAX_PROMPTS, `at most ${MAX_PROMPTS} prompts per request`),
      TokenIds,
      z.array(TokenIds).min(1, "prompt must hold at least one token list").max(MAX_PROMPTS, `at most ${MAX_PROMPTS} prompts per request`),
    ]),
    suffix: z.string().nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(16)]).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    echo: z.boolean().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).strict().nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    user: z.string().max(256).optional(),
    n: z.literal(1, "only n=1 is supported").nullable().optional(),
    best_of: z.literal(1, "only best_of=1 is supported").nullable().optional(),
    logprobs: z.literal(0, "logprobs are not supported").nullable().optional(),
    logit_bias: unsupported("logit_bias is not supported: OpenAI token ids do not match this model's tokenizer"),
    // llama.cpp-style sampling extensions, as on chat.
    top_k: z.number().int().min(0).optional(),
    min_p: z.number().min(0).max(1).optional(),
    repeat_penalty: z.number().min(0).max(10).optional(),
    /** llama.cpp server's extension: false evaluates the whole prompt afresh (reproducible logits) instead of reusing the prompt cache. */
    cache_prompt: z.boolean().optional(),
  })
  .strict();

export type WireCompletionRequest = z.infer<typeof CompletionRequestSchema>;

/** The prompts of a request, one per choice. */
export function promptsOf(request: WireCompletionRequest): (string | number[])[] {
  const { prompt } = request;
  if (typeof prompt === "string") return [prompt];
  if (prompt.length > 0 && typeof prompt[0] === "number") return [prompt as number[]];
  return prompt as (string | number[])[];
}

/** One engine input per prompt. */
export function toCompletionInputs(request: WireCompletionRequest): TextCompletionInput[] {
  return promptsOf(request).map((prompt) => ({
    prompt,
    suffix: request.suffix ?? undefined,
    maxTokens: request.max_tokens ?? undefined,
    stop: request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : request.stop,
    sampling: {
      temperature: request.temperature ?? 1,
      topP: request.top_p ?? undefined,
      topK: request.top_k,
      minP: request.min_p,
      seed: request.seed ?? undefined,
      frequencyPenalty: request.frequency_penalty ?? undefined,
      presencePenalty: request.presence_penalty ?? undefined,
      repeatPenalty: request.repeat_penalty,
    },
    promptCache: request.cache_prompt,
  }));
}

const wireUsage = (u: Usage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens });

/** A text completion's finish reason (a completion never calls tools). */
const textFinish = (reason: FinishReason): "stop" | "length" => (reason === "length" ? "length" : "stop");

/** The non-streamed `text_completion` object: one choice per prompt, usage summed. */
export function textCompletionObject(meta: CompletionMeta, choices: { text: string; finishReason: FinishReason }[], usage: Usage): Api.TextCompletion {
  return {
    id: meta.id,
    object: "text_completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: choices.map((c, index) => ({ text: c.text, index, logprobs: null, finish_reason: textFinish(c.finishReason) })),
    usage: wireUsage(usage),
  };
}

/** One prompt's run for streaming: its choice index, the echoed text, and its events. */
export interface StreamedChoice {
  index: number;
  echo: string | null;
  events: AsyncIterable<ChatEvent>;
}

/**
 * The `text_completion` chunks of a stream, choice after choice: the echoed prompt first
 * when asked, a chunk per text delta, one with the finish reason; then usage when asked.
 */
export async function* completionChunks(meta: CompletionMeta, choices: AsyncIterable<StreamedChoice>, includeUsage: boolean, usage: () => Usage): AsyncGenerator<Api.TextCompletion, void, undefined> {
  const base = { id: meta.id, object: "text_completion" as const, created: meta.created, model: meta.model, system_fingerprint: null };
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (index: number, text: string, finishReason: "stop" | "length" | null): Api.TextCompletion => ({
    ...base,
    choices: [{ text, index, logprobs: null, finish_reason: finishReason }],
    ...usageField,
  });
  for await (const choice of choices) {
    if (choice.echo) yield chunk(choice.index, choice.echo, null);
    for await (const event of choice.events) {
      if (event.type === "text") {
        if (event.text) yield chunk(choice.index, event.text, null);
        continue;
      }
      yield chunk(choice.index, "", textFinish(event.finishReason));
    }
  }
  if (includeUsage) yield { ...base, choices: [], usage: wireUsage(usage()) };
}
