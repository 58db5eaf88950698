/**
 * Parses a document in a short-lived worker thread with a heap limit and a
 * deadline, so a hostile file (a decompression bomb, an endless PDF, absurdly
 * nested HTML) fails alone with a `ParseError` instead of exhausting or hanging
 * the server. The worker's heap is returned to the system when it exits.
 */
import { Worker } from "node:worker_threads";
import type { ParseJob, ParseReply } from "./parse-by-format.js";
import { ParseError, type DocumentFormat, type ParsedDocument } from "./types.js";

export interface ParseOptions {
  /** Wall-clock limit for one document, in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /**
   * Heap limit of the parse worker (V8 old generation), in MiB. Default 192. The inflated
   * data parsers hold outside the heap is bounded by the format checks (see
   * `inspectDocxArchive`, `inspectPdfStreams`), so a parse's memory stays near this.
   */
  maxMemoryMb?: number;
  /**
   * Hand the caller's buffer to the worker instead of a copy (the caller's array is then
   * detached and reads as empty). Saves a copy of the file; only possible when the array
   * spans its whole buffer, otherwise a copy is made anyway. Default false.
   */
  transfer?: boolean;
  /** Longest extracted text accepted, in characters. Default 20 000 000. */
  maxTextChars?: number;
  /** Aborting stops the worker; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** URL of the `parse-by-format` module the worker loads (bundled builds); default: beside this one. */
  parserModule?: string;
}

export const DEFAULT_PARSE_TIMEOUT_MS = 60_000;
export const DEFAULT_PARSE_MEMORY_MB = 192;
export const DEFAULT_MAX_TEXT_CHARS = 20_000_000;

/** The worker's dispatch module, beside this one: `.ts` under tsx (tests, dev), `.js` once compiled. */
export function defaultParserModule(): string {
  return new URL(`./parse-by-format${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url).href;
}

const WORKER_SOURCE = `
  const { parentPort, workerData } = require("node:worker_threads");
  // Running from TypeScript sources (tests, \`npm run dev\`): load them through tsx.
  const ready = workerData.module.endsWith(".ts") ? import("tsx/esm/api").then((tsx) => tsx.register()) : Promise.resolve();
  ready.then(() => import(workerData.module)).then(
    (parser) => parser.runParseJob(workerData.job).then((reply) => parentPort.postMessage(reply)),
    (error) => parentPort.postMessage({ ok: false, fatal: String((error && error.stack) || error) }),
  );`;

/**
 * Parses `bytes` as `format` in a worker thread. The caller's bytes are copied once
 * and the copy is transferred (not cloned) to the worker; the caller's array stays usable
 * (unless `transfer`).
 * @throws ParseError `empty_document` (no bytes or no text), `parse_timeout`, `document_too_complex`
 *   (heap limit reached or the parser crashed), and whatever the format's parser reports
 *   (`corrupt_document`, `encrypted_document`, `document_too_large`, ...).
 * @throws Error when the worker cannot load the parsers at all (an installation fault, not the document's).
 */
export async function parseDocument(bytes: Uint8Array, format: DocumentFormat, options: ParseOptions = {}): Promise<ParsedDocument> {
  if (bytes.length === 0) throw new ParseError("empty_document", "The file is empty.");
  options.signal?.throwIfAborted();
  const timeoutMs = options.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
  const maxMemoryMb = options.maxMemoryMb ?? DEFAULT_PARSE_MEMORY_MB;
  const whole = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const copy = options.transfer && whole ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  const job: ParseJob = { format, bytes: copy, maxTextChars: options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS };
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { module: options.parserModule ?? defaultParserModule(), job },
    transferList: [copy.buffer],
    resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb, maxYoungGenerationSizeMb: Math.min(16, Math.max(8, maxMemoryMb / 8)), stackSizeMb: 4 },
    // pdf.js and mammoth may log about odd files; that is not the server's output.
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();

  const outcome = await new Promise<{ document: ParsedDocument } | { error: Error }>((resolve) => {
    const settle = (result: { document: ParsedDocument } | { error: Error }): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onAbort = (): void => settle({ error: toError(options.signal?.reason) });
    const timer = setTimeout(() => settle({ error: new ParseError("parse_timeout", `Parsing took longer than ${formatSeconds(timeoutMs)} and was stopped.`) }), timeoutMs);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (reply: ParseReply | { ok: false; fatal: string }) => {
      if (reply.ok) settle({ document: reply.document });
      else if ("fatal" in reply) settle({ error: new Error(`The document parsers could not be loaded: ${reply.fatal}`) });
      else settle({ error: new ParseError(reply.code, reply.message) });
    });
    worker.on("error", (error: Error & { code?: string }) => {
      const message =
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? `Parsing needed more than ${maxMemoryMb} MB of memory and was stopped.`
          : "The document made the parser fail; it is too complex or damaged to read.";
      settle({ error: new ParseError("document_too_complex", message) });
    });
    worker.once("exit", (code) => settle({ error: new ParseError("document_too_complex", `The parser stopped unexpectedly (exit code ${code}).`) }));
  });
  await worker.terminate();
  if ("error" in outcome) throw outcome.error;
  return outcome.document;
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function toError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === "string" ? reason : "The parse was aborted.");
}
