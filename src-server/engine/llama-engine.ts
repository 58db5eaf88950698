/**
 * `InferenceEngine` on node-llama-cpp: loads models lazily, shares one loaded copy
 * between requests, unloads idle models, and always sets the thread count.
 */
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import type { Logger } from "pino";
import path from "node:path";
import { ServiceError, unavailable } from "../errors.js";
import type { ModelEntry } from "../models/model-registry.js";
import { countChatRequestTokens, startChatRun } from "./chat-run.js";
import { startCompletionRun } from "./completion-run.js";
import { scoreChoicesOn } from "./choice-scores.js";
import { embedInputs } from "./embed-inputs.js";
import { LoadedModel, MAX_ENCODER_CONTEXT } from "./loaded-model.js";
import { rankDocuments } from "./rank-documents.js";
import type { ChatGenerationInput, ChatMessage, ChatRun, ChoiceScores, CompletionRun, EmbeddingResult, EngineStatus, InferenceEngine, RerankScores, TextCompletionInput, TokenizerLease } from "./types.js";

export interface LlamaEngineOptions {
  gpu: "auto" | "cpu";
  /** 0 = physical cores as detected. */
  threads: number;
  /** 0 = never unload. */
  idleUnloadSeconds: number;
  chat: { contextSize: number; sequences: number; maxQueued: number; promptCache: boolean; batchWaitMs?: number };
  embeddings: { contexts: number; batchSequences?: number; batchTokens?: number };
  /** Ranking contexts per reranker working in parallel (each gets threads/contexts threads). */
  rerank: { contexts: number };
}

