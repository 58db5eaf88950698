/**
 * Anthropic Messages wire format (`POST /v1/messages`, `/v1/messages/count_tokens`): the
 * request schema (strict; what cannot be honoured is refused by name), its translation
 * into the engine's chat input, the `message` object, the stream's events, and
 * Anthropic's error shape.
 */
import { z } from "zod";
import type { ChatEvent, ChatGenerationInput, ChatMessage, FinishReason, ToolCall } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import type { WireError } from "../error-handler.js";

const unsupported = (why: string) =>
  z
    .unknown()
    .optional()
    .refine((v) => v === undefined || v === null, { message: why });

const CacheControl = z.object({ type: z.literal("ephemeral"), ttl: z.string().optional() }).strict().optional();
const TextBlock = z.object({ type: z.literal("text"), text: z.string(), cache_control: CacheControl, citations: z.array(z.unknown()).nullable().optional() }).strict();
const ToolUseBlock = z.object({ type: z.literal("tool_use"), id: z.string().min(1).max(256), name: z.string().min(1), input: z.record(z.string(), z.unknown()), cache_control: CacheControl }).strict();
const ToolResultBlock = z
  .object({
    type: z.literal("tool_result"),
    tool_use_id: z.string().min(1).max(256),
    content: z.union([z.string(), z.array(z.union([TextBlock, z.object({ type: z.string() }).loose()]))]).optional(),
    is_error: z.boolean().optional(),
    cache_control: CacheControl,
  })
  .strict();
/** Any other block (image, document, thinking, …): recognised, then refused by name. */
const OtherBlock = z.object({ type: z.string() }).loose();
const Block = z.union([TextBlock, ToolUseBlock, ToolResultBlock, OtherBlock]);

const Message = z.object({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(Block)]) }).strict();

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const Tool = z
  .object({
    name: z.string().regex(TOOL_NAME, "tool names are 1-64 letters, digits, '_' or '-'"),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()),
    type: z.literal("custom").optional(),
    cache_control: CacheControl,
  })
  .strict();

const ToolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }).strict(),
  z.object({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }).strict(),
  z.object({ type: z.literal("tool"), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }).strict(),
  z.object({ type: z.literal("none") }).strict(),
]);

const common = {
  model: z.string().min(1).max(256),
  messages: z.array(Message).min(1, "messages must contain at least one message"),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  tools: z.array(Tool).max(128).optional(),
  tool_choice: ToolChoice.optional(),
  thinking: unsupported("extended thinking is not supported by this server's models"),
  mcp_servers: unsupported("MCP servers are not supported"),
};

export const MessagesRequestSchema = z
  .object({
    ...common,
    max_tokens: z.number().int().min(1),
    stop_sequences: z.array(z.string().min(1)).max(16).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    top_k: z.number().int().min(0).optional(),
    metadata: z.object({ user_id: z.string().max(256).nullable().optional() }).strict().optional(),
    service_tier: z.enum(["auto", "standard_only"]).optional(),
    container: unsupported("containers (server-side tools) are not supported"),
  })
  .strict();

export const CountTokensRequestSchema = z.object(common).strict();

export type WireMessagesRequest = z.infer<typeof MessagesRequestSchema>;
type WireBlock = z.infer<typeof Block>;

function refuseBlock(block: WireBlock, param: string): never {
  throw invalidRequest(`${param}: content blocks of type '${block.type}' are not supported; this server's models read text and tools only`, "unsupported_content_type", `${param}.type`);
}

function toolResultText(block: z.infer<typeof ToolResultBlock>, param: string): string {
  const content = block.content ?? "";
  const text = typeof content === "string" ? content : content.map((part, i) => (part.type === "text" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : refuseBlock(part as WireBlock, `${param}.content.${i}`))).join("");
  return block.is_error ? `Error: ${text}` : text;
}

/** Anthropic messages as the engine's chat messages (tool results become tool messages). */
function toMessages(request: { system?: WireMessagesRequest["system"]; messages: WireMessagesRequest["messages"] }): ChatMessage[] {
  const out: ChatMessage[] = [];
  const system = typeof request.system === "string" ? request.system : (request.system ?? []).map((b) => b.text).join("\n");
  if (system) out.push({ role: "system", content: system });
  request.messages.forEach((message, i) => {
    const param = `messages.${i}.content`;
    const blocks: WireBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "assistant") {
      let text = "";
      const toolCalls: ToolCall[] = [];
      blocks.forEach((block, j) => {
        if (block.type === "text") text += (block as { text: string }).text;
        else if (block.type === "tool_use") {
          const use = block as z.infer<typeof ToolUseBlock>;
          toolCalls.push({ id: use.id, name: use.name, arguments: JSON.stringify(use.input) });
        } else refuseBlock(block, `${param}.${j}`);
      });
      out.push({ role: "assistant", content: text || null, toolCalls });
      return;
    }
    let text = "";
    blocks.forEach((block, j) => {
      if (block.type === "text") text += (block as { text: string }).text;
      else if (block.type === "tool_result") {
        const result = block as z.infer<typeof ToolResultBlock>;
        out.push({ role: "tool", toolCallId: result.tool_use_id, content: toolResultText(result, `${param}.${j}`) });
      } else refuseBlock(block, `${param}.${j}`);
    });
    if (text) out.push({ role: "user", content: text });
  });
  return out;
}

