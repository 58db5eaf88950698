/**
 * Ollama's API wire format (`/api/chat`, `/api/generate`, `/api/embed`, `/api/embeddings`):
 * the request schemas, their translation into the engine's chat and completion inputs, and
 * Ollama's error shape, `{"error":"…"}`. The answers are in `ollama-replies-wire.ts`.
 *
 * Lenient where Ollama is: fields it does not know are ignored (Ollama's server decodes
 * requests so), and so are `options` it has but this engine lacks (`mirostat`, `num_gpu`,
 * …). What a request asks for and cannot get (images, thinking, log probabilities, a
 * template override) is refused by name, never dropped.
 */
import { z } from "zod";
import type { ChatGenerationInput, ChatMessage, ResponseFormat, SamplingOptions, TextCompletionInput, ToolCall } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import type { WireError } from "../error-handler.js";

/**
 * The Ollama API level this server speaks, as `/api/version` reports it: clients check it
 * before they use features (VS Code's Ollama provider wants at least 0.6.4).
 */
export const OLLAMA_API_VERSION = "0.12.0";

/** Paths answered in Ollama's error shape (Express matches routes case-insensitively). */
export const OLLAMA_PATHS = /^\/api(\/|$)/i;

// --- keep_alive ----------------------------------------------------------------------------

const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, μs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
const GO_DURATION = /^([+-])?((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;

/**
 * `keep_alive` in seconds (negative: keep loaded indefinitely), as Ollama reads it: a number
 * of seconds, or a Go duration (`"5m"`, `"1h30m"`, `"-1s"`, `"0"`); a bare number in a string
 * counts as seconds too. Null for anything else.
 */
export function keepAliveSeconds(value: number | string): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  const text = value.trim();
  if (/^[+-]?\d+(\.\d+)?$/.test(text)) return Number(text);
  const match = GO_DURATION.exec(text);
  if (!match) return null;
  let seconds = 0;
  for (const part of text.matchAll(/((?:\d+(?:\.\d*)?|\.\d+))(ns|us|µs|μs|ms|s|m|h)/g)) seconds += Number(part[1]) * UNIT_SECONDS[part[2]!]!;
  return match[1] === "-" ? -seconds : seconds;
}

const KeepAlive = z
  .union([z.number(), z.string().max(64)])
  .refine((v) => keepAliveSeconds(v) !== null, { message: 'invalid duration: use seconds (300), or a duration such as "5m" or "1h30m"; 0 unloads, a negative value keeps the model loaded' })
  .nullable()
  .optional();

// --- request schemas -------------------------------------------------------------------

/**
 * Sampling and runner options. The ones this engine honours are validated; the others
 * Ollama defines (`mirostat`, `num_gpu`, `num_thread`, …) and unknown ones are ignored, as
 * Ollama ignores options a model does not use. `num_ctx` is accepted: the context a request
 * gets is the server's (see `/api/show`'s `num_ctx`).
 */
const Options = z
  .object({
    num_ctx: z.number().int().min(1).nullable().optional(),
    num_predict: z.number().int().nullable().optional(),
    temperature: z.number().min(0).max(10).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    top_k: z.number().int().min(0).nullable().optional(),
    min_p: z.number().min(0).max(1).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).max(64)]).nullable().optional(),
    repeat_penalty: z.number().min(0).max(10).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  })
  .loose();

/** `"json"`, a JSON Schema, or `""` (none). */
const Format = z.union([z.literal(""), z.literal("json"), z.record(z.string(), z.unknown())]).nullable().optional();

const Think = z.union([z.boolean(), z.string().max(16)]).nullable().optional();
const Images = z.array(z.string()).nullable().optional();

const WireToolCall = z.object({
  id: z.string().min(1).max(256).optional(),
  function: z.object({
    name: z.string().min(1).max(256),
    /** An object, as Ollama sends it; JSON text is taken too (OpenAI-minded clients). */
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).nullable().optional(),
  }),
});

const Message = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string().nullable().optional(),
  images: Images,
  tool_calls: z.array(WireToolCall).max(128).nullable().optional(),
  /** The tool whose result a `tool` message carries. */
  tool_name: z.string().max(256).nullable().optional(),
  tool_call_id: z.string().max(256).nullable().optional(),
  /** A thinking model's reasoning in the history: no model here thinks, so it is not replayed. */
  thinking: z.string().nullable().optional(),
});

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const Tool = z.object({
  type: z.literal("function").optional(),
  function: z.object({
    name: z.string().regex(FUNCTION_NAME, "function names are 1-64 letters, digits, '_' or '-'"),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  }),
});

const common = {
  model: z.string().min(1).max(256),
  format: Format,
  options: Options.nullable().optional(),
  stream: z.boolean().nullable().optional(),
  keep_alive: KeepAlive,
  think: Think,
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).nullable().optional(),
};

