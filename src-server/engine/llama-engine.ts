/**
 * `InferenceEngine` on node-llama-cpp: loads models lazily, shares one loaded copy
 * between requests, unloads idle models, and always sets the thread count.
 */
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import type { Logger } from "pino";
import { stat } from "node:fs/promises";
import path from "node:path";
import { ServiceError, unavailable } from "../errors.js";
import { validateGgufModel } from "../models/validate-gguf-file.js";
import { asLocal, type LocalModelEntry, type ModelEntry } from "../models/model-registry.js";
import { countChatRequestTokens, startChatRun } from "./chat-run.js";
import { startCompletionRun } from "./completion-run.js";
import { scoreChoicesOn } from "./choice-scores.js";
import { embedInputs } from "./embed-inputs.js";
import { LoadedModel, MAX_ENCODER_CONTEXT } from "./loaded-model.js";
import { rankDocuments } from "./rank-documents.js";
import { currentRequestId } from "../domain/request-scope.js";
import { anonHugePageBytes, readIntoMemory, type HugePagePlan } from "./huge-pages.js";
import { loadedCpuVariant, planLlamaBinary, readLlamaBuildRecord, type LlamaBinaryPlan, type LlamaBuildChoice, type LlamaBuildRecord } from "./llama-binary.js";
import type { ActiveWork, ChatGenerationInput, ChatMessage, ChatRun, ChoiceScores, CompletionRun, EmbeddingResult, EngineStatus, InferenceEngine, RerankScores, TextCompletionInput, TokenizerLease } from "./types.js";

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
  /** Which llama.cpp binary to load (default `auto`: the install's build if its self-test passed). */
  build?: LlamaBuildChoice;
  /** The install's build record; default: read from node-llama-cpp's local builds folder. */
  buildRecord?: LlamaBuildRecord | null;
  /** Told the model work in progress whenever it changes (a supervisor explains crashes with it). */
  onActivity?: (work: ActiveWork[]) => void;
  /** Whether models are read into huge-page-backed memory (see huge-pages.ts); default: their files are mapped. */
  hugePages?: HugePagePlan;
  /** Whether llama.cpp's decode thread may decode a lone greedy sequence's next token at once (default true). */
  decodeChain?: boolean;
}

export class LlamaEngine implements InferenceEngine {
  private llamaPromise: Promise<Llama> | undefined;
  private llamaInstance: Llama | undefined;
  private readonly loaded = new Map<string, Promise<LoadedModel>>();
  private readonly settled = new Map<string, LoadedModel>();
  private readonly idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly plan: LlamaBinaryPlan;
  private readonly hugePages: HugePagePlan;

  constructor(
    private readonly options: LlamaEngineOptions,
    private readonly logger: Logger,
  ) {
    const record = options.buildRecord !== undefined ? options.buildRecord : readLlamaBuildRecord();
    this.plan = planLlamaBinary(options.build ?? "auto", record, options.gpu);
    // Said at start, before llama.cpp loads (it loads with the first model).
    logger.info({ build: this.plan.expected === "localBuild" ? "local" : "prebuilt", why: this.plan.reason }, "llama.cpp build chosen");
    this.hugePages = options.hugePages ?? { enabled: false, reason: "model files are mapped (no huge-page plan given)" };
    logger.info({ hugePages: this.hugePages.enabled, why: this.hugePages.reason }, "model memory");
    if (options.idleUnloadSeconds > 0) {
      const every = Math.max(1000, Math.min(30_000, (options.idleUnloadSeconds * 1000) / 4));
      this.idleTimer = setInterval(() => void this.unloadIdle(), every);
      this.idleTimer.unref();
    }
  }

  /** The llama.cpp binding, created once; reports which build serves, why, and whether a GPU was found. */
  llama(): Promise<Llama> {
    this.llamaPromise ??= (async () => {
      const plan = this.plan;
      const llama = await getLlama({
        ...plan.options,
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => this.logger.debug({ llama: level }, message.trim()),
      });
      // node-llama-cpp falls back to its prebuilt binaries when it cannot load a local build.
      const reason = llama.buildType === plan.expected ? plan.reason : `node-llama-cpp could not load the install's build and fell back to its prebuilt binaries (${plan.reason})`;
      this.buildInfo = { type: llama.buildType === "localBuild" ? "local" : "prebuilt", variant: null, reason };
      this.logger.info({ gpu: llama.gpu || "none (CPU)", threads: this.threads(llama), cpuMathCores: llama.cpuMathCores, build: this.buildInfo.type, why: reason }, "llama.cpp ready");
      this.llamaInstance = llama;
      return llama;
    })();
    return this.llamaPromise;
  }

