/**
 * A model in memory and the contexts created for it on demand: one chat context with
 * several sequences, embedding contexts that evaluate many inputs together, and a small pool of ranking
 * contexts (rerankers).
 */
import { resolveChatWrapper, type Llama, type LlamaContextSequence, type LlamaModel, type LlamaRankingContext } from "node-llama-cpp";
import { invalidRequest } from "../errors.js";
import type { LocalModelEntry } from "../models/model-registry.js";
import type { ChatSlot } from "./chat-run.js";
import { createBatchGather, DEFAULT_BATCH_GATHER } from "./batch-gather.js";
import { EmbedBatcher } from "./embed-batcher.js";
import { LeasePool } from "./lease-pool.js";
import { LlamaEmbedWorker } from "./llama-embed-worker.js";
import { bindingOf, PromptTokenizer } from "./prompt-tokenizer.js";
import type { ModelKind } from "./types.js";

/** The largest context an embedding or ranking context gets (the model's own, up to this). */
export const MAX_ENCODER_CONTEXT = 8192;

export interface LoadedModelOptions {
  threads: number;
  /** node-llama-cpp's decode chaining as patched (BatchingOptions.decodeChain); default true. */
  decodeChain?: boolean;
  chat: { contextSize: number; sequences: number; maxQueued: number; promptCache: boolean; batchWaitMs?: number };
  embeddings: { contexts: number; maxQueued: number; batchSequences?: number; batchTokens?: number };
  rerank: { contexts: number; maxQueued: number };
  /** Told when the chat tokenizer's worker thread fails (long prompts are then tokenised on the event loop). */
  onTokenizerError?: (error: Error) => void;
}

export interface EmbedSlot {
  batcher: EmbedBatcher;
  /** Token ids of `text` as the model embeds it (beginning and end tokens included). */
  tokenize(text: string): Uint32Array;
  /** Inputs must be shorter than this, in tokens. */
  contextSize: number;
  /** Whether several inputs share an evaluation (false with the prebuilt llama.cpp binding). */
  batched: boolean;
}

export interface RankSlot {
  pool: LeasePool<LlamaRankingContext>;
  /** Contexts in the pool. */
  size: number;
  /** Tokens one query–document pair may take (longer documents are read in windows). */
  contextSize: number;
  /**
   * Tokens `query` + `document` take as the model reads them (special tokens, template).
   * Pure tokenisation: callable while the contexts are busy.
   */
  inputLength(query: string, document: string): number;
}

export class LoadedModel {
  /** Runs and requests currently holding the model. */
  activeLeases = 0;
  lastUsedAt = Date.now();
  private chatSlot: Promise<ChatSlot> | undefined;
  private embedSlot: Promise<EmbedSlot> | undefined;
  private rankSlot: Promise<RankSlot> | undefined;
  private readonly disposers: (() => Promise<void>)[] = [];
  /** Every pool created so far, for the queue and busy counts. */
  private readonly pools: { size: number; available: number; queued: number }[] = [];

  constructor(
    readonly entry: LocalModelEntry,
    readonly llama: Llama,
    readonly model: LlamaModel,
    private readonly options: LoadedModelOptions,
  ) {}

  /** Requests waiting for a sequence or context of this model. */
  get queued(): number {
    return this.pools.reduce((sum, pool) => sum + pool.queued, 0);
  }

  /** Sequences and contexts of this model in use. */
  get busy(): number {
    return this.pools.reduce((sum, pool) => sum + pool.size - pool.available, 0);
  }

  get kinds(): ModelKind[] {
    return [...(this.chatSlot ? ["chat" as const] : []), ...(this.embedSlot ? ["embedding" as const] : []), ...(this.rankSlot ? ["rerank" as const] : [])];
  }

  /** The chat context, created on first use. */
  chat(): Promise<ChatSlot> {
    this.chatSlot ??= this.createChatSlot().catch((error: unknown) => {
      this.chatSlot = undefined;
      throw error;
    });
    return this.chatSlot;
  }

  /** The embedding contexts, created on first use. */
  embedder(): Promise<EmbedSlot> {
    this.embedSlot ??= this.createEmbedSlot().catch((error: unknown) => {
      this.embedSlot = undefined;
      throw error;
    });
    return this.embedSlot;
  }

