/**
 * The engine's requests in OpenAI's wire format, as an upstream server reads them, and the
 * upstream's answers read back into the engine's events. One dialect serves llama-server,
 * vLLM, Ollama's OpenAI endpoints and another Pustaka: the sampling fields OpenAI lacks
 * (top_k, min_p, repeat_penalty) are sent only when a request sets them, which all of those
 * read and OpenAI itself would refuse.
 */
import type { ChatEvent, ChatGenerationInput, ChatMessage, FinishReason, SamplingOptions, TextCompletionInput, ToolCall } from "../types.js";
import { UpstreamFailure } from "./upstream-client.js";

/** What the health check learnt the upstream is (some answers differ in scale or shape). */
export type UpstreamDialect = "llama-server" | "vllm" | "pustaka" | "ollama" | "openai";

function samplingFields(sampling: SamplingOptions, dialect: UpstreamDialect): Record<string, unknown> {
  const out: Record<string, unknown> = { temperature: sampling.temperature };
  if (sampling.topP !== undefined) out.top_p = sampling.topP;
  if (sampling.topK !== undefined) out.top_k = sampling.topK;
  if (sampling.minP !== undefined) out.min_p = sampling.minP;
  if (sampling.seed !== undefined) out.seed = sampling.seed;
  if (sampling.frequencyPenalty !== undefined) out.frequency_penalty = sampling.frequencyPenalty;
  if (sampling.presencePenalty !== undefined) out.presence_penalty = sampling.presencePenalty;
  if (sampling.repeatPenalty !== undefined) out[dialect === "vllm" ? "repetition_penalty" : "repeat_penalty"] = sampling.repeatPenalty;
  return out;
}

function wireMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.toolCalls.length > 0 ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })) } : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

/** A streamed chat completion request for `model` upstream. */
export function chatBody(model: string, input: ChatGenerationInput, dialect: UpstreamDialect, extra: { maxTokens?: number; logprobs?: number } = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    messages: input.messages.map(wireMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...samplingFields(input.sampling, dialect),
  };
  const maxTokens = extra.maxTokens ?? input.maxTokens;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (input.stop.length > 0) body.stop = input.stop;
  if (input.tools.length > 0 && input.toolChoice !== "none") {
    body.tools = input.tools.map((tool) => ({ type: "function", function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.parameters ?? { type: "object", properties: {} } } }));
    body.tool_choice = typeof input.toolChoice === "object" ? { type: "function", function: { name: input.toolChoice.name } } : input.toolChoice;
  }
  if (input.responseFormat.type === "json_object") body.response_format = { type: "json_object" };
  if (input.responseFormat.type === "json_schema") body.response_format = { type: "json_schema", json_schema: { name: input.responseFormat.name, schema: input.responseFormat.schema, strict: true } };
  if (input.promptCache === false && dialect === "llama-server") body.cache_prompt = false;
  if (extra.logprobs !== undefined) {
    body.logprobs = true;
    body.top_logprobs = extra.logprobs;
  }
  return body;
}

/** A streamed text completion request (OpenAI's legacy completions) for `model` upstream. */
export function completionBody(model: string, input: TextCompletionInput, dialect: UpstreamDialect): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    prompt: input.prompt,
    stream: true,
    stream_options: { include_usage: true },
    ...samplingFields(input.sampling, dialect),
  };
  if (input.suffix !== undefined) body.suffix = input.suffix;
  if (input.maxTokens !== undefined) body.max_tokens = input.maxTokens;
  if (input.stop.length > 0) body.stop = input.stop;
  if (input.promptCache === false && dialect === "llama-server") body.cache_prompt = false;
  return body;
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

interface WireChunk {
  choices?: {
    index?: number;
    text?: string | null;
    delta?: { content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] | null } | null;
    finish_reason?: string | null;
    /** vLLM: the stop string (or token id) that ended the generation. */
    stop_reason?: string | number | null;
  }[];
  usage?: WireUsage | null;
  /** llama-server: prompt tokens taken from its cache. */
  timings?: { cache_n?: number } | null;
}

