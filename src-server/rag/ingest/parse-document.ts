/**
 * Parse workers that outlive one document. Starting a worker thread and loading pdf.js or
 * mammoth into it costs 300–400 ms, several times the parse of a typical file, so an upload
 * of a hundred files spent most of its parse time starting workers. A pool keeps a worker
 * for the next document and still gives every document the guarantees of its own worker:
 *
 * - a heap limit (`resourceLimits`) and a wall-clock deadline per document; a document that
 *   hits either takes its worker down with it and fails alone;
 * - a document that runs out of memory in a worker that has parsed others before is tried
 *   once more in a fresh worker, so the limit applies to that document, not to leftovers;
 * - a worker is replaced after `maxJobsPerWorker` documents or when its heap has grown by
 *   more than `recycleHeapShare` of the limit, and exits after `idleMs` without work,
 *   returning its memory to the system.
 */
import { Worker } from "node:worker_threads";
import type { ParseJob, ParseReply } from "./parse-by-format.js";
import { ParseError, type DocumentFormat, type ParsedDocument, type ParseSettings } from "./types.js";

export interface ParserPoolOptions {
  /** Heap limit of each worker (V8 old generation), in MiB. Default 192. */
  maxMemoryMb?: number;
  /** URL of the `parse-by-format` module the workers load (bundled builds); default: beside this one. */
  parserModule?: string;
  /** Workers parsing at once (documents beyond wait their turn). Default 1. */
  size?: number;
  /** Documents a worker parses before it is replaced. Default 64. */
  maxJobsPerWorker?: number;
  /** A worker idle this long exits (ms). Default 10 000. */
  idleMs?: number;
  /**
   * A worker whose heap after a parse has grown by more than this share of its limit since
   * its first parse (what loading the parsers took) is replaced. Default 0.25.
   */
  recycleHeapShare?: number;
}

export interface ParseOptions {
  /** Wall-clock limit for one document, in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /**
   * Hand the caller's buffer to the worker instead of a copy (the caller's array is then
   * detached and reads as empty). Saves a copy of the file; only possible when the array
   * spans its whole buffer, otherwise a copy is made anyway. Default false.
   */
  transfer?: boolean;
  /** Longest extracted text accepted, in characters. Default 20 000 000. */
  maxTextChars?: number;
  /** Aborting stops the document's worker; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The corpus's parse settings (OCR languages); defaults when absent. */
  settings?: ParseSettings;
  /** Hears long parses advance (pages OCR'd of those to OCR). */
  onProgress?: (done: number, total: number) => void;
}

export const DEFAULT_PARSE_TIMEOUT_MS = 60_000;
export const DEFAULT_PARSE_MEMORY_MB = 192;
export const DEFAULT_MAX_TEXT_CHARS = 20_000_000;
/** After a parse reports progress (a page read by OCR), the most it may take to report again: a page's OCR limit and its rendering. */
export const PAGE_PROGRESS_TIMEOUT_MS = 150_000;

