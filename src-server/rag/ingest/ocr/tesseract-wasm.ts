/**
 * OCR through tesseract.js (Tesseract compiled to WebAssembly): the engine that ships
 * inside the desktop app, for machines without a native Tesseract. Same Tesseract, same
 * models (language data fetched into the data folder, see `language-data.ts`), same output:
 * the page's TSV parsed by the native engine's parser, so words, boxes, confidences and
 * reading order mean the same from either engine.
 *
 * It runs in a worker thread of our own around tesseract.js's worker script (its
 * `createWorker` cannot pass a worker options, limits or data), which gives:
 * - no network, ever: language data is read from the local folder only, tesseract.js's
 *   fetch adapter and the thread's `fetch` refuse, and any socket the thread opens is
 *   destroyed as it is made (and counted, see `stats()`);
 * - one thread (the cores are built without threads) and a deadline per page: the worker is
 *   terminated when it passes, as the native engine's process is killed;
 * - bounded memory: the WebAssembly heap may not grow past `maxMemoryMb` (Emscripten's
 *   allocator then fails and the page fails), the thread's JavaScript heap is capped too;
 * - a warm worker between pages (starting one costs about a second: compiling the core,
 *   loading the language data), replaced after a page that left a large heap, stopped when
 *   idle.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { LANGUAGE_CODE } from "./language-data.js";
import { OcrError, parseTesseractTsv, type OcrPage } from "./tesseract.js";

const require = createRequire(import.meta.url);

/** tesseract.js-core's LSTM-only builds: plain, SIMD, relaxed SIMD (fastest, newer runtimes only). */
export const WASM_CORES = ["lstm", "simd-lstm", "relaxedsimd-lstm"] as const;
export type WasmCore = (typeof WASM_CORES)[number];

export interface TesseractWasmOptions {
  /** Folder holding `<language>.traineddata` (the data folder's `ocr/tessdata`). */
  tessdataDir: string;
  /** Which core to run; default `auto`: the fastest this runtime supports, as tesseract.js picks. */
  core?: WasmCore | "auto";
  /** Most the WebAssembly heap may grow to, in MiB. Default 1024. */
  maxMemoryMb?: number;
  /** A worker whose heap passed this after a page is replaced (returning the memory), in MiB. Default 384. */
  recycleMemoryMb?: number;
  /** A worker idle this long is stopped, in ms. Default 30 000. */
  idleMs?: number;
}

export interface WasmRecogniseOptions {
  /** Tesseract language codes, e.g. ["eng", "msa"]. */
  languages: string[];
  /** The page (and the worker's start, when it needs one) is stopped after this long. */
  timeoutMs: number;
  /** The resolution to assume when the image does not say. Default 300. */
  dpi?: number;
  signal?: AbortSignal;
}

const TSV_HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext";
const PSM_AUTO = "3";
const OEM_LSTM_ONLY = 1;

/** tesseract.js's version, for reports. */
export const TESSERACT_JS_VERSION = (require("tesseract.js/package.json") as { version: string }).version;

/** The cores this runtime can run, best last (relaxed SIMD needs a newer V8 than Node 20's, e.g. Electron's). */
export async function supportedWasmCores(): Promise<WasmCore[]> {
  const detect = createRequire(require.resolve("tesseract.js"))("wasm-feature-detect") as { simd(): Promise<boolean>; relaxedSimd(): Promise<boolean> };
  const cores: WasmCore[] = ["lstm"];
  if (await detect.simd()) cores.push("simd-lstm");
  if (await detect.relaxedSimd()) cores.push("relaxedsimd-lstm");
  return cores;
}

/** The languages of `languages` without a `<language>.traineddata` in `tessdataDir` (whatever the catalog says). */
export function missingLanguageData(tessdataDir: string, languages: string[]): string[] {
  return languages.filter((l) => !LANGUAGE_CODE.test(l) || !existsSync(path.join(tessdataDir, `${l}.traineddata`)));
}

/**
 * The worker: guards first (network, memory), then tesseract.js's own worker script with an
 * adapter that reads only local files. Every reply carries the heap's size, whether the
 * memory cap was hit, and how many network attempts were refused.
 */