export class LlamaEngine implements InferenceEngine {
  private llamaPromise: Promise<Llama> | undefined;
  private llamaInstance: Llama | undefined;
  private readonly loaded = new Map<string, Promise<LoadedModel>>();
  private readonly settled = new Map<string, LoadedModel>();
  private readonly idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly options: LlamaEngineOptions,
    private readonly logger: Logger,
  ) {
    if (options.idleUnloadSeconds > 0) {
      const every = Math.max(1000, Math.min(30_000, (options.idleUnloadSeconds * 1000) / 4));
      this.idleTimer = setInterval(() => void this.unloadIdle(), every);
      this.idleTimer.unref();
    }
  }

  /** The llama.cpp binding, created once; reports whether a GPU was found. */
  llama(): Promise<Llama> {
    this.llamaPromise ??= (async () => {
      const llama = await getLlama({
        gpu: this.options.gpu === "cpu" ? false : "auto",
        // Never try to download or compile llama.cpp at run time: use the prebuilt binaries.
        build: "never",
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => this.logger.debug({ llama: level }, message.trim()),
      });
      // buildType "localBuild": the one scripts/build-llama.mjs made at install (batched embeddings);
      // "prebuilt": node-llama-cpp's own binaries (one embedding input per evaluation).
      this.logger.info({ gpu: llama.gpu || "none (CPU)", threads: this.threads(llama), cpuMathCores: llama.cpuMathCores, build: llama.buildType }, "llama.cpp ready");
      this.llamaInstance = llama;
      return llama;
    })();
    return this.llamaPromise;
  }

  private threads(llama: Llama): number {
    return this.options.threads > 0 ? this.options.threads : Math.max(1, llama.cpuMathCores);
  }

  async startChat(entry: ModelEntry, input: ChatGenerationInput, signal: AbortSignal): Promise<ChatRun> {
    const { loaded, release } = await this.acquire(entry);
    try {
      const slot = await loaded.chat();
      return await startChatRun({ llama: loaded.llama, model: loaded.model, slot, input, signal, onDone: release });
    } catch (error) {
      release();
      throw error;
    }
  }

  async startCompletion(entry: ModelEntry, input: TextCompletionInput, signal: AbortSignal): Promise<CompletionRun> {
    const { loaded, release } = await this.acquire(entry);
    try {
      const slot = await loaded.chat();
      return await startCompletionRun({ model: loaded.model, modelId: entry.id, slot, input, signal, onDone: release });
    } catch (error) {
      release();
      throw error;
    }
  }

  async embed(entry: ModelEntry, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const { loaded, release } = await this.acquire(entry);
    try {
      return await embedInputs(await loaded.embedder(), inputs, signal);
    } finally {
      release();
    }
  }

  async rerank(entry: ModelEntry, query: string, documents: string[], signal: AbortSignal): Promise<RerankScores> {
    const { loaded, release } = await this.acquire(entry);
    try {
      return await rankDocuments(await loaded.ranker(), loaded.model, query, documents, signal);
    } finally {
      release();
    }
  }

  async scoreChoices(entry: ModelEntry, messages: ChatMessage[], choices: string[], signal: AbortSignal): Promise<ChoiceScores> {
    const { loaded, release } = await this.acquire(entry);
    try {
      return await scoreChoicesOn(await loaded.chat(), loaded.model, messages, choices, signal);
    } finally {
      release();
    }
  }

  contextFor(entry: ModelEntry): number | null {
    const trained = entry.gguf.contextLength;
    if (trained === null) return entry.type === "chat" ? this.options.chat.contextSize : null;
    return Math.min(trained, entry.type === "chat" ? this.options.chat.contextSize : MAX_ENCODER_CONTEXT);
  }

  async countChatTokens(entry: ModelEntry, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<number> {
    const { loaded, release } = await this.acquire(entry);
    try {
      return countChatRequestTokens(loaded.model, await loaded.chat(), input);
    } finally {
      release();
    }
  }

  async countTokens(entry: ModelEntry, text: string): Promise<number> {
    const { loaded, release } = await this.acquire(entry);
    try {
      return loaded.model.tokenize(text).length;
    } finally {
      release();
    }
  }

  async acquireTokenizer(entry: ModelEntry): Promise<TokenizerLease> {
    const { loaded, release } = await this.acquire(entry);
    const { model } = loaded;
    return {
      countTokens: (text) => model.tokenize(text, false).length,
      // The embedding context's size, less the two special tokens and one to spare
      // (embedInputs refuses inputs that reach the context size).
      maxEmbeddingTokens: Math.min(model.trainContextSize, MAX_ENCODER_CONTEXT) - 3,
      release,
    };
  }

  status(): EngineStatus {
    return {
      backend: "llama.cpp (node-llama-cpp)",
      gpu: this.llamaInstance ? this.llamaInstance.gpu : null,
      threads: this.llamaInstance ? this.threads(this.llamaInstance) : this.options.threads,
      loadedModels: [...this.settled.values()].map((m) => ({ id: m.entry.id, path: m.entry.gguf.path, kinds: m.kinds, activeLeases: m.activeLeases, busy: m.busy, queued: m.queued })),
    };
  }

  /** Loads (once) and pins a model until `release` is called. */
  private async acquire(entry: ModelEntry): Promise<{ loaded: LoadedModel; release: () => void }> {
    if (this.closed) throw unavailable("the server is shutting down", "server_shutting_down");
    const key = entry.gguf.path;
    let loaded: LoadedModel;
    // Loop: an idle unload may dispose the model between our lookup and our pin.
    do {
      let pending = this.loaded.get(key);
      if (!pending) {
        pending = this.load(entry);
        this.loaded.set(key, pending);
        pending.then(
          (model) => this.settled.set(key, model),
          () => this.loaded.delete(key),
        );
      }
      loaded = await pending;
    } while (loaded.disposed);
    loaded.activeLeases++;
    let released = false;
    return {
      loaded,
      release: () => {
        if (released) return;
        released = true;
        loaded.activeLeases--;
        loaded.lastUsedAt = Date.now();
      },
    };
  }

  private async load(entry: ModelEntry): Promise<LoadedModel> {
    const llama = await this.llama();
    const started = Date.now();
    let model;
    try {
      model = await llama.loadModel({ modelPath: entry.gguf.path, gpuLayers: llama.gpu ? "auto" : 0 });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.error({ model: entry.id, file: entry.gguf.path, err: error }, "model load failed");
      throw new ServiceError("server", `the model '${entry.id}' could not be loaded (${path.basename(entry.gguf.path)}): ${reason}`, { code: "model_load_failed", cause: error });
    }
    this.logger.info({ model: entry.id, file: entry.gguf.path, gpuLayers: model.gpuLayers, ms: Date.now() - started }, "model loaded");
    const threads = this.threads(llama);
    return new LoadedModel(entry, llama, model, {
      threads,
      chat: this.options.chat,
      embeddings: { ...this.options.embeddings, maxQueued: Number.MAX_SAFE_INTEGER },
      rerank: { contexts: this.options.rerank.contexts, maxQueued: Number.MAX_SAFE_INTEGER },
    });
  }

  /** Unloads models nobody has used for `idleUnloadSeconds`. */
  async unloadIdle(now = Date.now()): Promise<void> {
    const limit = this.options.idleUnloadSeconds * 1000;
    for (const [key, model] of this.settled) {
      if (model.activeLeases > 0 || now - model.lastUsedAt < limit) continue;
      this.settled.delete(key);
      this.loaded.delete(key);
      this.logger.info({ model: model.entry.id, idleSeconds: Math.round((now - model.lastUsedAt) / 1000) }, "unloading idle model");
      await model.dispose();
    }
  }

  /** Unloads everything and releases llama.cpp. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    const models = await Promise.allSettled([...this.loaded.values()]);
    this.loaded.clear();
    this.settled.clear();
    for (const result of models) if (result.status === "fulfilled") await result.value.dispose();
    if (this.llamaPromise) await (await this.llamaPromise).dispose();
  }
}
