/**
 * OpenAI Responses wire format (`POST /v1/responses`): the request schema (what cannot be
 * honoured is refused by name), its input items as engine messages, the `response`
 * object with its output items, and the stream's typed events.
 */
import { z } from "zod";
import type { ChatEvent, ChatGenerationInput, ChatMessage, FinishReason, ResponseFormat, ToolCall } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import { randomBase62 } from "../../ids.js";

const unsupported = (why: string) =>
  z
    .unknown()
    .optional()
    .refine((v) => v === undefined || v === null, { message: why });

const InputText = z.object({ type: z.literal("input_text"), text: z.string() }).strict();
const OutputText = z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()).optional(), logprobs: z.array(z.unknown()).optional() }).strict();
/** Images, files, audio, refusals…: recognised, then refused by name. */
const OtherPart = z.object({ type: z.string() }).loose();
const Part = z.union([InputText, OutputText, OtherPart]);

const MessageItem = z
  .object({
    type: z.literal("message").optional(),
    id: z.string().optional(),
    status: z.string().optional(),
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.union([z.string(), z.array(Part)]),
  })
  .strict();
const FunctionCallItem = z
  .object({ type: z.literal("function_call"), id: z.string().optional(), call_id: z.string().min(1).max(256), name: z.string().min(1), arguments: z.string(), status: z.string().optional() })
  .strict();
const FunctionCallOutputItem = z
  .object({ type: z.literal("function_call_output"), id: z.string().optional(), call_id: z.string().min(1).max(256), output: z.union([z.string(), z.array(Part)]), status: z.string().optional() })
  .strict();
/** Reasoning, item references, server-side tool calls…: refused by name. */
const OtherItem = z.object({ type: z.string() }).loose();
const Item = z.union([MessageItem, FunctionCallItem, FunctionCallOutputItem, OtherItem]);

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const FunctionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().regex(FUNCTION_NAME, "function names are 1-64 letters, digits, '_' or '-'"),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .strict();
const OtherTool = z.object({ type: z.string() }).loose();

const TextFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }).strict(),
  z.object({ type: z.literal("json_object") }).strict(),
  z
    .object({
      type: z.literal("json_schema"),
      name: z.string().regex(FUNCTION_NAME),
      schema: z.record(z.string(), z.unknown()),
      description: z.string().optional(),
      strict: z.boolean().nullable().optional(),
    })
    .strict(),
]);

export const ResponsesRequestSchema = z
  .object({
    model: z.string().min(1).max(256).optional(),
    input: z.union([z.string(), z.array(Item).min(1, "input must hold at least one item")]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().min(1).max(256).nullable().optional(),
    tools: z.array(z.union([FunctionTool, OtherTool])).max(128).optional(),
    tool_choice: z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), name: z.string().min(1) }).strict()]).optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    text: z.object({ format: TextFormat.optional(), verbosity: z.enum(["low", "medium", "high"]).nullable().optional() }).strict().optional(),
    max_output_tokens: z.number().int().min(1).nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_obfuscation: z.boolean().optional() }).strict().nullable().optional(),
    store: z.boolean().nullable().optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    user: z.string().max(256).optional(),
    safety_identifier: z.string().max(256).optional(),
    prompt_cache_key: z.string().max(256).optional(),
    service_tier: z.enum(["auto", "default"]).nullable().optional(),
    truncation: z.literal("disabled", "only truncation 'disabled' is supported: a conversation too long for the context is refused, never cut").nullable().optional(),
    include: z.array(z.string()).max(0, "include is not supported: there is nothing extra to include").nullable().optional(),
    reasoning: unsupported("reasoning is not supported by this server's models"),
    background: z.literal(false, "background responses are not supported").nullable().optional(),
    conversation: unsupported("conversations are not supported; continue with previous_response_id"),
    prompt: unsupported("stored prompts are not supported"),
    top_logprobs: unsupported("top_logprobs is not supported"),
    max_tool_calls: z.number().int().min(1).nullable().optional(),
  })
  .strict();

export type WireResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
type WireItem = z.infer<typeof Item>;

function partsText(content: string | z.infer<typeof Part>[], param: string): string {
  if (typeof content === "string") return content;
  return content
    .map((part, i) => {
      if ((part.type === "input_text" || part.type === "output_text") && typeof (part as { text?: unknown }).text === "string") return (part as { text: string }).text;
      throw invalidRequest(`${param}.${i}: content of type '${part.type}' is not supported; this server's models read text only`, "unsupported_content_type", `${param}.${i}.type`);
    })
    .join("");
}