  /** The ranking contexts, created on first use (400 `model_not_rerank` when llama.cpp cannot rank with the model). */
  ranker(): Promise<RankSlot> {
    this.rankSlot ??= this.createRankSlot().catch((error: unknown) => {
      this.rankSlot = undefined;
      throw error;
    });
    return this.rankSlot;
  }

  /** Set as soon as disposal starts; a disposed model must not be leased. */
  disposed = false;

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const dispose of this.disposers.splice(0).reverse()) await dispose();
    await this.model.dispose();
  }

  private async createChatSlot(): Promise<ChatSlot> {
    const { contextSize, sequences, maxQueued, batchWaitMs = DEFAULT_BATCH_GATHER.maxWaitMs } = this.options.chat;
    const context = await this.model.createContext({
      contextSize: Math.min(contextSize, this.model.trainContextSize),
      sequences,
      threads: this.options.threads,
      batching: {
        decodeChain: this.options.decodeChain ?? true,
        ...(batchWaitMs > 0 && sequences > 1 ? { gather: createBatchGather({ ...DEFAULT_BATCH_GATHER, maxWaitMs: batchWaitMs }) } : {}),
      },
    });
    const all: LlamaContextSequence[] = [];
    for (let i = 0; i < sequences; i++) all.push(context.getSequence());
    const pool = new LeasePool(all, maxQueued, "chat sequence");
    this.pools.push(pool);
    const tokenizer = new PromptTokenizer(this.model, { modelPath: this.entry.gguf.path, binding: bindingOf(this.llama), onWorkerError: this.options.onTokenizerError });
    this.disposers.push(async () => {
      pool.close();
      await tokenizer.close();
      await context.dispose();
    });
    // llama.cpp pads the context up; a request gets what was configured (what /v1/models reports).
    return { pool, wrapper: resolveChatWrapper(this.model), contextSize: Math.min(context.contextSize, contextSize, this.model.trainContextSize), promptCache: this.options.chat.promptCache, tokenizer };
  }

  private async createEmbedSlot(): Promise<EmbedSlot> {
    const { contexts, maxQueued, batchSequences = 32, batchTokens = 256 } = this.options.embeddings;
    const threads = Math.max(1, Math.floor(this.options.threads / contexts));
    const contextSize = Math.min(this.model.trainContextSize, MAX_ENCODER_CONTEXT);
    // Long-context embedders get fewer sequences: a decoder embedder keeps a cache per sequence.
    const sequences = Math.max(1, Math.min(batchSequences, Math.floor(65536 / contextSize)));
    const workers: LlamaEmbedWorker[] = [];
    try {
      for (let i = 0; i < contexts; i++) workers.push(await LlamaEmbedWorker.create(this.model, { maxInputTokens: contextSize, sequences, batchTokens, threads }));
    } catch (error) {
      for (const worker of workers) await worker.dispose();
      throw error;
    }
    const batcher = new EmbedBatcher(workers, maxQueued);
    this.pools.push(batcher);
    this.disposers.push(async () => {
      batcher.close();
      for (const worker of workers) await worker.dispose();
    });
    const first = workers[0]!;
    return { batcher, tokenize: (text) => first.tokenize(text), contextSize, batched: first.sequences > 1 };
  }

  private async createRankSlot(): Promise<RankSlot> {
    if (!this.model.fileInsights.supportsRanking) {
      throw invalidRequest(`'${this.entry.id}' cannot rank documents: its GGUF has no classification head (cls.weight or cls.output.weight)`, "model_not_rerank", "model");
    }
    const { contexts, maxQueued } = this.options.rerank;
    const threads = Math.max(1, Math.floor(this.options.threads / contexts));
    const contextSize = Math.min(this.model.trainContextSize, MAX_ENCODER_CONTEXT);
    const created: LlamaRankingContext[] = [];
    try {
      // A cross-encoder reads the whole pair in one pass (no causal mask): the batch must hold a full context.
      for (let i = 0; i < contexts; i++) created.push(await this.model.createRankingContext({ contextSize, batchSize: contextSize, threads }));
    } catch (error) {
      for (const context of created) await context.dispose();
      throw error;
    }
    const pool = new LeasePool(created, maxQueued, "ranking context");
    this.pools.push(pool);
    this.disposers.push(async () => {
      pool.close();
      for (const context of created) await context.dispose();
    });
    const measure = created[0]!;
    return { pool, size: created.length, contextSize: measure.contextSize, inputLength: (query, document) => measure.calculateInputLength(query, document) };
  }
}
