/**
 * OpenAI Responses wire format (`POST /v1/responses`): the request schema (what cannot be
 * honoured is refused by name), its input items as engine messages, the `response`
 * object with its output items, and the stream's typed events.
 */
import { z } from "zod";
import type { ChatEvent, ChatGenerationInput, ChatMessage, FinishReason, ResponseFormat, ToolCall } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import { randomBase62 } from "../../ids.js";
import { CitationMarkers, type MarkerAnnotation } from "../../rag/answer/citation-markers.js";
import { FILE_SEARCH_DEFAULT_RESULTS, fileCitations, type FileSearchRun, type FileSearchTool } from "../../rag/vector-stores/file-search.js";
import { parseFilters } from "./vector-store-wire.js";

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
/** OpenAI's `file_search`: the vector stores (Pustaka corpora) the answer is drawn from. */
const FileSearchToolSchema = z
  .object({
    type: z.literal("file_search"),
    vector_store_ids: z.array(z.string().min(1).max(128)).min(1, "name at least one vector store").max(10),
    max_num_results: z.number().int().min(1).max(50).optional(),
    // Checked by `parseFilters` (recursive, OpenAI's comparison and compound filters).
    filters: z.record(z.string(), z.unknown()).nullable().optional(),
    ranking_options: z
      .object({ ranker: z.enum(["none", "auto", "default-2024-11-15"]).optional(), score_threshold: z.number().min(0).max(1).optional() })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();
/** Server-side tools Pustaka does not run (web search, code interpreter…): recognised, then refused by name. */
const OtherTool = z.object({ type: z.string().refine((t) => t !== "function" && t !== "file_search") }).loose();

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
    tools: z.array(z.union([FunctionTool, FileSearchToolSchema, OtherTool])).max(128).optional(),
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
    user: z.string().max(256).nullable().optional(),
    safety_identifier: z.string().max(256).nullable().optional(),
    prompt_cache_key: z.string().max(256).nullable().optional(),
    service_tier: z.enum(["auto", "default"]).nullable().optional(),
    truncation: z.literal("disabled", "only truncation 'disabled' is supported: a conversation too long for the context is refused, never cut").nullable().optional(),
    include: z
      .array(z.literal("file_search_call.results", "only 'file_search_call.results' can be included"))
      .max(1)
      .nullable()
      .optional(),
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
  const tools = (request.tools ?? []).flatMap((tool, i) => {
    // file_search runs before generation (the route); the model sees its passages, not a tool.
    if (tool.type === "file_search") return [];
    if (tool.type !== "function") throw invalidRequest(`tools.${i}: tools of type '${tool.type}' are not supported; send function tools or file_search`, "unsupported_tool_type", `tools.${i}.type`);
    const fn = tool as z.infer<typeof FunctionTool>;
    return [{ name: fn.name, description: fn.description ?? undefined, parameters: fn.parameters ?? undefined }];
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

/** The request's `file_search` tool (one at most), validated; null without one or when `tool_choice` is 'none'. */
export function fileSearchToolOf(request: WireResponsesRequest): FileSearchTool | null {
  const found = (request.tools ?? []).flatMap((tool, i) => (tool.type === "file_search" ? [[tool as z.infer<typeof FileSearchToolSchema>, i] as const] : []));
  if (found.length === 0 || request.tool_choice === "none") return null;
  if (found.length > 1) throw invalidRequest("tools: give one file_search tool (it can name several vector stores)", "invalid_parameter", "tools");
  const [tool, i] = found[0]!;
  return {
    vectorStoreIds: tool.vector_store_ids.map((id, j) => {
      if (!/^vs_[A-Za-z0-9]+$/.test(id)) throw invalidRequest(`Invalid 'tools[${i}].vector_store_ids[${j}]': expected an ID that begins with 'vs_'.`, "invalid_value", `tools.${i}.vector_store_ids.${j}`);
      return id;
    }),
    maxResults: tool.max_num_results ?? FILE_SEARCH_DEFAULT_RESULTS,
    filters: tool.filters ? parseFilters(tool.filters, `tools.${i}.filters`) : undefined,
    ranking: tool.ranking_options ? { ranker: tool.ranking_options.ranker, scoreThreshold: tool.ranking_options.score_threshold } : undefined,
  };
}

/** A `file_citation` annotation of the answer's text. */
export interface FileCitation {
  type: "file_citation";
  index: number;
  file_id: string;
  filename: string;
}

/** The file_search a response ran before generating, and whether its results are to be shown (`include`). */
export interface FileSearchOutput {
  run: FileSearchRun;
  includeResults: boolean;
}

const fileSearchItem = (f: FileSearchOutput, status: "in_progress" | "searching" | "completed") => ({
  type: "file_search_call" as const,
  id: f.run.id,
  status,
  queries: f.run.queries,
  results:
    status === "completed" && f.includeResults
      ? f.run.hits.map((h) => ({ file_id: h.fileId, filename: h.filename, score: h.score, text: h.text, attributes: h.attributes, vector_store_id: h.vectorStoreId }))
      : null,
});

/**
 * The answer's `file_citation` annotations: its markers' (in the order written), then, with
 * `attribution`, those the attribution adds for supported sentences left unmarked.
 */
export function citationAnnotations(text: string, markers: readonly MarkerAnnotation[], run: FileSearchRun, attribution = true): FileCitation[] {
  return fileCitations(text, markers, run, { attribution }).map((c) => ({ type: "file_citation", index: c.index, file_id: c.fileId, filename: c.filename }));
}

/** What a run produced, in this API's terms. */
export interface ResponseOutcome {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** `cachedTokens`: prompt tokens reused from the prompt cache (absent on responses stored before it was recorded). */
  usage: { promptTokens: number; completionTokens: number; cachedTokens?: number | undefined };
  /** file_citation annotations of `text` (file_search). */
  annotations?: FileCitation[] | undefined;
}

export interface ResponseMeta {
  id: string;
  createdAt: number;
  model: string;
  /** Ids of the output items, fixed before the stream starts. */
  messageId: string;
  /** The file_search run before generation, if the request had the tool. */
  fileSearch?: FileSearchOutput | undefined;
}

const functionCallItem = (call: ToolCall) => ({ type: "function_call" as const, id: `fc_${call.id.replace(/^call_/, "")}`, call_id: call.id, name: call.name, arguments: call.arguments, status: "completed" as const });

/** The output items: the assistant's message (when it wrote text), then one item per tool call. */
export function outputItems(meta: ResponseMeta, outcome: Pick<ResponseOutcome, "text" | "toolCalls" | "finishReason" | "annotations">): Record<string, unknown>[] {
  const status = outcome.finishReason === "length" ? "incomplete" : "completed";
  const items: Record<string, unknown>[] = [];
  if (meta.fileSearch) items.push(fileSearchItem(meta.fileSearch, "completed"));
  if (outcome.text || outcome.toolCalls.length === 0) items.push({ type: "message", id: meta.messageId, status, role: "assistant", content: [{ type: "output_text", text: outcome.text, annotations: outcome.annotations ?? [], logprobs: [] }] });
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
  const fileSearch = meta.fileSearch;
  if (fileSearch) {
    // The search ran before generation: its item opens and completes first, as OpenAI's does.
    const item_id = fileSearch.run.id;
    yield emit("response.output_item.added", { output_index: outputIndex, item: fileSearchItem(fileSearch, "in_progress") });
    yield emit("response.file_search_call.in_progress", { output_index: outputIndex, item_id });
    yield emit("response.file_search_call.searching", { output_index: outputIndex, item_id });
    yield emit("response.file_search_call.completed", { output_index: outputIndex, item_id });
    yield emit("response.output_item.done", { output_index: outputIndex, item: fileSearchItem(fileSearch, "completed") });
    outputIndex++;
  }
  const markers = fileSearch ? new CitationMarkers(fileSearch.run.hits.length) : null;
  let annotations: FileCitation[] = [];
  const part = (t: string, a: FileCitation[] = []) => ({ type: "output_text", text: t, annotations: a, logprobs: [] });
  const openMessage = function* () {
    if (messageOpen) return;
    messageOpen = true;
    yield emit("response.output_item.added", { output_index: outputIndex, item: { type: "message", id: meta.messageId, status: "in_progress", role: "assistant", content: [] } });
    yield emit("response.content_part.added", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, part: part("") });
  };
  /** Shows `visible` text, then the annotations its markers made. */
  const show = function* (visible: string, final = false) {
    if (visible) {
      yield* openMessage();
      text += visible;
      yield emit("response.output_text.delta", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, delta: visible, logprobs: [] });
    }
    if (!markers || !fileSearch) return;
    const now = citationAnnotations(text, markers.annotations, fileSearch.run, final);
    for (let i = annotations.length; i < now.length; i++) {
      yield* openMessage();
      yield emit("response.output_text.annotation.added", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, annotation_index: i, annotation: now[i] });
    }
    annotations = now;
  };
  for await (const event of events) {
    if (event.type === "text") {
      if (!event.text) continue;
      yield* show(markers ? markers.feed(event.text) : event.text);
      continue;
    }
    if (markers) yield* show(markers.flush(), true);
    const outcome: ResponseOutcome = {
      text,
      toolCalls: event.toolCalls,
      finishReason: event.finishReason,
      usage: { promptTokens: event.promptTokens ?? promptTokens, completionTokens: event.completionTokens, cachedTokens: event.cachedTokens },
      annotations: markers ? annotations : undefined,
    };
    const items = outputItems(meta, outcome);
    const message = items.find((item) => item.type === "message");
    // No text at all (an empty answer): the message item still opens and closes.
    if (message) yield* openMessage();
    if (messageOpen) {
      yield emit("response.output_text.done", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, text, logprobs: [] });
      yield emit("response.content_part.done", { item_id: meta.messageId, output_index: outputIndex, content_index: 0, part: part(text, annotations) });
      yield emit("response.output_item.done", { output_index: outputIndex, item: message });
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
