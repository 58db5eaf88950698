/**
 * The engine boundary: what the inference services ask of a model runtime, in the
 * service's own terms. `llama-engine.ts` implements it on node-llama-cpp,
 * `remote/remote-engine.ts` on upstream OpenAI-compatible servers, and `engine-router.ts`
 * sends each model to the one that serves it: the services never know which.
 */
import type { ModelEntry } from "../models/model-registry.js";

/** JSON Schema as given by the client (validated further by the engine). */
export type JsonSchema = Record<string, unknown>;

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as OpenAI carries them. */
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; toolCalls: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

export interface ToolDefinition {
  name: string;
  description?: string | undefined;
  parameters?: JsonSchema | undefined;
}

export type ResponseFormat = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: JsonSchema };

export interface SamplingOptions {
  /** 0 = greedy. */
  temperature: number;
  topP?: number | undefined;
  topK?: number | undefined;
  minP?: number | undefined;
  seed?: number | undefined;
  frequencyPenalty?: number | undefined;
  presencePenalty?: number | undefined;
  repeatPenalty?: number | undefined;
}

export interface ChatGenerationInput {
  messages: ChatMessage[];
  tools: ToolDefinition[];
  /**
   * `none` hides the tools from the model; `required` or `{ name }` force a call with a
   * grammar; `auto` lets the model decide (node-llama-cpp function calling).
   */
  toolChoice: "auto" | "none" | "required" | { name: string };
  responseFormat: ResponseFormat;
  /** Upper bound on generated tokens; undefined = until the context is full. */
  maxTokens?: number | undefined;
  stop: string[];
  sampling: SamplingOptions;
  /** Reuse the prompt cache (undefined: the server's `chat.promptCache`); false evaluates the whole prompt. */
  promptCache?: boolean | undefined;
}

/** A text completion: the prompt continued as is, no chat template (OpenAI's legacy completions). */
export interface TextCompletionInput {
  /** Text (special tokens in it are read as such, as llama.cpp's server does) or token ids. */
  prompt: string | number[];
  /** Fill-in-the-middle: the text the completion must lead into (models with FIM tokens only). */
  suffix?: string | undefined;
  /** Upper bound on generated tokens; undefined = until the context is full. */
  maxTokens?: number | undefined;
  stop: string[];
  sampling: SamplingOptions;
  /** Reuse the prompt cache (undefined: the server's `chat.promptCache`); false evaluates the whole prompt. */
  promptCache?: boolean | undefined;
}

export type FinishReason = "stop" | "length" | "tool_calls";

export type ChatEvent =
  | { type: "text"; text: string }
  | {
      type: "end";
      finishReason: FinishReason;
      toolCalls: ToolCall[];
      completionTokens: number;
      /** Prompt tokens taken from the sequence's cache rather than evaluated (prompt caching). */
      cachedTokens: number;
      /** The stop sequence that ended the generation, when one did. */
      stopSequence?: string | undefined;
      /**
       * The prompt's tokens as the model counted them, when that differs from what the run
       * was admitted with (a remote model's upstream reports them at the end; admission used
       * an estimate). Usage and rate limits settle to it.
       */
      promptTokens?: number | undefined;
    };

/** A generation that has been admitted (model loaded, prompt fits, sequence held). */
export interface ChatRun {
  promptTokens: number;
  /** Tokens per sequence of the serving context. */
  contextSize: number;
  /** Text deltas, then exactly one `end`. Breaking out of the loop cancels generation. */
  events: AsyncGenerator<ChatEvent, void, undefined>;
  /**
   * Starts the generation and resolves once its first event is ready, so that a failure to
   * start (a remote model's upstream refusing or unreachable) is an HTTP error rather than an
   * event inside a stream already begun. Called after admission (rate limits reserve first);
   * absent when the run started already (local models).
   */
  ready?: () => Promise<void>;
}

/** A text completion that has been admitted. */
export interface CompletionRun extends ChatRun {
  /** The prompt as text (token ids detokenized), for `echo`. */
  promptText: string;
}

export interface EmbeddingResult {
  /** One unit-length vector per input, in input order. */
  vectors: Float32Array[];
  /** Tokens evaluated, for usage. */
  promptTokens: number;
}

export interface RerankScores {
  /** One probability (0–1) per document, in document order; 0 for a document with no tokens. */
  scores: number[];
  /**
   * Tokens of every query–document pair as the model reads it (special tokens included;
   * a document longer than the context, read in overlapping windows, counts once).
   */
  promptTokens: number;
}

export interface ChoiceScores {
  /** Probability of each choice as the start of the reply, normalised over the choices. */
  probabilities: number[];
  /** Tokens of the rendered prompt. */
  promptTokens: number;
}

/** What a loaded model is serving: a context of each kind created on first use. */
export type ModelKind = "chat" | "embedding" | "rerank";