/**
 * Reads one streamed chat or text completion: text deltas as they come, tool-call fragments
 * joined, and at the end the finish reason and the upstream's own token counts.
 */
export class StreamDecoder {
  private finish: string | null = null;
  private stopSequence: string | undefined;
  private usage: WireUsage | null = null;
  private cached = 0;
  private completionChunks = 0;
  private readonly calls: { id: string; name: string; arguments: string }[] = [];

  constructor(private readonly what: string) {}

  /** The text events of one upstream chunk. */
  push(data: unknown): ChatEvent[] {
    if (typeof data !== "object" || data === null) throw new UpstreamFailure(`${this.what} sent an event that is not an object`, "protocol");
    const chunk = data as WireChunk;
    if (chunk.usage) this.usage = chunk.usage;
    if (typeof chunk.timings?.cache_n === "number") this.cached = chunk.timings.cache_n;
    const out: ChatEvent[] = [];
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const text = choice.delta?.content ?? choice.text ?? null;
      if (typeof text === "string" && text.length > 0) {
        this.completionChunks++;
        out.push({ type: "text", text });
      }
      for (const fragment of choice.delta?.tool_calls ?? []) {
        const index = fragment.index ?? this.calls.length;
        if (index < 0 || index > 255) throw new UpstreamFailure(`${this.what} sent a tool call with index ${index}`, "protocol");
        const call = (this.calls[index] ??= { id: "", name: "", arguments: "" });
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.name += fragment.function.name;
        if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
      }
      if (choice.finish_reason) this.finish = choice.finish_reason;
      if (typeof choice.stop_reason === "string") this.stopSequence = choice.stop_reason;
    }
    return out;
  }

  /** The end event, once the stream finished; a stream without a finish reason was cut short. */
  end(): Extract<ChatEvent, { type: "end" }> {
    if (this.finish === null) throw new UpstreamFailure(`${this.what} ended its answer without a finish reason`, "protocol");
    const toolCalls: ToolCall[] = this.calls.filter((call) => call.name).map((call, i) => ({ id: call.id || `call_${i}`, name: call.name, arguments: call.arguments || "{}" }));
    const reason: FinishReason = toolCalls.length > 0 || this.finish === "tool_calls" || this.finish === "function_call" ? "tool_calls" : this.finish === "length" ? "length" : "stop";
    return {
      type: "end",
      finishReason: reason,
      toolCalls,
      completionTokens: this.usage?.completion_tokens ?? this.completionChunks,
      cachedTokens: this.usage?.prompt_tokens_details?.cached_tokens ?? this.cached,
      // Only vLLM says which stop sequence matched; llama-server's OpenAI answers do not.
      ...(reason === "stop" && this.stopSequence !== undefined ? { stopSequence: this.stopSequence } : {}),
      ...(typeof this.usage?.prompt_tokens === "number" ? { promptTokens: this.usage.prompt_tokens } : {}),
    };
  }
}

/** The first generated token's alternatives (`logprobs.content[0].top_logprobs`), as token text → probability. */
export function firstTokenAlternatives(data: unknown): Map<string, number> | null {
  const choice = (data as { choices?: { logprobs?: { content?: { token: string; logprob: number; top_logprobs?: { token: string; logprob: number }[] }[] | null } | null }[] })?.choices?.[0];
  const first = choice?.logprobs?.content?.[0];
  if (!first) return null;
  const out = new Map<string, number>();
  for (const alt of [first, ...(first.top_logprobs ?? [])]) {
    if (typeof alt.token === "string" && typeof alt.logprob === "number" && !out.has(alt.token)) out.set(alt.token, Math.exp(alt.logprob));
  }
  return out;
}

/**
 * How likely each choice is as the start of the reply, from the first token's alternatives:
 * a token that begins a choice (case and surrounding space ignored) counts for it; normalised
 * over the choices (uniform when none of them shows among the alternatives).
 */
