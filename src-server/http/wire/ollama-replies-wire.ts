/**
 * Ollama's answers: the NDJSON objects of a generation (a line per text delta, tool calls
 * in Ollama's shape, a final line with the timings in nanoseconds), the single answers they
 * join into, and the embeddings' objects.
 */
import type { ChatEvent, FinishReason, ToolCall } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import { float32Decimal } from "./embeddings-wire.js";

export interface OllamaToolCall {
  id: string;
  function: { index: number; name: string; arguments: Record<string, unknown> };
}

/** A tool call in Ollama's shape: its arguments an object (raw text kept under `_raw` when cut short). */
export function ollamaToolCall(call: ToolCall, index: number): OllamaToolCall {
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(call.arguments) as unknown;
    args = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    args = { _raw: call.arguments };
  }
  return { id: call.id, function: { index, name: call.name, arguments: args } };
}

/** When a generation's phases happened, in `performance.now()` milliseconds. */
export interface RunTimes {
  /** The request arrived. */
  startedAt: number;
  /** The model was loaded and the prompt admitted (its tokens counted, a sequence held). */
  admittedAt: number;
}

export interface OllamaMetrics {
  total_duration: number;
  load_duration: number;
  prompt_eval_count: number;
  prompt_eval_duration: number;
  eval_count: number;
  eval_duration: number;
}

const nanoseconds = (ms: number) => Math.max(0, Math.round(ms * 1e6));

/**
 * Ollama's timings in nanoseconds. `load_duration` is the admission (loading the model when
 * it was not, rendering and counting the prompt, waiting for a sequence); the prompt's
 * evaluation lasts until the first token; generation from there to the end.
 */
export function ollamaMetrics(times: RunTimes & { firstAt: number | undefined; endedAt: number }, promptTokens: number, evalTokens: number): OllamaMetrics {
  const first = times.firstAt ?? times.endedAt;
  return {
    total_duration: nanoseconds(times.endedAt - times.startedAt),
    load_duration: nanoseconds(times.admittedAt - times.startedAt),
    prompt_eval_count: promptTokens,
    prompt_eval_duration: nanoseconds(first - times.admittedAt),
    eval_count: evalTokens,
    eval_duration: nanoseconds(times.endedAt - first),
  };
}

/** `length` when the token limit ended it; `stop` otherwise (a tool call included, as Ollama says). */
const doneReason = (finish: FinishReason) => (finish === "length" ? "length" : "stop");

export type DoneReason = "stop" | "length" | "load" | "unload";

export interface OllamaChatChunk extends Partial<OllamaMetrics> {
  model: string;
  created_at: string;
  message: { role: "assistant"; content: string; tool_calls?: OllamaToolCall[] };
  done: boolean;
  done_reason?: DoneReason;
}

export interface OllamaGenerateChunk extends Partial<OllamaMetrics> {
  model: string;
  created_at: string;
  response: string;
  done: boolean;
  done_reason?: DoneReason;
}

/** A run's text deltas and its end, timed; `now` is `performance.now` (a test passes its own clock). */
async function* timedRun(events: AsyncIterable<ChatEvent>, times: RunTimes, promptTokens: number, now: () => number): AsyncGenerator<{ text: string } | { end: ChatEvent & { type: "end" }; metrics: OllamaMetrics }> {
  let firstAt: number | undefined;
  for await (const event of events) {
    firstAt ??= now();
    if (event.type === "text") {
      if (event.text) yield { text: event.text };
      continue;
    }
    yield { end: event, metrics: ollamaMetrics({ ...times, firstAt, endedAt: now() }, event.promptTokens ?? promptTokens, event.completionTokens) };
  }
}

/** `/api/chat`'s stream: a line per text delta, the tool calls in one line, then the final line with the timings. */
export async function* ollamaChatChunks(model: string, events: AsyncIterable<ChatEvent>, times: RunTimes, promptTokens: number, now: () => number = () => performance.now()): AsyncGenerator<OllamaChatChunk, void, undefined> {
  const at = () => new Date().toISOString();
  for await (const item of timedRun(events, times, promptTokens, now)) {
    if ("text" in item) {
      yield { model, created_at: at(), message: { role: "assistant", content: item.text }, done: false };
      continue;
    }
    if (item.end.toolCalls.length > 0) yield { model, created_at: at(), message: { role: "assistant", content: "", tool_calls: item.end.toolCalls.map(ollamaToolCall) }, done: false };
    yield { model, created_at: at(), message: { role: "assistant", content: "" }, done: true, done_reason: doneReason(item.end.finishReason), ...item.metrics };
  }
}

/** `/api/generate`'s stream: a line per text delta, then the final line with the timings. */
export async function* ollamaGenerateChunks(model: string, events: AsyncIterable<ChatEvent>, times: RunTimes, promptTokens: number, now: () => number = () => performance.now()): AsyncGenerator<OllamaGenerateChunk, void, undefined> {
  for await (const item of timedRun(events, times, promptTokens, now)) {
    if ("text" in item) yield { model, created_at: new Date().toISOString(), response: item.text, done: false };
    else yield { model, created_at: new Date().toISOString(), response: "", done: true, done_reason: doneReason(item.end.finishReason), ...item.metrics };
  }
}

const cancelled = () => invalidRequest("the request was cancelled before the completion finished", "request_aborted");

/** The non-streamed `/api/chat` answer: the stream's lines joined into its final one. */
export async function collectChat(chunks: AsyncIterable<OllamaChatChunk>): Promise<OllamaChatChunk> {
  let content = "";
  const toolCalls: OllamaToolCall[] = [];
  for await (const chunk of chunks) {
    if (chunk.done) return { ...chunk, message: { role: "assistant", content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) } };
    content += chunk.message.content;
    toolCalls.push(...(chunk.message.tool_calls ?? []));
  }
  throw cancelled();
}

/** The non-streamed `/api/generate` answer. */
export async function collectGenerate(chunks: AsyncIterable<OllamaGenerateChunk>): Promise<OllamaGenerateChunk> {
  let response = "";
  for await (const chunk of chunks) {
    if (chunk.done) return { ...chunk, response };
    response += chunk.response;
  }
  throw cancelled();
}

/** The answer to a request that only loads (or releases) a model. */
export function chatLoadReply(model: string, reason: "load" | "unload"): OllamaChatChunk {
  return { model, created_at: new Date().toISOString(), message: { role: "assistant", content: "" }, done: true, done_reason: reason };
}

export function generateLoadReply(model: string, reason: "load" | "unload"): OllamaGenerateChunk {
  return { model, created_at: new Date().toISOString(), response: "", done: true, done_reason: reason };
}

/** A vector as JSON numbers with the float32 digits it holds (as `/v1/embeddings` writes them). */
export const ollamaVector = (vector: Float32Array): number[] => Array.from(vector, float32Decimal);

/** `/api/embed`'s answer. */
export function embedObject(model: string, vectors: Float32Array[], times: { startedAt: number; admittedAt: number; endedAt: number }, promptTokens: number) {
  return {
    model,
    embeddings: vectors.map(ollamaVector),
    total_duration: nanoseconds(times.endedAt - times.startedAt),
    load_duration: nanoseconds(times.admittedAt - times.startedAt),
    prompt_eval_count: promptTokens,
  };
}