export interface TokenizerLease {
  /** Tokens of `text`, without the special tokens an embedding adds. */
  countTokens(text: string): number;
  /** Longest embedding input in tokens, special tokens excluded. */
  maxEmbeddingTokens: number;
  release(): void;
}

/** One piece of model work the engine is doing (reported to a supervisor, which explains a crash with it). */
export interface ActiveWork {
  /** `chat`, `completion`, `embed`, `rerank`, `score`, `count`; `load + …` while the model loads. */
  op: string;
  model: string;
  /** The HTTP request it serves; null for background work (indexing, the relevance gate's own calls). */
  requestId: string | null;
  /** Unix milliseconds. */
  since: number;
}

export interface EngineStatus {
  backend: string;
  /** The GPU backend in use, false for the CPU, null until llama.cpp starts (with the first model). */
  gpu: string | false | null;
  /** Threads per context; 0 = not decided yet (the physical cores, once llama.cpp starts). */
  threads: number;
  /**
   * The llama.cpp build serving (`local`: built at install; `prebuilt`: node-llama-cpp's), the
   * CPU backend variant ggml picked for this CPU (null until the first model loads), and why.
   */
  build?: { type: "local" | "prebuilt"; variant: string | null; reason: string } | null;
  /** `busy`: sequences or contexts in use; `queued`: requests waiting for one. */
  loadedModels: { id: string; path: string; kinds: ModelKind[]; activeLeases: number; busy: number; queued: number }[];
}

/** One replica of a remote model as the router sees it. */
export interface UpstreamStatus {
  id: string;
  /** `unknown` until the first health check or request. */
  state: "healthy" | "ejected" | "down" | "unknown";
  inFlight: number;
  /** Requests waiting for a replica of this model. */
  queued: number;
  lastError: string | null;
  requests: number;
  failures: number;
}

export interface InferenceEngine {
  /**
   * Admits a chat generation: loads the model if needed, renders and counts the
   * prompt (400 `context_length_exceeded` when it does not fit), waits for a free
   * sequence (503 `server_busy` when the queue is full). Aborting `signal` cancels
   * waiting and generation and frees the sequence.
   */
  startChat(model: ModelEntry, input: ChatGenerationInput, signal: AbortSignal): Promise<ChatRun>;
  /**
   * Admits a text completion on a chat model's sequences (the same queue as chat): the
   * prompt continued without a chat template, or fill-in-the-middle with a `suffix`
   * (400 `fim_not_supported` for a model without FIM tokens). Limits and cancellation as
   * for `startChat`; the events never carry tool calls.
   */
  startCompletion(model: ModelEntry, input: TextCompletionInput, signal: AbortSignal): Promise<CompletionRun>;
  /** Embeds every input with `model` (400 `context_length_exceeded` for an input too long). */
  embed(model: ModelEntry, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult>;
  /**
   * Scores each document's relevance to `query` with a reranking model (a cross-encoder).
   * A document longer than the context is read in overlapping windows and gets its best
   * window's score; a query too long to leave room for a document is 400
   * `context_length_exceeded`; a model llama.cpp cannot rank with is 400 `model_not_rerank`.
   */
  rerank(model: ModelEntry, query: string, documents: string[], signal: AbortSignal): Promise<RerankScores>;
  /**
   * How likely a chat model is to begin its reply to `messages` with each of `choices`
   * (e.g. "yes" / "no"), read from one evaluation of the prompt, nothing generated. A
   * remote OpenAI-compatible engine can answer it with `max_tokens: 1` and `logprobs`.
   */
  scoreChoices(model: ModelEntry, messages: ChatMessage[], choices: string[], signal: AbortSignal): Promise<ChoiceScores>;
  /**
   * The context one request gets on `model` in tokens (for chat, the configured context
   * per sequence, capped by what the model was trained with), without loading it; null
   * when the GGUF does not say.
   */
  contextFor(model: ModelEntry): number | null;
  /**
   * Tokens the prompt of a chat request takes (the messages and tools as the chat template
   * renders them), without generating or waiting for a sequence (loads the model). A prompt
   * too long to fit by its characters alone is 400 `context_length_exceeded`, untokenised.
   */
  countChatTokens(model: ModelEntry, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<number>;
  /** Tokens of `text` with the model's own tokenizer (loads the model). */
  countTokens(model: ModelEntry, text: string): Promise<number>;
  /** The model's tokenizer for many synchronous counts (chunking); the model stays loaded until `release`. */
  acquireTokenizer(model: ModelEntry): Promise<TokenizerLease>;
  /** A remote model's replicas and their health; null for a local model. */
  upstreams(model: ModelEntry): UpstreamStatus[] | null;
  status(): EngineStatus;
  close(): Promise<void>;
}