const WORKER_SOURCE = `
  const { parentPort, workerData } = require("node:worker_threads");
  const diagnostics = require("node:diagnostics_channel");
  const fs = require("node:fs");
  let networkAttempts = 0;
  const refuse = (what) => {
    networkAttempts += 1;
    return new Error("OCR may not use the network (" + what + ")");
  };
  globalThis.fetch = async (url) => { throw refuse(String(url)); };
  diagnostics.subscribe("net.client.socket", ({ socket }) => socket.destroy(refuse("socket")));
  let memory = null;
  let capped = false;
  // The heap, from the module's instantiation on (it grows through grow() below).
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async function (...args) {
    const result = await instantiate.apply(this, args);
    for (const value of Object.values((result.instance || result).exports)) if (value instanceof WebAssembly.Memory) memory = value;
    return result;
  };
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function (pages) {
    memory = this;
    if (this.buffer.byteLength + pages * 65536 > workerData.maxMemoryBytes) {
      capped = true;
      throw new RangeError("OCR memory limit reached");
    }
    return grow.call(this, pages);
  };
  const core = require(workerData.corePath);
  const tesseract = require(workerData.workerScript);
  tesseract.setAdapter({
    getCore: async () => core,
    gunzip: require("node:zlib").gunzipSync,
    fetch: globalThis.fetch,
    readCache: (file) => fs.promises.readFile(file),
    writeCache: async () => undefined,
    deleteCache: async () => undefined,
    checkCache: async () => false,
  });
  parentPort.on("message", (packet) =>
    tesseract.dispatchHandlers(packet, (reply) =>
      parentPort.postMessage({ ...reply, heapBytes: memory ? memory.buffer.byteLength : 0, capped, networkAttempts }),
    ),
  );`;

interface Reply {
  jobId: string;
  status: "resolve" | "reject" | "progress";
  data: unknown;
  heapBytes: number;
  capped: boolean;
  networkAttempts: number;
}

/** One worker thread: tesseract.js's message protocol, answered job by job. */
class WasmWorker {
  readonly thread: Worker;
  /** The languages it is initialised with ("eng+msa"), once it is. */
  languages: string | null = null;
  heapBytes = 0;
  capped = false;
  networkAttempts = 0;
  private jobs = 0;
  private readonly pending = new Map<string, { resolve(data: unknown): void; reject(error: Error): void }>();
  private failure: Error | null = null;
  private stderr = "";

  constructor(corePath: string, maxMemoryBytes: number) {
    this.thread = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { corePath, workerScript: require.resolve("tesseract.js/src/worker-script/index.js"), maxMemoryBytes },
      // The WebAssembly heap is not in these; it has its own cap (see the worker).
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
      stdout: true,
      stderr: true,
    });
    this.thread.stdout.resume();
    this.thread.stderr.on("data", (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-2000)));
    this.thread.on("message", (reply: Reply) => {
      this.heapBytes = reply.heapBytes;
      this.capped = reply.capped;
      this.networkAttempts = reply.networkAttempts;
      const job = this.pending.get(reply.jobId);
      if (!job || reply.status === "progress") return;
      this.pending.delete(reply.jobId);
      if (reply.status === "resolve") job.resolve(reply.data);
      else job.reject(new Error(String(reply.data)));
    });
    this.thread.on("error", (error) => this.fail(error));
    this.thread.on("exit", (code) => this.fail(new Error(`the OCR worker exited (${code})${this.stderr ? `: ${this.stderr.trim().split("\n").at(-1)}` : ""}`)));
  }

  get gone(): boolean {
    return this.failure !== null;
  }

  call(action: string, payload: unknown): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const jobId = `job-${++this.jobs}`;
    return new Promise((resolve, reject) => {
      this.pending.set(jobId, { resolve, reject });
      this.thread.postMessage({ workerId: "pustaka", jobId, action, payload });
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const job of this.pending.values()) job.reject(this.failure);
    this.pending.clear();
  }

  stop(): Promise<void> {
    this.fail(new Error("the OCR worker was stopped"));
    return this.thread.terminate().then(() => undefined);
  }
}

