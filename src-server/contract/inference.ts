/** The API contract: OpenAI chat completions and embeddings, as this server sends them. Types only. */
import type { Usage } from "./common.js";

export type FinishReason = "stop" | "length" | "tool_calls";

export interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatRequestMessage =
  | { role: "system" | "developer" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; content: string; tool_call_id: string };

/** The parts of a chat request the workbench uses; the server accepts OpenAI's full set (see docs/api.md). */
export interface ChatRequest {
  model?: string;
  messages: ChatRequestMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  max_tokens?: number;
  seed?: number;
  stop?: string | string[];
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: {
    index: number;
    message: { role: "assistant"; content: string | null; refusal: null; tool_calls?: WireToolCall[] };
    logprobs: null;
    finish_reason: FinishReason;
  }[];
  usage: Usage;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: {
    index: number;
    delta: { role?: "assistant"; content?: string; refusal?: null; tool_calls?: (WireToolCall & { index: number })[] };
    logprobs: null;
    finish_reason: FinishReason | null;
  }[];
  /** Present (null until the last chunk) when `stream_options.include_usage` is true. */
  usage?: Usage | null;
}

/**
 * `POST /v1/rerank` (= `/v1/reranking`, `/rerank`, `/reranking`): the request shape shared by
 * llama.cpp's server, Jina and Cohere.
 */
export interface RerankRequest {
  /** A `rerank` model; default: the configured default reranker, else the only one installed. */
  model?: string;
  query: string;
  /** 1–1000 texts; Jina/Cohere v1 style `{ text }` objects are accepted too. */
  documents: (string | { text: string })[];
  /** Results to return, best first; larger than the documents is clamped. Default: all. */
  top_n?: number;
  /** Echo each document's text in its result as `document.text`. Default false. */
  return_documents?: boolean;
}

export interface RerankResult {
  /** Position of the document in the request. */
  index: number;
  /** The model's probability that the document is relevant, 0–1. */
  relevance_score: number;
  document?: { text: string };
}

export interface RerankResponse {
  /** `rerank-…`, one per response (Cohere's `id`). */
  id: string;
  object: "list";
  model: string;
  /** Sorted by `relevance_score`, highest first; ties keep request order. */
  results: RerankResult[];
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface EmbeddingList {
  object: "list";
  data: { object: "embedding"; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** `POST /v1/completions`: OpenAI's legacy text completions (the parts beyond `prompt` as for chat). */
export interface CompletionRequest {
  model?: string;
  /** Text, several texts (one choice each), token ids, or several lists of token ids. */
  prompt: string | string[] | number[] | number[][];
  /** Fill-in-the-middle: the text after the gap (models with FIM tokens only; else 400 `fim_not_supported`). */
  suffix?: string;
  /** Default: until the model stops or its context is full (as llama.cpp's server, not OpenAI's 16). */
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  seed?: number;
  /** Send the prompt back before the completion. */
  echo?: boolean;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

export interface TextCompletion {
  /** `cmpl-…`; streamed chunks share it. */
  id: string;
  object: "text_completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: { text: string; index: number; logprobs: null; finish_reason: "stop" | "length" | null }[];
  /** On the full object; on a stream only the last chunk's (with `stream_options.include_usage`). */
  usage?: Usage | null;
}