/** The worker's dispatch module, beside this one: `.ts` under tsx (tests, dev), `.js` once compiled. */
export function defaultParserModule(): string {
  return new URL(`./parse-by-format${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url).href;
}

/**
 * The worker: loads the parsers once, then parses one job per message and answers with the
 * reply and its heap use afterwards. A module that cannot load is reported as `fatal`.
 */
const WORKER_SOURCE = `
  const { parentPort, workerData } = require("node:worker_threads");
  const { getHeapStatistics } = require("node:v8");
  // Running from TypeScript sources (tests, \`npm run dev\`): load them through tsx.
  const ready = (workerData.module.endsWith(".ts") ? import("tsx/esm/api").then((tsx) => tsx.register()) : Promise.resolve()).then(() => import(workerData.module));
  const fatal = (error) => parentPort.postMessage({ fatal: String((error && error.stack) || error) });
  ready.catch(fatal);
  parentPort.on("message", (job) => {
    const progress = (done, total) => parentPort.postMessage({ progress: { done, total } });
    ready.then((parser) => parser.runParseJob(job, progress)).then(
      (reply) => parentPort.postMessage({ reply, heapUsed: getHeapStatistics().used_heap_size }),
      fatal,
    );
  });`;

type WorkerMessage = { reply: ParseReply; heapUsed: number } | { fatal: string } | { progress: { done: number; total: number } };

interface Job {
  job: ParseJob;
  options: ParseOptions;
  /** Whether this is the retry in a fresh worker (after running out of memory in a used one). */
  retried: boolean;
  resolve(document: ParsedDocument): void;
  reject(error: Error): void;
}

/** One worker thread and how much it has done. */
class ParseWorker {
  readonly thread: Worker;
  jobs = 0;
  busy = false;
  /** Heap in use after its first parse: the parsers' code and data. */
  baseHeap: number | null = null;
  idleTimer: NodeJS.Timeout | null = null;
  /** Fails the running job (set while one runs). */
  cancel: ((error: Error) => void) | null = null;
  /** Set once the thread has exited or is being stopped: it takes no more jobs. */
  gone = false;

  constructor(parserModule: string, maxMemoryMb: number) {
    this.thread = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: parserModule },
      resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb, maxYoungGenerationSizeMb: Math.min(16, Math.max(8, maxMemoryMb / 8)), stackSizeMb: 4 },
      // pdf.js and mammoth may log about odd files; that is not the server's output.
      stdout: true,
      stderr: true,
    });
    this.thread.stdout.resume();
    this.thread.stderr.resume();
    this.thread.once("exit", () => (this.gone = true));
  }

  stop(): Promise<number> {
    this.gone = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    return this.thread.terminate();
  }
}

export class ParserPool {
  private readonly workers = new Set<ParseWorker>();
  private readonly queue: Job[] = [];
  private readonly stopping = new Set<Promise<number>>();
  private closed = false;
  private started = 0;
  private readonly maxMemoryMb: number;
  private readonly parserModule: string;
  private readonly size: number;
  private readonly maxJobsPerWorker: number;
  private readonly idleMs: number;
  private readonly recycleHeapShare: number;

  constructor(options: ParserPoolOptions = {}) {
    this.maxMemoryMb = options.maxMemoryMb ?? DEFAULT_PARSE_MEMORY_MB;
    this.parserModule = options.parserModule ?? defaultParserModule();
    this.size = Math.max(1, options.size ?? 1);
    this.maxJobsPerWorker = Math.max(1, options.maxJobsPerWorker ?? 64);
    this.idleMs = options.idleMs ?? 10_000;
    this.recycleHeapShare = options.recycleHeapShare ?? 0.25;
  }

  /** Workers started so far, and running now (for tests and diagnostics). */
  stats(): { started: number; running: number; queued: number } {
    return { started: this.started, running: this.workers.size, queued: this.queue.length };
  }

  /**
   * Parses `bytes` as `format` in a pool worker. The caller's bytes are copied once and the
   * copy is transferred (not cloned) to the worker; the caller's array stays usable (unless
   * `transfer`).
   * @throws ParseError `empty_document` (no bytes or no text), `parse_timeout`, `document_too_complex`
   *   (heap limit reached or the parser crashed), and whatever the format's parser reports
   *   (`corrupt_document`, `encrypted_document`, `document_too_large`, ...).
   * @throws Error when the worker cannot load the parsers at all (an installation fault, not
   *   the document's), when the pool is closed, or the signal's reason when it aborts.
   */
  parse(bytes: Uint8Array, format: DocumentFormat, options: ParseOptions = {}): Promise<ParsedDocument> {
    if (this.closed) return Promise.reject(new Error("The parser pool is closed."));
    if (bytes.length === 0) return Promise.reject(new ParseError("empty_document", "The file is empty."));
    if (options.signal?.aborted) return Promise.reject(toError(options.signal.reason));
    const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const copy = options.transfer && whole ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
    const job: ParseJob = { format, bytes: copy, maxTextChars: options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS, ...(options.settings ? { settings: options.settings } : {}) };
    if (options.transfer && whole) {
      // Detach now, as the caller asked, even if the job waits for a worker.
      const moved = structuredClone(copy.buffer, { transfer: [copy.buffer] });
      job.bytes = new Uint8Array(moved);
    }
    return new Promise<ParsedDocument>((resolve, reject) => {
      const entry: Job = { job, options, retried: false, resolve, reject };
      const onAbort = (): void => {
        const at = this.queue.indexOf(entry);
        if (at >= 0) {
          this.queue.splice(at, 1);
          reject(toError(options.signal?.reason));
        }
        // A running job's worker handles the signal itself (see \`run\`).
      };
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const settle = <T>(fn: (value: T) => void) => (value: T) => {
        options.signal?.removeEventListener("abort", onAbort);
        fn(value);
      };
      entry.resolve = settle(resolve);
      entry.reject = settle(reject);
      this.queue.push(entry);
      this.dispatch();
    });
  }

  /** Stops every worker; queued and running parses reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error("The parser pool is closed."));
    for (const worker of this.workers) worker.cancel?.(new Error("The parser pool is closed."));
    await Promise.all([...[...this.workers].map((w) => this.retire(w)), ...this.stopping]);
  }

  /** Starts queued jobs on idle workers, starting workers up to `size`. */
  private dispatch(): void {
    // sharp loads in this thread before the first worker starts (see preloadNativeModules).
    if (!nativeModulesLoaded) {
      void preloadNativeModules().then(() => this.dispatch());
      return;
    }
    while (this.queue.length > 0 && !this.closed) {
      let worker = [...this.workers].find((w) => !w.busy && !w.gone);
      if (!worker) {
        if (this.workers.size >= this.size) return;
        worker = this.spawn();
      }
      const entry = this.queue[0]!.retried ? this.queue.find((j) => j.retried)! : this.queue[0]!;
      // A retry needs a worker that has parsed nothing yet.
      if (entry.retried && worker.jobs > 0) {
        void this.retire(worker);
        continue;
      }
      this.queue.splice(this.queue.indexOf(entry), 1);
      this.run(worker, entry);
    }
  }

  private spawn(): ParseWorker {
    const worker = new ParseWorker(this.parserModule, this.maxMemoryMb);
    this.started++;
    this.workers.add(worker);
    worker.thread.once("exit", () => {
      this.workers.delete(worker);
      if (worker.idleTimer) clearTimeout(worker.idleTimer);
      this.dispatch();
    });
    return worker;
  }

  /** Stops a worker; `close` waits for every stop still under way. */
  private async retire(worker: ParseWorker): Promise<void> {
    this.workers.delete(worker);
    const stopping = worker.stop();
    this.stopping.add(stopping);
    await stopping;
    this.stopping.delete(stopping);
  }

  private run(worker: ParseWorker, entry: Job): void {
    worker.busy = true;
    worker.jobs++;
    if (worker.idleTimer) clearTimeout(worker.idleTimer);
    worker.idleTimer = null;
    worker.thread.ref();
    const { options } = entry;
    const timeoutMs = options.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
    const thread = worker.thread;
    let done = false;
    const cleanup = (): void => {
      done = true;
      worker.cancel = null;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      thread.off("message", onMessage);
      thread.off("error", onError);
      thread.off("exit", onExit);
    };
    /** The job failed in a way that leaves the worker unusable: it is stopped and replaced. */
    const fail = (error: Error): void => {
      if (done) return;
      cleanup();
      void this.retire(worker).then(() => this.dispatch());
      entry.reject(error);
    };
    worker.cancel = fail;
    const onAbort = (): void => fail(toError(options.signal?.reason));
    const onMessage = (message: WorkerMessage): void => {
      if (done) return;
      if ("fatal" in message) return fail(new Error(`The document parsers could not be loaded: ${message.fatal}`));
      if ("progress" in message) {
        // A long scan reports each page read: the deadline then runs from the last page, so a
        // document of many pages is bounded per page (and by the pages OCR takes), not in all.
        clearTimeout(timer);
        timer = setTimeout(timedOut, Math.max(timeoutMs, PAGE_PROGRESS_TIMEOUT_MS));
        return options.onProgress?.(message.progress.done, message.progress.total);
      }
      cleanup();
      worker.busy = false;
      const { reply } = message;
      if (reply.ok) entry.resolve(reply.document);
      else entry.reject(new ParseError(reply.code, reply.message));
      worker.baseHeap ??= message.heapUsed;
      const grown = message.heapUsed - worker.baseHeap > this.recycleHeapShare * this.maxMemoryMb * 1024 * 1024;
      if (worker.jobs >= this.maxJobsPerWorker || grown) void this.retire(worker);
      else this.idle(worker);
      this.dispatch();
    };
    const onError = (error: Error & { code?: string }): void => {
      if (done) return;
      if (error.code === "ERR_WORKER_OUT_OF_MEMORY" && worker.jobs > 1 && !entry.retried) {
        // Perhaps the heap was full of an earlier document: once more, alone in a fresh worker.
        cleanup();
        void this.retire(worker);
        entry.retried = true;
        this.queue.unshift(entry);
        this.dispatch();
        return;
      }
      const message =
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? `Parsing needed more than ${this.maxMemoryMb} MB of memory and was stopped.`
          : "The document made the parser fail; it is too complex or damaged to read.";
      fail(new ParseError("document_too_complex", message));
    };
    const onExit = (code: number): void => fail(new ParseError("document_too_complex", `The parser stopped unexpectedly (exit code ${code}).`));
    const timedOut = () => fail(new ParseError("parse_timeout", `Parsing took longer than ${formatSeconds(timeoutMs)} and was stopped.`));
    let timer = setTimeout(timedOut, timeoutMs);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    thread.on("message", onMessage);
    thread.on("error", onError);
    thread.once("exit", onExit);
    // A worker that has parsed before may fail this document for its leftovers, and the
    // document is then tried again: it gets a copy. A fresh worker gets the bytes themselves.
    try {
      if (worker.jobs > 1) thread.postMessage(entry.job);
      else thread.postMessage(entry.job, [entry.job.bytes.buffer as ArrayBuffer]);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** A worker without work: it no longer keeps the process alive, and exits after `idleMs`. */
  private idle(worker: ParseWorker): void {
    worker.thread.unref();
    worker.idleTimer = setTimeout(() => {
      if (!worker.busy) void this.retire(worker);
    }, this.idleMs);
    worker.idleTimer.unref();
  }
}

let preloading: Promise<void> | undefined;
let nativeModulesLoaded = false;

/**
 * Loads sharp (libvips) in the main thread before any worker does: a native library first
 * loaded by a worker is unloaded when that worker exits, under the feet of the next worker
 * still using it (sharp's documentation asks for exactly this). With the first document, not
 * at start (it is 25 MB of memory a server that parses nothing does not need). Best effort:
 * without sharp, image files fail in the worker with a clear error.
 */
function preloadNativeModules(): Promise<void> {
  preloading ??= import("sharp").then(
    () => undefined,
    () => undefined,
  ).finally(() => (nativeModulesLoaded = true));
  return preloading;
}

/**
 * Parses one document in a worker of its own (a pool of one that closes after it). Servers
 * keep a `ParserPool` instead; this is for one-off parses and tools.
 */
export async function parseDocument(bytes: Uint8Array, format: DocumentFormat, options: ParseOptions & Pick<ParserPoolOptions, "maxMemoryMb" | "parserModule"> = {}): Promise<ParsedDocument> {
  const pool = new ParserPool({ maxJobsPerWorker: 1, ...(options.maxMemoryMb ? { maxMemoryMb: options.maxMemoryMb } : {}), ...(options.parserModule ? { parserModule: options.parserModule } : {}) });
  try {
    return await pool.parse(bytes, format, options);
  } finally {
    await pool.close();
  }
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function toError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === "string" ? reason : "The parse was aborted.");
}