/** tesseract.js in a bounded worker thread; pages are read one at a time. */
export class TesseractWasm {
  private worker: WasmWorker | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | null = null;
  private corePath: Promise<string> | null = null;
  private closed = false;
  private started = 0;
  private refusedNetwork = 0;
  private tesseractVersion: string | null = null;
  private readonly maxMemoryBytes: number;
  private readonly recycleBytes: number;
  private readonly idleMs: number;

  constructor(private readonly options: TesseractWasmOptions) {
    this.maxMemoryBytes = (options.maxMemoryMb ?? 1024) * 1024 * 1024;
    this.recycleBytes = (options.recycleMemoryMb ?? 384) * 1024 * 1024;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** The core it runs (resolving `auto`). */
  async core(): Promise<WasmCore> {
    if (this.options.core && this.options.core !== "auto") return this.options.core;
    return (await supportedWasmCores()).at(-1)!;
  }

  /** e.g. "tesseract.js 7.0.0 (Tesseract 5.1.0-288-g2a9c1, simd-lstm)"; the Tesseract version once a page was read. */
  async describe(): Promise<string> {
    return `tesseract.js ${TESSERACT_JS_VERSION} (${this.tesseractVersion ? `Tesseract ${this.tesseractVersion}, ` : ""}${await this.core()})`;
  }

  /** Workers started, the current heap, and network attempts refused (always 0 unless something tried). */
  stats(): { workersStarted: number; heapBytes: number; networkAttempts: number } {
    return { workersStarted: this.started, heapBytes: this.worker?.heapBytes ?? 0, networkAttempts: this.refusedNetwork + (this.worker?.networkAttempts ?? 0) };
  }

  /**
   * Reads one page image: PNG, JPEG, BMP, or TIFF without Deflate compression (its first
   * page); `wasmTesseract` in `ocr-engine.ts` turns any TIFF into one page first.
   */
  recognise(image: Uint8Array, options: WasmRecogniseOptions): Promise<OcrPage> {
    if (this.closed) return Promise.reject(new OcrError("ocr_failed", "The OCR engine is closed."));
    for (const language of options.languages) if (!LANGUAGE_CODE.test(language)) return Promise.reject(new OcrError("ocr_language_missing", `'${language}' is not a Tesseract language code (such as eng or msa)`));
    if (options.languages.length === 0) return Promise.reject(new OcrError("ocr_language_missing", "OCR needs at least one language"));
    const missing = missingLanguageData(this.options.tessdataDir, options.languages);
    if (missing.length > 0) return Promise.reject(new OcrError("ocr_language_missing", `The built-in OCR engine has no data for ${missing.join(", ")}: fetch the OCR language data (${missing.map((l) => `${l}.traineddata`).join(", ")}) into ${this.options.tessdataDir}`));
    const turn = this.queue.then(() => this.run(image, options));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async run(image: Uint8Array, options: WasmRecogniseOptions): Promise<OcrPage> {
    if (options.signal?.aborted) throw new OcrError("ocr_failed", "OCR was cancelled");
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // Set when the deadline passes or the caller cancels: the worker is ended, and the page's
    // own steps (still awaiting) stop before sending the worker anything more.
    const interruption: { error: OcrError | null } = { error: null };
    let stop: (error: OcrError) => void = () => undefined;
    const interrupted = new Promise<never>((_, reject) => {
      stop = (error) => {
        interruption.error ??= error;
        reject(error);
        void this.drop();
      };
    });
    const timer = setTimeout(() => stop(new OcrError("ocr_timeout", `OCR of a page took longer than ${options.timeoutMs < 1000 ? `${options.timeoutMs} ms` : `${Math.round(options.timeoutMs / 1000)} s`} and was stopped`)), options.timeoutMs);
    const onAbort = () => stop(new OcrError("ocr_failed", "OCR was cancelled"));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await Promise.race([interrupted, this.read(image, options, () => interruption.error === null)]);
    } catch (error) {
      throw interruption.error ?? (await this.explain(error));
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      await this.afterPage();
    }
  }

  private async read(image: Uint8Array, options: WasmRecogniseOptions, live: () => boolean): Promise<OcrPage> {
    const worker = await this.ready(options.languages.join("+"), live);
    // Posting a view copies its whole underlying buffer: hand over just the image's bytes.
    const whole = image.byteOffset === 0 && image.byteLength === image.buffer.byteLength;
    const result = (await worker.call("recognize", {
      image: whole ? image : image.slice(),
      options: { user_defined_dpi: String(options.dpi ?? 300) },
      output: { text: false, tsv: true },
    })) as { tsv: string | null; version?: string };
    // Tesseract may carry on past a failed allocation and return less than the page holds.
    if (worker.capped) throw new Error("memory limit reached");
    this.tesseractVersion ??= result.version ?? null;
    return parseTesseractTsv(`${TSV_HEADER}\n${result.tsv ?? ""}`);
  }

  /** A worker initialised with `languages`: the current one, or a new one. Each step first checks the page is still `live`. */
  private async ready(languages: string, live: () => boolean): Promise<WasmWorker> {
    const step = async (worker: WasmWorker, action: string, payload: unknown) => {
      if (!live()) throw new Error("stopped");
      return worker.call(action, payload);
    };
    if (this.worker?.gone) await this.drop();
    if (!this.worker) {
      this.corePath ??= this.core().then((core) => require.resolve(`tesseract.js-core/tesseract-core-${core}`));
      const corePath = await this.corePath;
      if (!live()) throw new Error("stopped");
      this.worker = new WasmWorker(corePath, this.maxMemoryBytes);
      this.started += 1;
      await step(this.worker, "load", { options: { lstmOnly: true, corePath: null, logging: false } });
    }
    const worker = this.worker;
    // Busy: the thread keeps the process alive until the page is read (idle, it does not).
    worker.thread.ref();
    if (worker.languages !== languages) {
      worker.languages = null;
      // A local path, never a URL: tesseract.js reads `<langPath>/<lang>.traineddata` from disk.
      await step(worker, "loadLanguage", { langs: languages, options: { langPath: this.options.tessdataDir, cachePath: this.options.tessdataDir, cacheMethod: "none", gzip: false, lstmOnly: true } });
      try {
        await step(worker, "initialize", { langs: languages, oem: OEM_LSTM_ONLY, config: {} });
      } catch {
        throw new OcrError("ocr_failed", `The built-in OCR engine could not load its language data for ${languages} (a damaged file? fetch it again)`);
      }
      await step(worker, "setParameters", { params: { tessedit_pageseg_mode: PSM_AUTO } });
      worker.languages = languages;
    }
    if (!live()) throw new Error("stopped");
    return worker;
  }

  /** Turns a worker's failure into an OcrError, and drops a worker that may be left broken. */
  private async explain(error: unknown): Promise<Error> {
    if (error instanceof OcrError) return error;
    const worker = this.worker;
    const message = error instanceof Error ? error.message : String(error);
    if (worker?.capped) {
      await this.drop();
      return new OcrError("ocr_failed", `OCR of the page needed more than ${Math.round(this.maxMemoryBytes / 1024 / 1024)} MiB of memory and was stopped (an image too large to read)`);
    }
    if (/Error attempting to read image/.test(message)) return new OcrError("ocr_failed", "The built-in OCR engine could not read the image (not a PNG, JPEG, TIFF or BMP, or damaged)");
    await this.drop();
    if (/ERR_WORKER_OUT_OF_MEMORY|out of memory/i.test(message)) return new OcrError("ocr_failed", "OCR of the page ran out of memory and was stopped");
    return new OcrError("ocr_failed", `The built-in OCR engine failed: ${message.slice(0, 300)}`);
  }

  private async afterPage(): Promise<void> {
    if (this.worker && (this.worker.gone || this.worker.heapBytes > this.recycleBytes)) await this.drop();
    if (this.worker && !this.closed) {
      this.worker.thread.unref();
      this.idleTimer = setTimeout(() => void this.drop(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private async drop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    this.refusedNetwork += worker.networkAttempts;
    await worker.stop();
  }

  /** Stops the worker; later pages are refused. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.drop();
  }
}