/** The request's input items as they are kept for `input_items` (each with an id). */
export function inputItemsOf(request: WireResponsesRequest): Record<string, unknown>[] {
  const items: WireItem[] = typeof request.input === "string" ? [{ type: "message", role: "user", content: request.input }] : request.input;
  return items.map((item) => {
    const kind = (item as { type?: string }).type ?? "message";
    const prefix = kind === "function_call" ? "fc_" : kind === "function_call_output" ? "fco_" : "msg_";
    const content = kind === "message" && typeof (item as { content: unknown }).content === "string" ? [{ type: "input_text", text: (item as { content: string }).content }] : (item as { content?: unknown }).content;
    return { id: (item as { id?: string }).id ?? `${prefix}${randomBase62(24)}`, ...item, type: kind, ...(content !== undefined ? { content } : {}) };
  });
}

/** The input items as engine messages (function calls join the assistant turn before them). */
export function inputMessages(request: WireResponsesRequest): ChatMessage[] {
  const items: WireItem[] = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  const out: ChatMessage[] = [];
  items.forEach((item, i) => {
    const type = (item as { type?: string }).type ?? "message";
    const param = `input.${i}`;
    if (type === "message") {
      const message = item as z.infer<typeof MessageItem>;
      const text = partsText(message.content, `${param}.content`);
      if (message.role === "assistant") out.push({ role: "assistant", content: text, toolCalls: [] });
      else out.push({ role: message.role === "user" ? "user" : "system", content: text });
      return;
    }
    if (type === "function_call") {
      const call = item as z.infer<typeof FunctionCallItem>;
      const last = out.at(-1);
      const toolCall = { id: call.call_id, name: call.name, arguments: call.arguments };
      if (last?.role === "assistant") last.toolCalls.push(toolCall);
      else out.push({ role: "assistant", content: null, toolCalls: [toolCall] });
      return;
    }
    if (type === "function_call_output") {
      const output = item as z.infer<typeof FunctionCallOutputItem>;
      out.push({ role: "tool", toolCallId: output.call_id, content: partsText(output.output, `${param}.output`) });
      return;
    }
    throw invalidRequest(`${param}: input items of type '${type}' are not supported (supported: message, function_call, function_call_output)`, "unsupported_input_item", `${param}.type`);
  });
  return out;
}

function responseFormat(request: WireResponsesRequest): ResponseFormat {
  const format = request.text?.format;
  if (!format || format.type === "text") return { type: "text" };
  if (format.type === "json_object") return { type: "json_object" };
  return { type: "json_schema", name: format.name, schema: format.schema };
}

/** The engine input: instructions, then the earlier conversation, then this input. */
export function toResponsesChatInput(request: WireResponsesRequest, earlier: ChatMessage[]): ChatGenerationInput {
  const tools = (request.tools ?? []).map((tool, i) => {
    if (tool.type !== "function") throw invalidRequest(`tools.${i}: tools of type '${tool.type}' (server-side tools) are not supported; send function tools`, "unsupported_tool_type", `tools.${i}.type`);
    const fn = tool as z.infer<typeof FunctionTool>;
    return { name: fn.name, description: fn.description ?? undefined, parameters: fn.parameters ?? undefined };
  });
  if (new Set(tools.map((t) => t.name)).size !== tools.length) throw invalidRequest("tools contain the same function name twice", "invalid_parameter", "tools");
  const choice = request.tool_choice ?? "auto";
  return {
    messages: [...(request.instructions ? [{ role: "system" as const, content: request.instructions }] : []), ...earlier, ...inputMessages(request)],
    tools,
    toolChoice: typeof choice === "object" ? { name: choice.name } : choice,
    responseFormat: responseFormat(request),
    maxTokens: request.max_output_tokens ?? undefined,
    stop: [],
    sampling: { temperature: request.temperature ?? 1, topP: request.top_p ?? undefined },
  };
}

/** What a run produced, in this API's terms. */
export interface ResponseOutcome {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** `cachedTokens`: prompt tokens reused from the prompt cache (absent on responses stored before it was recorded). */
  usage: { promptTokens: number; completionTokens: number; cachedTokens?: number | undefined };
}

export interface ResponseMeta {
  id: string;
  createdAt: number;
  model: string;
  /** Ids of the output items, fixed before the stream starts. */
  messageId: string;
}

const functionCallItem = (call: ToolCall) => ({ type: "function_call" as const, id: `fc_${call.id.replace(/^call_/, "")}`, call_id: call.id, name: call.name, arguments: call.arguments, status: "completed" as const });

