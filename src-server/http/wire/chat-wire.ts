/**
 * OpenAI chat-completions wire format: the request schema (strict: unknown or
 * unsupported parameters are a 400, never silently ignored), its translation into the
 * engine's input, and the response and chunk objects.
 */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { ChatEvent, ChatGenerationInput, ChatMessage, FinishReason, ResponseFormat, ToolCall } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";

const TextPart = z.object({ type: z.literal("text"), text: z.string() }).strict();
/** Any other part type (image_url, input_audio, file, ...): recognised, then refused clearly. */
const OtherPart = z.object({ type: z.string() }).loose();
const Content = z.union([z.string(), z.array(z.union([TextPart, OtherPart])).min(1)]);

const WireToolCall = z
  .object({
    id: z.string().min(1).max(256),
    type: z.literal("function"),
    function: z.object({ name: z.string().min(1), arguments: z.string() }).strict(),
  })
  .strict();

const Message = z.discriminatedUnion("role", [
  z.object({ role: z.enum(["system", "developer"]), content: Content, name: z.string().optional() }).strict(),
  z.object({ role: z.literal("user"), content: Content, name: z.string().optional() }).strict(),
  z
    .object({
      role: z.literal("assistant"),
      content: Content.nullable().optional(),
      name: z.string().optional(),
      refusal: z.string().nullable().optional(),
      tool_calls: z.array(WireToolCall).optional(),
    })
    .strict(),
  z.object({ role: z.literal("tool"), content: Content, tool_call_id: z.string().min(1) }).strict(),
]);

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const Tool = z
  .object({
    type: z.literal("function"),
    function: z
      .object({
        name: z.string().regex(FUNCTION_NAME, "function names are 1-64 letters, digits, '_' or '-'"),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullable().optional(),
      })
      .strict(),
  })
  .strict();

const ResponseFormatSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }).strict(),
  z.object({ type: z.literal("json_object") }).strict(),
  z
    .object({
      type: z.literal("json_schema"),
      json_schema: z
        .object({
          name: z.string().regex(FUNCTION_NAME),
          description: z.string().optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullable().optional(),
        })
        .strict(),
    })
    .strict(),
]);

/** Parameters OpenAI defines that this server cannot honour: refused by name. */
const unsupported = (why: string) =>
  z
    .unknown()
    .optional()
    .refine((v) => v === undefined || v === null, { message: why });

export const ChatRequestSchema = z
  .object({
    model: z.string().min(1).max(256).optional(),
    messages: z.array(Message).min(1, "messages must contain at least one message"),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).nullable().optional(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(16)]).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).strict().nullable().optional(),
    response_format: ResponseFormatSchema.optional(),
    tools: z.array(Tool).max(128).optional(),
    tool_choice: z
      .union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: z.string() }).strict() }).strict()])
      .optional(),
    parallel_tool_calls: z.boolean().optional(),
    user: z.string().max(256).optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    n: z.literal(1, "only n=1 is supported").nullable().optional(),
    logprobs: z.literal(false, "logprobs are not supported").nullable().optional(),
    store: z.literal(false, "this server does not store completions (store must be false)").nullable().optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
    service_tier: z.enum(["auto", "default"]).nullable().optional(),
    top_logprobs: unsupported("top_logprobs is not supported"),
    logit_bias: unsupported("logit_bias is not supported: OpenAI token ids do not match this model's tokenizer"),
    functions: unsupported("the legacy 'functions' parameter is not supported; use 'tools'"),
    function_call: unsupported("the legacy 'function_call' parameter is not supported; use 'tool_choice'"),
    audio: unsupported("audio output is not supported"),
    modalities: unsupported("only text output is supported"),
    prediction: unsupported("predicted outputs are not supported"),
    reasoning_effort: unsupported("reasoning_effort is not supported"),
    web_search_options: unsupported("web search is not supported"),
    // llama.cpp-style sampling extensions.
    top_k: z.number().int().min(0).optional(),
    min_p: z.number().min(0).max(1).optional(),
    repeat_penalty: z.number().min(0).max(10).optional(),
    /** llama.cpp server's extension: false evaluates the whole prompt afresh (reproducible logits) instead of reusing the prompt cache. */
    cache_prompt: z.boolean().optional(),
  })
  .strict();

export type WireChatRequest = z.infer<typeof ChatRequestSchema>;

