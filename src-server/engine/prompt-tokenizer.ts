/**
 * Tokenises long prompts off the event loop. node-llama-cpp tokenises synchronously on the
 * calling thread (1.2–4 MB of text a second on this machine, 5 µs a character for the worst
 * text measured): a 7.5 MB message held the event loop for 4.8 s, and even what fits a large
 * context takes hundreds of ms. node-llama-cpp has no asynchronous tokenisation, so text
 * longer than `inlineMaxChars` goes to a worker thread holding a vocabulary-only copy of the
 * same GGUF (tokenizer-thread.ts): the tokens are the model's own, and the event loop only
 * copies the text across (under 1 ms for 150k characters). Shorter text, the usual prompt,
 * tokenises in place. The worker starts on the first long prompt and stops after a minute
 * without one (it holds a copy of the vocabulary: 85 MB for a 49k-token vocabulary, 180 MB
 * for Gemma's 262k, measured here); if it cannot start or dies, text is tokenised in place
 * (correct, only blocking).
 */
import { Worker } from "node:worker_threads";
import type { Llama, LlamaModel, LlamaText, Token } from "node-llama-cpp";
import { llamaTextChars } from "./prompt-length.js";
import type { LlamaBindingChoice, TokenizeJob, TokenizerReply, TokenizerRequest, TokenizerThreadData } from "./tokenizer-thread.js";

/**
 * Token ids: an array when tokenised in place, the worker's typed array otherwise (turning
 * a few million of them into an array would stall the event loop itself). See `tokenArray`.
 */
export type TokenIds = readonly Token[] | Uint32Array;

/** The ids as the array node-llama-cpp takes (convert only what will be used: a prompt that fits). */
export function tokenArray(ids: TokenIds): Token[] {
  return Array.isArray(ids) ? (ids as Token[]) : (Array.from(ids) as Token[]);
}

/** How long a tokenizer worker is kept without work (ms): long prompts tend to come in runs. */
export const DEFAULT_TOKENIZER_IDLE_MS = 60_000;

/** Characters tokenised on the calling thread at most (about 20 ms for the slowest text measured). */
export const DEFAULT_INLINE_TOKENIZE_CHARS = 4096;

export interface PromptTokenizerOptions {
  modelPath: string;
  /** The process's llama.cpp binding: the worker loads the same binary (see `bindingOf`). */
  binding: LlamaBindingChoice;
  /** Longer text is tokenised in the worker (default `DEFAULT_INLINE_TOKENIZE_CHARS`). */
  inlineMaxChars?: number;
  /** The worker stops after this long without a long text (ms; default `DEFAULT_TOKENIZER_IDLE_MS`). */
  idleMs?: number;
  /** Told when the worker cannot start or dies (long text is then tokenised in place). */
  onWorkerError?: (error: Error) => void;
  /** The worker's module as it must be imported (a bundled build passes its own). */
  workerModule?: string;
}

/** What the worker needs to load the binary `llama` runs on. */
export function bindingOf(llama: Llama): LlamaBindingChoice {
  return { gpu: llama.gpu, cmakeOptions: { ...llama.cmakeOptions }, buildType: llama.buildType };
}