function toTools(request: { tools?: WireMessagesRequest["tools"]; tool_choice?: WireMessagesRequest["tool_choice"] }): Pick<ChatGenerationInput, "tools" | "toolChoice"> {
  const tools = (request.tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema }));
  if (new Set(tools.map((t) => t.name)).size !== tools.length) throw invalidRequest("tools contain the same name twice", "invalid_parameter", "tools");
  const choice = request.tool_choice;
  const toolChoice = !choice || choice.type === "auto" ? "auto" : choice.type === "any" ? "required" : choice.type === "none" ? "none" : { name: choice.name };
  return { tools, toolChoice };
}

export function toAnthropicChatInput(request: WireMessagesRequest): ChatGenerationInput {
  return {
    messages: toMessages(request),
    ...toTools(request),
    responseFormat: { type: "text" },
    maxTokens: request.max_tokens,
    stop: request.stop_sequences ?? [],
    // Anthropic's default temperature is 1.
    sampling: { temperature: request.temperature ?? 1, topP: request.top_p, topK: request.top_k },
  };
}

export function toCountInput(request: z.infer<typeof CountTokensRequestSchema>): Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice"> {
  return { messages: toMessages(request), ...toTools(request) };
}

type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

function stopReason(finish: FinishReason, stopSequence: string | undefined): StopReason {
  if (finish === "length") return "max_tokens";
  if (finish === "tool_calls") return "tool_use";
  return stopSequence ? "stop_sequence" : "end_turn";
}

/** A tool call's arguments as Anthropic's `input` object (raw text kept under `_raw` when cut short). */
function toolInput(call: ToolCall): Record<string, unknown> {
  try {
    const parsed = JSON.parse(call.arguments) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    return { _raw: call.arguments };
  }
}

export interface MessageMeta {
  id: string;
  model: string;
}

type ContentBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** The non-streamed `message` object. */
export function messageObject(meta: MessageMeta, result: { content: string; toolCalls: ToolCall[]; finishReason: FinishReason; stopSequence?: string | undefined; usage: { promptTokens: number; completionTokens: number } }) {
  const content: ContentBlock[] = [];
  if (result.content) content.push({ type: "text", text: result.content });
  for (const call of result.toolCalls) content.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call) });
  return {
    id: meta.id,
    type: "message" as const,
    role: "assistant" as const,
    model: meta.model,
    content,
    stop_reason: stopReason(result.finishReason, result.stopSequence),
    stop_sequence: result.stopSequence ?? null,
    usage: { input_tokens: result.usage.promptTokens, output_tokens: result.usage.completionTokens },
  };
}

export interface NamedEvent {
  event: string;
  data: unknown;
}

/**
 * The stream's events, as Anthropic sends them: `message_start`, a text block's
 * `content_block_start`/`_delta`/`_stop`, each tool call as a `tool_use` block with its
 * input as one `input_json_delta`, then `message_delta` (stop reason, output tokens) and
 * `message_stop`.
 */
export async function* messageEvents(meta: MessageMeta, events: AsyncIterable<ChatEvent>, promptTokens: number): AsyncGenerator<NamedEvent, void, undefined> {
  yield {
    event: "message_start",
    data: { type: "message_start", message: { id: meta.id, type: "message", role: "assistant", model: meta.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: promptTokens, output_tokens: 0 } } },
  };
  let index = 0;
  let textOpen = false;
  for await (const event of events) {
    if (event.type === "text") {
      if (!event.text) continue;
      if (!textOpen) {
        yield { event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } };
        textOpen = true;
      }
      yield { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: event.text } } };
      continue;
    }
    if (textOpen) {
      yield { event: "content_block_stop", data: { type: "content_block_stop", index } };
      index++;
    }
    for (const call of event.toolCalls) {
      yield { event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } } };
      yield { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(toolInput(call)) } } };
      yield { event: "content_block_stop", data: { type: "content_block_stop", index } };
      index++;
    }
    yield {
      event: "message_delta",
      data: { type: "message_delta", delta: { stop_reason: stopReason(event.finishReason, event.stopSequence), stop_sequence: event.stopSequence ?? null }, usage: { output_tokens: event.completionTokens } },
    };
    yield { event: "message_stop", data: { type: "message_stop" } };
  }
}

/** Paths answered in Anthropic's error shape. */
export const ANTHROPIC_PATHS = /^\/v1\/messages(\/|$)/;

const ERROR_TYPES: Record<number, string> = { 400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error" };

/** Anthropic's error shape for an error already mapped to OpenAI's. */
export function anthropicError(status: number, wire: WireError): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"), message: wire.error.param ? `${wire.error.param}: ${wire.error.message}` : wire.error.message } };
}