function contentText(content: z.infer<typeof Content> | null | undefined, param: string): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content
    .map((part, i) => {
      if (part.type !== "text" || typeof (part as { text?: unknown }).text !== "string") {
        throw invalidRequest(`${param}.${i}: content parts of type '${part.type}' are not supported; this server's models read text only`, "unsupported_content_type", `${param}.${i}.type`);
      }
      return (part as { text: string }).text;
    })
    .join("");
}

function toMessage(message: z.infer<typeof Message>, i: number): ChatMessage {
  const param = `messages.${i}.content`;
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: contentText(message.content, param) };
    case "user":
      return { role: "user", content: contentText(message.content, param) };
    case "assistant": {
      const toolCalls: ToolCall[] = (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      const content = message.content == null ? null : contentText(message.content, param);
      if (!content && toolCalls.length === 0) throw invalidRequest(`messages.${i}: an assistant message needs content or tool_calls`, "invalid_parameter", param);
      return { role: "assistant", content, toolCalls };
    }
    case "tool":
      return { role: "tool", toolCallId: message.tool_call_id, content: contentText(message.content, param) };
  }
}

function toResponseFormat(format: WireChatRequest["response_format"]): ResponseFormat {
  if (!format || format.type === "text") return { type: "text" };
  if (format.type === "json_object") return { type: "json_object" };
  const schema = format.json_schema.schema;
  if (!schema) return { type: "json_object" };
  return { type: "json_schema", name: format.json_schema.name, schema };
}

/** Translates a validated request into the engine's terms (400 for what it cannot do). */
export function toChatInput(request: WireChatRequest): ChatGenerationInput {
  const wireChoice = request.tool_choice ?? "auto";
  const toolChoice = typeof wireChoice === "object" ? { name: wireChoice.function.name } : wireChoice;
  if (request.max_tokens != null && request.max_completion_tokens != null && request.max_tokens !== request.max_completion_tokens) {
    throw invalidRequest("max_tokens and max_completion_tokens disagree; send one of them", "invalid_parameter", "max_tokens");
  }
  const tools = (request.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
  const names = new Set(tools.map((t) => t.name));
  if (names.size !== tools.length) throw invalidRequest("tools contain the same function name twice", "invalid_parameter", "tools");
  return {
    messages: request.messages.map(toMessage),
    tools,
    toolChoice,
    responseFormat: toResponseFormat(request.response_format),
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
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
  };
}

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens reused from the prompt cache. */
  cachedTokens?: number | undefined;
}

const wireUsage = (u: Usage) => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.promptTokens + u.completionTokens,
  ...(u.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: u.cachedTokens } }),
});

const wireToolCalls = (calls: ToolCall[]) => calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));

/** The non-streamed `chat.completion` object. */
export function chatCompletionObject(meta: CompletionMeta, result: { content: string; toolCalls: ToolCall[]; finishReason: FinishReason; usage: Usage }): Api.ChatCompletion {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant" as const,
          content: result.toolCalls.length > 0 && result.content === "" ? null : result.content,
          refusal: null,
          ...(result.toolCalls.length > 0 ? { tool_calls: wireToolCalls(result.toolCalls) } : {}),
        },
        logprobs: null,
        finish_reason: result.finishReason,
      },
    ],
    usage: wireUsage(result.usage),
  };
}

/**
 * The `chat.completion.chunk` objects for one run: role first, a chunk per text delta,
 * tool calls and the finish reason, then usage when asked.
 */
export async function* chatChunks(
  meta: CompletionMeta,
  events: AsyncIterable<ChatEvent>,
  promptTokens: number,
  includeUsage: boolean,
): AsyncGenerator<Api.ChatCompletionChunk, void, undefined> {
  const base = { id: meta.id, object: "chat.completion.chunk" as const, created: meta.created, model: meta.model, system_fingerprint: null };
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (delta: Api.ChatCompletionChunk["choices"][number]["delta"], finishReason: FinishReason | null): Api.ChatCompletionChunk => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...usageField,
  });
  yield chunk({ role: "assistant", content: "", refusal: null }, null);
  for await (const event of events) {
    if (event.type === "text") {
      if (event.text) yield chunk({ content: event.text }, null);
      continue;
    }
    if (event.toolCalls.length > 0) {
      yield chunk({ tool_calls: wireToolCalls(event.toolCalls).map((call, index) => ({ index, ...call })) }, null);
    }
    yield chunk({}, event.finishReason);
    if (includeUsage) yield { ...base, choices: [], usage: wireUsage({ promptTokens: event.promptTokens ?? promptTokens, completionTokens: event.completionTokens, cachedTokens: event.cachedTokens }) };
  }
}