/** The output items: the assistant's message (when it wrote text), then one item per tool call. */
export function outputItems(meta: ResponseMeta, outcome: Pick<ResponseOutcome, "text" | "toolCalls" | "finishReason">): Record<string, unknown>[] {
  const status = outcome.finishReason === "length" ? "incomplete" : "completed";
  const items: Record<string, unknown>[] = [];
  if (outcome.text || outcome.toolCalls.length === 0) items.push({ type: "message", id: meta.messageId, status, role: "assistant", content: [{ type: "output_text", text: outcome.text, annotations: [], logprobs: [] }] });
  for (const call of outcome.toolCalls) items.push(functionCallItem(call));
  return items;
}

/** The `response` object; `outcome` null while it is in progress. */
export function responseObject(meta: ResponseMeta, request: WireResponsesRequest, outcome: ResponseOutcome | null): Record<string, unknown> {
  const incomplete = outcome?.finishReason === "length";
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: outcome === null ? "in_progress" : incomplete ? "incomplete" : "completed",
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: meta.model,
    output: outcome ? outputItems(meta, outcome) : [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: request.store !== false,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: "text" } },
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: outcome
      ? {
          input_tokens: outcome.usage.promptTokens,
          input_tokens_details: { cached_tokens: outcome.usage.cachedTokens ?? 0 },
          output_tokens: outcome.usage.completionTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: outcome.usage.promptTokens + outcome.usage.completionTokens,
        }
      : null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/**
 * The stream's events, typed as OpenAI sends them, each with a `sequence_number`:
 * `response.created`, `response.in_progress`, the message item (`output_item.added`,
 * `content_part.added`, `output_text.delta`…, `output_text.done`, `content_part.done`,
 * `output_item.done`), each function call item (`output_item.added`,
 * `function_call_arguments.delta`, `.done`, `output_item.done`), then
 * `response.completed` (or `response.incomplete`). `onDone` gets the outcome.
 */
export async function* responseEvents(
  meta: ResponseMeta,
  request: WireResponsesRequest,
  events: AsyncIterable<ChatEvent>,
  promptTokens: number,
  onDone: (outcome: ResponseOutcome) => Promise<void>,
): AsyncGenerator<{ event: string; data: Record<string, unknown> }, void, undefined> {
  let sequence = 0;
  const emit = (type: string, fields: Record<string, unknown>) => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
  yield emit("response.created", { response: responseObject(meta, request, null) });
  yield emit("response.in_progress", { response: responseObject(meta, request, null) });
  let text = "";
  let messageOpen = false;
  let outputIndex = 0;
  const part = (t: string) => ({ type: "output_text", text: t, annotations: [], logprobs: [] });
  for await (const event of events) {
    if (event.type === "text") {
      if (!event.text) continue;
      if (!messageOpen) {
        messageOpen = true;
        yield emit("response.output_item.added", { output_index: outputIndex, item: { type: "message", id: meta.messageId, status: "in_progress", role: "assistant", content: [] } });
        yield emit("response.content_part.added", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, part: part("") });
      }
      text += event.text;
      yield emit("response.output_text.delta", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, delta: event.text, logprobs: [] });
      continue;
    }
    const outcome: ResponseOutcome = { text, toolCalls: event.toolCalls, finishReason: event.finishReason, usage: { promptTokens: event.promptTokens ?? promptTokens, completionTokens: event.completionTokens, cachedTokens: event.cachedTokens } };
    const items = outputItems(meta, outcome);
    if (!messageOpen && items[0]?.type === "message") {
      // No text at all (an empty answer): the message item still opens and closes.
      yield emit("response.output_item.added", { output_index: outputIndex, item: { type: "message", id: meta.messageId, status: "in_progress", role: "assistant", content: [] } });
      yield emit("response.content_part.added", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, part: part("") });
      messageOpen = true;
    }
    if (messageOpen) {
      yield emit("response.output_text.done", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, text, logprobs: [] });
      yield emit("response.content_part.done", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, part: part(text) });
      yield emit("response.output_item.done", { output_index: outputIndex, item: items[0] });
      outputIndex++;
    }
    for (const call of event.toolCalls) {
      const item = functionCallItem(call);
      yield emit("response.output_item.added", { output_index: outputIndex, item: { ...item, arguments: "", status: "in_progress" } });
      yield emit("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta: item.arguments });
      yield emit("response.function_call_arguments.done", { item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments });
      yield emit("response.output_item.done", { output_index: outputIndex, item });
      outputIndex++;
    }
    await onDone(outcome);
    yield emit(outcome.finishReason === "length" ? "response.incomplete" : "response.completed", { response: responseObject(meta, request, outcome) });
  }
}

/** The assistant turn a response adds to the conversation. */
export function transcriptTurn(outcome: Pick<ResponseOutcome, "text" | "toolCalls">): ChatMessage {
  return { role: "assistant", content: outcome.text || null, toolCalls: outcome.toolCalls };
}
