/**
 * OCR through Tesseract (Debian's `tesseract-ocr` with `-eng` and `-msa`): one page image in,
 * its words with their boxes and confidences out, and the text rebuilt in reading order
 * (blocks, paragraphs, lines). Tesseract runs as a child process, so a hostile image can
 * crash or exhaust only it: bounded in time (killed at the deadline), in output, and to one
 * OpenMP thread (its default takes every core and slows everything else on the machine).
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

export interface OcrBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface OcrWord {
  text: string;
  /** Tesseract's confidence, 0–100. */
  confidence: number;
  box: OcrBox;
  /** Which line of `OcrPage.text` the word is on (0-based). */
  line: number;
}

export interface OcrPage {
  /** Lines joined by "\n", paragraphs by a blank line. */
  text: string;
  words: OcrWord[];
  /** Mean word confidence, 0–100 (0 with no words). */
  confidence: number;
  /** The image's size in pixels, as Tesseract read it. */
  width: number;
  height: number;
}

export interface OcrOptions {
  /** Tesseract language codes, e.g. ["eng", "msa"]. */
  languages: string[];
  /** The page is killed after this long. */
  timeoutMs: number;
  /** The resolution to assume when the image does not say (scans are usually 200–300). */
  dpi?: number;
  /** Most bytes of TSV to read (a page of text is tens of kilobytes). */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** The executable (default: the first of `TESSERACT_PATHS` that exists). */
  binary?: string;
}

export type OcrErrorCode = "ocr_unavailable" | "ocr_language_missing" | "ocr_timeout" | "ocr_failed";

/** OCR could not read the page; the message says why and, where it can, what to install. */
export class OcrError extends Error {
  override name = "OcrError";
  constructor(
    readonly code: OcrErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const run = promisify(execFile);

/** Where Debian and source builds put Tesseract. */
export const TESSERACT_PATHS = ["/usr/bin/tesseract", "/usr/local/bin/tesseract"];

/** The Tesseract executable to run: `binary` when given, else the first installed one (null: none). */
export function tesseractBinary(binary?: string): string | null {
  if (binary) return binary;
  return TESSERACT_PATHS.find((p) => existsSync(p)) ?? null;
}

const infoCache = new Map<string, Promise<{ version: string; languages: string[] } | null>>();

/**
 * The Tesseract installed: its version and languages, or null when there is none. Asked once
 * per executable and process (two runs of it per page would cost more than a small page's OCR).
 */
export function tesseractInfo(binary = tesseractBinary()): Promise<{ version: string; languages: string[] } | null> {
  if (!binary) return Promise.resolve(null);
  let info = infoCache.get(binary);
  if (!info) {
    info = askTesseract(binary);
    infoCache.set(binary, info);
  }
  return info;
}

async function askTesseract(binary: string): Promise<{ version: string; languages: string[] } | null> {
  try {
    const version = await run(binary, ["--version"], { timeout: 10_000 });
    const langs = await run(binary, ["--list-langs"], { timeout: 10_000 });
    const first = `${version.stdout}${version.stderr}`.split("\n")[0]?.trim() ?? "";
    const languages = `${langs.stdout}${langs.stderr}`
      .split("\n")
      .slice(1)
      .map((l) => l.trim())
      .filter((l) => /^[A-Za-z_]+$/.test(l));
    return { version: first.replace(/^tesseract\s+/i, ""), languages };
  } catch {
    return null;
  }
}

const LANGUAGE = /^[a-z]{3}(_[a-z]+)?$/;

/** Parses Tesseract's TSV: the page's size, and its words grouped into lines in reading order. */
export function parseTesseractTsv(tsv: string): OcrPage {
  let width = 0;
  let height = 0;
  const words: OcrWord[] = [];
  const lines: { key: string; paragraph: string; words: string[] }[] = [];
  for (const row of tsv.split("\n").slice(1)) {
    const cells = row.split("\t");
    if (cells.length < 12) continue;
    const [level, , block, paragraph, line, , left, top, w, h, conf] = cells.map(Number);
    if (level === 1) {
      width = w!;
      height = h!;
      continue;
    }
    const text = cells.slice(11).join("\t").trim();
    if (level !== 5 || !text || conf! < 0) continue;
    const key = `${block}:${paragraph}:${line}`;
    if (lines.at(-1)?.key !== key) lines.push({ key, paragraph: `${block}:${paragraph}`, words: [] });
    lines.at(-1)!.words.push(text);
    words.push({ text, confidence: conf!, box: { left: left!, top: top!, width: w!, height: h! }, line: lines.length - 1 });
  }
  const text = lines.map((l, i) => (i > 0 && lines[i - 1]!.paragraph !== l.paragraph ? "\n" : "") + l.words.join(" ")).join("\n");
  const confidence = words.length ? words.reduce((sum, w) => sum + w.confidence, 0) / words.length : 0;
  return { text, words, confidence, width, height };
}

/** Reads one page image (PNG, JPEG, TIFF…). */
export async function recognise(image: Buffer, options: OcrOptions): Promise<OcrPage> {
  const binary = tesseractBinary(options.binary);
  for (const language of options.languages) if (!LANGUAGE.test(language)) throw new OcrError("ocr_language_missing", `'${language}' is not a Tesseract language code (such as eng or msa)`);
  const info = binary ? await tesseractInfo(binary) : null;
  if (!info) throw new OcrError("ocr_unavailable", "Tesseract is not installed, so scanned pages cannot be read: install it (Debian: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa)");
  const missing = options.languages.filter((l) => !info.languages.includes(l));
  if (missing.length > 0) throw new OcrError("ocr_language_missing", `Tesseract has no data for ${missing.join(", ")} (Debian: apt-get install ${missing.map((l) => `tesseract-ocr-${l.replace(/_/g, "-")}`).join(" ")})`);
  const maxOutput = options.maxOutputBytes ?? 8 * 1024 * 1024;
  const args = ["stdin", "stdout", "-l", options.languages.join("+"), "--dpi", String(options.dpi ?? 300), "--psm", "3", "tsv"];
  return new Promise<OcrPage>((resolve, reject) => {
    // Nothing of the server's environment: one OpenMP thread, the executable by its path.
    const child = spawn(binary!, args, { env: { OMP_THREAD_LIMIT: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = "";
    let failure: OcrError | null = null;
    const stop = (error: OcrError) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(new OcrError("ocr_timeout", `OCR of a page took longer than ${options.timeoutMs < 1000 ? `${options.timeoutMs} ms` : `${Math.round(options.timeoutMs / 1000)} s`} and was stopped`)), options.timeoutMs);
    const onAbort = () => stop(new OcrError("ocr_failed", "OCR was cancelled"));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutput) stop(new OcrError("ocr_failed", `OCR produced more than ${maxOutput} bytes for one page`));
      else out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (err.length < 4000) err += chunk.toString();
    });
    // The image may be refused before it is all written (EPIPE): the exit status says what happened.
    child.stdin.on("error", () => undefined);
    child.stdin.end(image);
    child.on("error", (error) => stop(new OcrError("ocr_unavailable", `Tesseract could not be started: ${error.message}`)));
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (failure) return reject(failure);
      if (code !== 0) {
        const why = err.split("\n").find((l) => /error|cannot|unsupported|read/i.test(l))?.trim() ?? `exit status ${code}`;
        return reject(new OcrError("ocr_failed", `Tesseract could not read the image: ${why.slice(0, 300)}`));
      }
      resolve(parseTesseractTsv(Buffer.concat(out).toString("utf8")));
    });
  });
}