  /** Which llama.cpp serves, once it has started: build, CPU variant (after the first model load), and why. */
  private buildInfo: NonNullable<EngineStatus["build"]> | null = null;

  private threads(llama: Llama): number {
    return this.options.threads > 0 ? this.options.threads : Math.max(1, llama.cpuMathCores);
  }

  async startChat(entry: ModelEntry, input: ChatGenerationInput, signal: AbortSignal): Promise<ChatRun> {
    const { loaded, release } = await this.acquire(entry, "chat");
    try {
      const slot = await loaded.chat();
      return await startChatRun({ llama: loaded.llama, model: loaded.model, slot, input, signal, onDone: release });
    } catch (error) {
      release();
      throw error;
    }
  }

  async startCompletion(entry: ModelEntry, input: TextCompletionInput, signal: AbortSignal): Promise<CompletionRun> {
    const { loaded, release } = await this.acquire(entry, "completion");
    try {
      const slot = await loaded.chat();
      return await startCompletionRun({ model: loaded.model, modelId: entry.id, slot, input, signal, onDone: release });
    } catch (error) {
      release();
      throw error;
    }
  }

  async embed(entry: ModelEntry, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const { loaded, release } = await this.acquire(entry, "embed");
    try {
      return await embedInputs(await loaded.embedder(), inputs, signal);
    } finally {
      release();
    }
  }

  /** Whether `entry`'s embedder evaluates several inputs in one llama.cpp batch (the install's patched build). */
  async embedderBatches(entry: ModelEntry): Promise<boolean> {
    const { loaded, release } = await this.acquire(entry, "embed");
    try {
      return (await loaded.embedder()).batched;
    } finally {
      release();
    }
  }

  async rerank(entry: ModelEntry, query: string, documents: string[], signal: AbortSignal): Promise<RerankScores> {
    const { loaded, release } = await this.acquire(entry, "rerank");
    try {
      return await rankDocuments(await loaded.ranker(), loaded.model, query, documents, signal);
    } finally {
      release();
    }
  }

  async scoreChoices(entry: ModelEntry, messages: ChatMessage[], choices: string[], signal: AbortSignal): Promise<ChoiceScores> {
    const { loaded, release } = await this.acquire(entry, "score");
    try {
      return await scoreChoicesOn(await loaded.chat(), loaded.model, messages, choices, signal);
    } finally {
      release();
    }
  }

  contextFor(entry: ModelEntry): number | null {
    const trained = asLocal(entry).gguf.contextLength;
    if (trained === null) return entry.type === "chat" ? this.options.chat.contextSize : null;
    return Math.min(trained, entry.type === "chat" ? this.options.chat.contextSize : MAX_ENCODER_CONTEXT);
  }