export function choiceProbabilities(alternatives: Map<string, number>, choices: readonly string[]): number[] {
  const mass = choices.map((choice) => {
    const wanted = choice.trim().toLowerCase();
    let sum = 0;
    for (const [token, p] of alternatives) {
      const t = token.trim().toLowerCase();
      if (t.length > 0 && wanted.startsWith(t)) sum += p;
    }
    return sum;
  });
  const total = mass.reduce((a, b) => a + b, 0);
  return total > 0 ? mass.map((m) => m / total) : choices.map(() => 1 / choices.length);
}

/** Embedding vectors from an OpenAI embeddings answer (float arrays or base64), in input order. */
export function embeddingVectors(data: unknown, count: number, what: string): { vectors: Float32Array[]; promptTokens: number | null } {
  const body = data as { data?: { index?: number; embedding?: unknown }[]; usage?: WireUsage };
  if (!Array.isArray(body?.data) || body.data.length !== count) throw new UpstreamFailure(`${what} answered ${Array.isArray(body?.data) ? body.data.length : "no"} embeddings for ${count} inputs`, "protocol");
  const vectors = new Array<Float32Array>(count);
  body.data.forEach((item, position) => {
    const index = item.index ?? position;
    if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index]) throw new UpstreamFailure(`${what} answered an embedding with index ${index}`, "protocol");
    vectors[index] = unitVector(readVector(item.embedding, what));
  });
  const width = vectors[0]?.length ?? 0;
  if (vectors.some((v) => v.length !== width || width === 0)) throw new UpstreamFailure(`${what} answered embeddings of different widths`, "protocol");
  return { vectors, promptTokens: typeof body.usage?.prompt_tokens === "number" ? body.usage.prompt_tokens : null };
}

function readVector(value: unknown, what: string): Float32Array {
  if (Array.isArray(value)) {
    // llama-server answers a list of vectors for an input it pooled per token (--pooling none): refused.
    if (!value.every((x) => typeof x === "number" && Number.isFinite(x))) throw new UpstreamFailure(`${what} answered an embedding that is not a list of numbers (is the model pooled?)`, "protocol");
    return Float32Array.from(value as number[]);
  }
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "base64");
    if (bytes.length % 4 !== 0) throw new UpstreamFailure(`${what} answered a base64 embedding of ${bytes.length} bytes`, "protocol");
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  }
  throw new UpstreamFailure(`${what} answered an embedding that is neither numbers nor base64`, "protocol");
}

/** The engine promises unit-length vectors; upstreams mostly normalise already. */
function unitVector(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0 && Math.abs(norm - 1) > 1e-4) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/**
 * Relevance scores from a rerank answer (`results[{index, relevance_score}]`), in document
 * order, as probabilities: llama-server answers the classification head's raw logit, which
 * is squashed as Pustaka's own engine does; vLLM and Pustaka already answer probabilities.
 */
export function rerankScores(data: unknown, count: number, dialect: UpstreamDialect, what: string): { scores: number[]; promptTokens: number | null } {
  const body = data as { results?: { index?: number; relevance_score?: number; score?: number }[]; usage?: WireUsage & { total_tokens?: number } };
  if (!Array.isArray(body?.results)) throw new UpstreamFailure(`${what} answered no rerank results`, "protocol");
  const scores: number[] = new Array<number>(count).fill(Number.NaN);
  for (const result of body.results) {
    const index = result.index;
    const raw = result.relevance_score ?? result.score;
    if (!Number.isInteger(index) || index! < 0 || index! >= count || typeof raw !== "number" || !Number.isFinite(raw)) throw new UpstreamFailure(`${what} answered a rerank result it should not have (index ${index})`, "protocol");
    scores[index!] = raw;
  }
  if (scores.some((s) => Number.isNaN(s))) throw new UpstreamFailure(`${what} ranked ${body.results.length} of ${count} documents`, "protocol");
  // Logits (llama-server, or any score outside 0–1) are squashed all together, never some of them.
  if (dialect === "llama-server" || scores.some((s) => s < 0 || s > 1)) for (let i = 0; i < count; i++) scores[i] = 1 / (1 + Math.exp(-scores[i]!));
  const usage = body.usage?.prompt_tokens ?? body.usage?.total_tokens;
  return { scores, promptTokens: typeof usage === "number" ? usage : null };
}