export const OllamaChatRequestSchema = z.object({
  ...common,
  /** Empty or absent: the model is loaded (or, with `keep_alive: 0`, released) and nothing generated. */
  messages: z.array(Message).nullable().optional(),
  tools: z.array(Tool).max(128).nullable().optional(),
  /**
   * Pustaka's extension (Ollama has none): OpenAI's `tool_choice`, so a call can be forced
   * with a grammar (`required`, or a named function) or the tools hidden (`none`).
   */
  tool_choice: z
    .union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }) })])
    .nullable()
    .optional(),
});

export const OllamaGenerateRequestSchema = z.object({
  ...common,
  prompt: z.string().nullable().optional(),
  suffix: z.string().nullable().optional(),
  system: z.string().nullable().optional(),
  template: z.string().nullable().optional(),
  context: z.array(z.number()).nullable().optional(),
  raw: z.boolean().nullable().optional(),
  images: Images,
});

export const OllamaEmbedRequestSchema = z.object({
  model: z.string().min(1).max(256),
  /** Empty or absent: the model is loaded and no vector returned. */
  input: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  /** Ollama's default (true) cuts an input to the context; here a too-long input is a 400 either way. */
  truncate: z.boolean().nullable().optional(),
  dimensions: z.number().int().min(1).nullable().optional(),
  keep_alive: KeepAlive,
  options: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** The older `/api/embeddings`: one `prompt`, one `embedding`. */
export const OllamaEmbeddingsRequestSchema = z.object({
  model: z.string().min(1).max(256),
  prompt: z.string().nullable().optional(),
  keep_alive: KeepAlive,
  options: z.record(z.string(), z.unknown()).nullable().optional(),
});

export const OllamaShowRequestSchema = z
  .object({
    model: z.string().min(1).max(256).optional(),
    /** Deprecated in Ollama for `model`; still sent by older clients. */
    name: z.string().min(1).max(256).optional(),
    verbose: z.boolean().nullable().optional(),
  })
  .refine((b) => b.model !== undefined || b.name !== undefined, { message: "model is required", path: ["model"] });

export type OllamaChatRequest = z.infer<typeof OllamaChatRequestSchema>;
export type OllamaGenerateRequest = z.infer<typeof OllamaGenerateRequestSchema>;
type WireOptions = z.infer<typeof Options>;

// --- translation -------------------------------------------------------------------------

/** Refuses what no model here does: thinking and log probabilities. */
export function refuseUnsupported(request: { think?: boolean | string | null | undefined; logprobs?: boolean | null | undefined; top_logprobs?: number | null | undefined }, model: string): void {
  if (request.think !== undefined && request.think !== null && request.think !== false) {
    throw invalidRequest(`'${model}' does not support thinking; omit think or set it to false`, "unsupported_parameter", "think");
  }
  if (request.logprobs) throw invalidRequest("logprobs are not supported", "unsupported_parameter", "logprobs");
  if (request.top_logprobs) throw invalidRequest("top_logprobs are not supported", "unsupported_parameter", "top_logprobs");
}

/** The first place a request carries images, or null: no model here reads them. */
export function imagesAt(request: { images?: string[] | null | undefined; messages?: { images?: string[] | null | undefined }[] | null | undefined }): string | null {
  if (request.images?.length) return "images";
  const i = (request.messages ?? []).findIndex((m) => (m.images?.length ?? 0) > 0);
  return i >= 0 ? `messages.${i}.images` : null;
}

/**
 * Ollama's options as the engine's sampling, with Ollama's defaults for what is not sent
 * (temperature 0.8, top_k 40, top_p 0.9). `num_predict` ≤ 0 (-1: no limit, -2: fill the
 * context) means until the context is full; `seed` -1 means random.
 */
export function ollamaSampling(options: WireOptions | null | undefined): { sampling: SamplingOptions; maxTokens: number | undefined; stop: string[] } {
  const o = options ?? {};
  const stop = o.stop == null ? [] : (typeof o.stop === "string" ? [o.stop] : o.stop).filter((s) => s.length > 0);
  return {
    sampling: {
      temperature: o.temperature ?? 0.8,
      topP: o.top_p ?? 0.9,
      topK: o.top_k ?? 40,
      minP: o.min_p ?? undefined,
      seed: o.seed == null || o.seed < 0 ? undefined : o.seed,
      repeatPenalty: o.repeat_penalty ?? undefined,
      presencePenalty: o.presence_penalty ?? undefined,
      frequencyPenalty: o.frequency_penalty ?? undefined,
    },
    maxTokens: o.num_predict != null && o.num_predict > 0 ? o.num_predict : undefined,
    stop,
  };
}

/** `format` as the engine's response format: a JSON Schema is enforced with a grammar, as for `response_format`. */
export function ollamaResponseFormat(format: z.infer<typeof Format>): ResponseFormat {
  if (format == null || format === "") return { type: "text" };
  if (format === "json") return { type: "json_object" };
  return { type: "json_schema", name: "format", schema: format };
}

/** Tool-call arguments as JSON text (Ollama sends an object). */
const argumentsText = (args: Record<string, unknown> | string | null | undefined) => (typeof args === "string" ? args : JSON.stringify(args ?? {}));

/**
 * Ollama messages as the engine's. Ollama's tool calls carry no ids (newer clients may):
 * each call gets one, and a `tool` message answers the unanswered call with its
 * `tool_call_id`, else the first with its `tool_name`, else the first unanswered call.
 */
export function toOllamaMessages(messages: NonNullable<OllamaChatRequest["messages"]>): ChatMessage[] {
  const out: ChatMessage[] = [];
  const unanswered: ToolCall[] = [];
  messages.forEach((message, i) => {
    const content = message.content ?? "";
    switch (message.role) {
      case "system":
      case "user":
        out.push({ role: message.role, content });
        return;
      case "assistant": {
        const toolCalls = (message.tool_calls ?? []).map((call, j) => ({ id: call.id ?? `call_${i}_${j}`, name: call.function.name, arguments: argumentsText(call.function.arguments) }));
        unanswered.push(...toolCalls);
        out.push({ role: "assistant", content: content || null, toolCalls });
        return;
      }
      case "tool": {
        const at = [(c: ToolCall) => c.id === message.tool_call_id, (c: ToolCall) => c.name === message.tool_name, () => true].map((matches) => unanswered.findIndex(matches)).find((index) => index >= 0) ?? -1;
        const [call] = at >= 0 ? unanswered.splice(at, 1) : [];
        // A result that answers no call keeps an id no call has: the engine refuses it by place.
        out.push({ role: "tool", toolCallId: call?.id ?? message.tool_call_id ?? `unanswered_${i}`, content });
      }
    }
  });
  return out;
}

export function toOllamaChatInput(request: OllamaChatRequest): ChatGenerationInput {
  const { sampling, maxTokens, stop } = ollamaSampling(request.options);
  const tools = (request.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? undefined, parameters: t.function.parameters ?? undefined }));
  if (new Set(tools.map((t) => t.name)).size !== tools.length) throw invalidRequest("tools contain the same function name twice", "invalid_parameter", "tools");
  const choice = request.tool_choice ?? "auto";
  const toolChoice = typeof choice === "string" ? choice : { name: choice.function.name };
  return { messages: toOllamaMessages(request.messages ?? []), tools, toolChoice, responseFormat: ollamaResponseFormat(request.format), maxTokens, stop, sampling };
}