  async countChatTokens(entry: ModelEntry, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<number> {
    const { loaded, release } = await this.acquire(entry, "count");
    try {
      return await countChatRequestTokens(loaded.model, await loaded.chat(), input);
    } finally {
      release();
    }
  }

  async countTokens(entry: ModelEntry, text: string): Promise<number> {
    const { loaded, release } = await this.acquire(entry, "count");
    try {
      return loaded.model.tokenize(text).length;
    } finally {
      release();
    }
  }

  async acquireTokenizer(entry: ModelEntry): Promise<TokenizerLease> {
    const { loaded, release } = await this.acquire(entry, "count");
    const { model } = loaded;
    return {
      countTokens: (text) => model.tokenize(text, false).length,
      // The embedding context's size, less the two special tokens and one to spare
      // (embedInputs refuses inputs that reach the context size).
      maxEmbeddingTokens: Math.min(model.trainContextSize, MAX_ENCODER_CONTEXT) - 3,
      release,
    };
  }

  upstreams(): null {
    return null;
  }

  status(): EngineStatus {
    return {
      backend: "llama.cpp (node-llama-cpp)",
      gpu: this.llamaInstance ? this.llamaInstance.gpu : null,
      threads: this.llamaInstance ? this.threads(this.llamaInstance) : this.options.threads,
      // Before llama.cpp starts: the build it will load, and why.
      build: this.buildInfo ?? { type: this.plan.expected === "localBuild" ? "local" : "prebuilt", variant: null, reason: this.plan.reason },
      loadedModels: [...this.settled.values()].map((m) => ({ id: m.entry.id, path: m.entry.gguf.path, kinds: m.kinds, activeLeases: m.activeLeases, busy: m.busy, queued: m.queued })),
    };
  }

  /** Loads (once) and pins a model until `release` is called. */
  private async acquire(model: ModelEntry, op: string): Promise<{ loaded: LoadedModel; release: () => void }> {
    if (this.closed) throw unavailable("the server is shutting down", "server_shutting_down");
    const entry = asLocal(model);
    const untrack = this.track(entry, this.loaded.has(entry.gguf.path) ? op : `load + ${op}`);
    try {
      return await this.acquireTracked(entry, untrack);
    } catch (error) {
      untrack();
      throw error;
    }
  }

  private readonly active = new Map<number, ActiveWork>();
  private workCounter = 0;

  /** Notes model work in progress for `onActivity`; returns its end. */
  private track(entry: ModelEntry, op: string): () => void {
    const report = this.options.onActivity;
    if (!report) return () => {};
    const id = ++this.workCounter;
    this.active.set(id, { op, model: entry.id, requestId: currentRequestId(), since: Date.now() });
    report([...this.active.values()]);
    return () => {
      if (this.active.delete(id)) report([...this.active.values()]);
    };
  }

  private async acquireTracked(entry: LocalModelEntry, untrack: () => void): Promise<{ loaded: LoadedModel; release: () => void }> {
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
        untrack();
        loaded.activeLeases--;
        loaded.lastUsedAt = Date.now();
      },
    };
  }

  private async load(entry: LocalModelEntry): Promise<LoadedModel> {
    const llama = await this.llama();
    const started = Date.now();
    let model;
    try {
      // The file was checked when it was registered, but it may have been replaced since:
      // node-llama-cpp's own reader trusts the header's counts (a hostile one hangs, then aborts the process).
      await validateGgufModel(entry.gguf.path);
    } catch (error) {
      this.logger.error({ model: entry.id, file: entry.gguf.path, err: error }, "model file is no longer a valid GGUF");
      throw unavailable(`the model '${entry.id}' cannot be loaded: its file (${path.basename(entry.gguf.path)}) is no longer a valid GGUF model; an administrator must replace or remove it`, "model_file_invalid");
    }
    // Weights in huge pages when this process can have them and the model fits with room to spare.
    const fileBytes = this.hugePages.enabled ? (await stat(entry.gguf.path)).size : 0;
    const inMemory = this.hugePages.enabled && readIntoMemory(this.hugePages, fileBytes);
    const hugeBefore = inMemory ? anonHugePageBytes() : null;
    try {
      model = await llama.loadModel({ modelPath: entry.gguf.path, gpuLayers: llama.gpu ? "auto" : 0, useMmap: !inMemory });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.error({ model: entry.id, file: entry.gguf.path, err: error }, "model load failed");
      throw new ServiceError("server", `the model '${entry.id}' could not be loaded (${path.basename(entry.gguf.path)}): ${reason}`, { code: "model_load_failed", cause: error });
    }
    // ggml loads its CPU backend variant with the first model: say which this CPU got.
    if (this.buildInfo && this.buildInfo.variant === null) this.buildInfo.variant = loadedCpuVariant();
    const hugePageMb = hugeBefore === null ? null : Math.round(((anonHugePageBytes() ?? hugeBefore) - hugeBefore) / 2 ** 20);
    this.logger.info({ model: entry.id, file: entry.gguf.path, gpuLayers: model.gpuLayers, cpuVariant: this.buildInfo?.variant ?? null, weights: inMemory ? "in memory" : "mapped", hugePageMb, ms: Date.now() - started }, "model loaded");
    // An allocator other than glibc's (or a kernel short of huge pages) leaves them in 4 KB pages: said, not hidden.
    if (inMemory && hugePageMb !== null && model.gpuLayers === 0 && hugePageMb * 2 ** 20 < fileBytes / 4) {
      this.logger.warn({ model: entry.id, hugePageMb, fileMb: Math.round(fileBytes / 2 ** 20) }, "the model was read into memory but few of its pages are huge pages: set engine.hugePages to off if it uses memory you need");
    }
    const threads = this.threads(llama);
    return new LoadedModel(entry, llama, model, {
      threads,
      decodeChain: this.options.decodeChain ?? true,
      chat: this.options.chat,
      embeddings: { ...this.options.embeddings, maxQueued: Number.MAX_SAFE_INTEGER },
      rerank: { contexts: this.options.rerank.contexts, maxQueued: Number.MAX_SAFE_INTEGER },
      onTokenizerError: (error) => this.logger.warn({ model: entry.id, err: error }, "the tokenizer thread failed: long prompts are tokenised on the event loop"),
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