/** The worker's module, beside this one: `.ts` under tsx (tests, dev), `.js` once compiled. */
function defaultWorkerModule(): string {
  return new URL(`./tokenizer-thread${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url).href;
}

const WORKER_SOURCE = `
  const { parentPort, workerData } = require("node:worker_threads");
  // Running from TypeScript sources (tests, \`npm run dev\`): load them through tsx.
  const ready = workerData.module.endsWith(".ts") ? import("tsx/esm/api").then((tsx) => tsx.register()) : Promise.resolve();
  ready.then(() => import(workerData.module)).then((thread) => thread.serveTokenizer(parentPort, workerData.data)).catch(
    (error) => parentPort.postMessage({ fatal: String((error && error.stack) || error) }),
  );`;

/** The worker went away (or never started): the job is done in place instead. */
class WorkerGone extends Error {}

/** One worker thread and its jobs in flight, answered in order. */
class TokenizerWorker {
  private readonly pending = new Map<number, { resolve: (tokens: Uint32Array) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private gone: Error | null = null;

  private constructor(private readonly thread: Worker) {
    thread.on("message", (reply: TokenizerReply) => {
      if (!("id" in reply)) return;
      const job = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ("tokens" in reply) job?.resolve(reply.tokens);
      else job?.reject(new Error(reply.error));
    });
    const fail = (error: Error) => {
      this.gone ??= error;
      for (const job of this.pending.values()) job.reject(new WorkerGone(error.message));
      this.pending.clear();
    };
    thread.on("error", fail);
    thread.on("exit", (code) => fail(new Error(`the tokenizer worker exited (code ${code})`)));
  }

  /** Starts a worker and waits until its vocabulary is loaded. */
  static async start(module: string, data: TokenizerThreadData): Promise<TokenizerWorker> {
    // Its output is node-llama-cpp's, about loading; failures come back as `fatal`.
    const thread = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, data }, stdout: true, stderr: true });
    thread.stdout.resume();
    thread.stderr.resume();
    try {
      await new Promise<void>((resolve, reject) => {
        thread.once("message", (reply: TokenizerReply) => ("fatal" in reply ? reject(new Error(`the tokenizer worker could not start: ${reply.fatal}`)) : resolve()));
        thread.once("error", reject);
        thread.once("exit", (code) => reject(new Error(`the tokenizer worker exited while starting (code ${code})`)));
      });
    } catch (error) {
      await thread.terminate();
      throw error;
    }
    return new TokenizerWorker(thread);
  }

  run(job: TokenizeJob): Promise<Uint32Array> {
    if (this.gone) return Promise.reject(new WorkerGone(this.gone.message));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.thread.postMessage({ id, job } satisfies TokenizerRequest);
    });
  }

  async close(): Promise<void> {
    await this.thread.terminate();
  }
}

export class PromptTokenizer {
  /** undefined: not running; null: cannot be used (long text is tokenised in place). */
  private worker: Promise<TokenizerWorker | null> | undefined;
  private closed = false;
  /** Long texts being tokenised (the worker is stopped only when none is). */
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly inlineMaxChars: number;
  private readonly idleMs: number;

  constructor(
    private readonly model: LlamaModel,
    private readonly options: PromptTokenizerOptions,
  ) {
    this.inlineMaxChars = options.inlineMaxChars ?? DEFAULT_INLINE_TOKENIZE_CHARS;
    this.idleMs = options.idleMs ?? DEFAULT_TOKENIZER_IDLE_MS;
  }

  /** Tokens of a rendered prompt, exactly as `text.tokenize(model.tokenizer)` gives them. */
  async tokenizeText(text: LlamaText): Promise<TokenIds> {
    const inPlace = () => text.tokenize(this.model.tokenizer);
    if (llamaTextChars(text) <= this.inlineMaxChars) return inPlace();
    return this.offload({ kind: "llamaText", value: text.toJSON() }, inPlace);
  }

  /** Tokens of plain text, exactly as `model.tokenize(text, special)` gives them. */
  async tokenize(text: string, special: boolean): Promise<TokenIds> {
    const inPlace = () => this.model.tokenize(text, special);
    if (text.length <= this.inlineMaxChars) return inPlace();
    return this.offload({ kind: "text", text, special }, inPlace);
  }

  /** Whether a worker thread is running or starting, or failed to (for tests). */
  get workerRunning(): boolean {
    return this.worker !== undefined;
  }

  /** Stops the worker (idempotent); later calls tokenise in place. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    const worker = await this.worker;
    await worker?.close();
  }

  private async offload(job: TokenizeJob, inPlace: () => Token[]): Promise<TokenIds> {
    this.inFlight++;
    clearTimeout(this.idleTimer);
    try {
      const worker = await this.startWorker();
      if (worker) {
        try {
          return await worker.run(job);
        } catch (error) {
          if (!(error instanceof WorkerGone)) throw error;
          this.options.onWorkerError?.(error);
          this.worker = Promise.resolve(null);
        }
      }
      return inPlace();
    } finally {
      if (--this.inFlight === 0) this.stopWhenIdle();
    }
  }

  /** The worker holds a copy of the vocabulary (85–180 MB here): it goes after `idleMs` unused. */
  private stopWhenIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const running = this.worker;
      if (this.inFlight > 0 || this.closed || !running) return;
      this.worker = undefined;
      void running.then((worker) => {
        if (worker) return worker.close();
        // It could not start: remember that, rather than failing again on the next prompt.
        this.worker ??= Promise.resolve(null);
      });
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private startWorker(): Promise<TokenizerWorker | null> {
    if (this.closed) return Promise.resolve(null);
    this.worker ??= TokenizerWorker.start(this.options.workerModule ?? defaultWorkerModule(), { modelPath: this.options.modelPath, binding: this.options.binding }).then(
      async (worker) => {
        // Closed while it started: nothing will stop it later.
        if (!this.closed) return worker;
        await worker.close();
        return null;
      },
      (error: unknown) => {
        this.options.onWorkerError?.(error instanceof Error ? error : new Error(String(error)));
        return null;
      },
    );
    return this.worker;
  }
}