/** What `/api/generate` runs: the prompt in the model's chat template, or (`raw`, `suffix`) continued as is. */
export type GeneratePlan = { kind: "chat"; input: ChatGenerationInput } | { kind: "completion"; input: TextCompletionInput };

export function toGeneratePlan(request: OllamaGenerateRequest): GeneratePlan {
  if (request.template) throw invalidRequest("template overrides are not supported: the model's own chat template is used (send raw: true with a prompt already templated)", "unsupported_parameter", "template");
  if (request.context?.length) throw invalidRequest("context (the deprecated conversation memory of /api/generate) is not supported; send the conversation to /api/chat", "unsupported_parameter", "context");
  const { sampling, maxTokens, stop } = ollamaSampling(request.options);
  const responseFormat = ollamaResponseFormat(request.format);
  const prompt = request.prompt ?? "";
  if (request.raw || request.suffix) {
    const what = request.raw ? "raw: true" : "suffix";
    if (responseFormat.type !== "text") throw invalidRequest(`format cannot be combined with ${what}`, "invalid_parameter", "format");
    if (request.system) throw invalidRequest(`system cannot be combined with ${what}: the prompt is continued as it is, without a template`, "invalid_parameter", "system");
    return { kind: "completion", input: { prompt, suffix: request.suffix || undefined, maxTokens, stop, sampling } };
  }
  const messages: ChatMessage[] = request.system ? [{ role: "system", content: request.system }] : [];
  messages.push({ role: "user", content: prompt });
  return { kind: "chat", input: { messages, tools: [], toolChoice: "auto", responseFormat, maxTokens, stop, sampling } };
}

// --- errors ------------------------------------------------------------------------------

/** OpenAI's names for a field, where Ollama names it otherwise. */
const PARAMS: [RegExp, string][] = [
  [/^response_format(\..*)?$/, "format"],
  [/^max_tokens$/, "options.num_predict"],
  [/^tool_choice$/, "tools"],
];

/** Ollama's error shape for an error already mapped to OpenAI's: the message, naming the field at fault. */
export function ollamaError(wire: WireError): { error: string } {
  const { message, param } = wire.error;
  if (!param) return { error: message };
  const name = PARAMS.find(([pattern]) => pattern.test(param))?.[1] ?? param;
  return { error: message.startsWith(param) || message.startsWith(name) ? message : `${name}: ${message}` };
}
