/**
 * The one engine the services see: each model goes to the engine that serves it, the local
 * one (llama.cpp in this process) or the remote one (upstream servers). Services never know
 * which; a corpus may embed remotely and answer locally, or the other way round.
 */
import type { ModelEntry } from "../models/model-registry.js";
import type { LlamaEngine } from "./llama-engine.js";
import type { RemoteEngine } from "./remote/remote-engine.js";
import type {
  ChatGenerationInput,
  ChatMessage,
  ChatRun,
  ChoiceScores,
  CompletionRun,
  EmbeddingResult,
  EngineStatus,
  InferenceEngine,
  RerankScores,
  TextCompletionInput,
  TokenizerLease,
  UpstreamStatus,
} from "./types.js";

type Serving = Omit<InferenceEngine, "status" | "close" | "upstreams">;

export class EngineRouter implements InferenceEngine {
  constructor(
    readonly local: LlamaEngine,
    readonly remote: RemoteEngine,
  ) {}

  private for(entry: ModelEntry): Serving {
    return entry.remote ? this.remote : this.local;
  }

  startChat(entry: ModelEntry, input: ChatGenerationInput, signal: AbortSignal): Promise<ChatRun> {
    return this.for(entry).startChat(entry, input, signal);
  }

  startCompletion(entry: ModelEntry, input: TextCompletionInput, signal: AbortSignal): Promise<CompletionRun> {
    return this.for(entry).startCompletion(entry, input, signal);
  }

  embed(entry: ModelEntry, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult> {
    return this.for(entry).embed(entry, inputs, signal);
  }

  rerank(entry: ModelEntry, query: string, documents: string[], signal: AbortSignal): Promise<RerankScores> {
    return this.for(entry).rerank(entry, query, documents, signal);
  }

  scoreChoices(entry: ModelEntry, messages: ChatMessage[], choices: string[], signal: AbortSignal): Promise<ChoiceScores> {
    return this.for(entry).scoreChoices(entry, messages, choices, signal);
  }

  contextFor(entry: ModelEntry): number | null {
    return this.for(entry).contextFor(entry);
  }

  countChatTokens(entry: ModelEntry, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<number> {
    return this.for(entry).countChatTokens(entry, input);
  }

  countTokens(entry: ModelEntry, text: string): Promise<number> {
    return this.for(entry).countTokens(entry, text);
  }

  acquireTokenizer(entry: ModelEntry): Promise<TokenizerLease> {
    return this.for(entry).acquireTokenizer(entry);
  }

  upstreams(entry: ModelEntry): UpstreamStatus[] | null {
    return entry.remote ? this.remote.upstreams(entry) : null;
  }

  status(): EngineStatus {
    return this.local.status();
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.remote.close(), this.local.close()]);
  }
}
