/**
 * Language data for the built-in OCR engine (tesseract.js, WebAssembly), fetched like a
 * model: a catalog of Tesseract `.traineddata` files, each pinned by size and SHA-256;
 * downloaded into `<dataDir>/ocr/tessdata` with resume, refused (and deleted) when the
 * checksum differs, moved into place only once whole and verified; after that, OCR works
 * offline and nothing here touches the network again.
 *
 * The files are Tesseract's own "fast" LSTM models (tessdata_fast), the same files Debian's
 * tesseract-ocr-eng and -msa packages install, so the desktop engine and a native Tesseract
 * read with the same models.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { downloadModel, type DownloadProgress } from "../../../models/model-download.js";

export interface LanguageDataEntry {
  /** Tesseract's language code (eng, msa). */
  language: string;
  /** The language's English name, for the UI. */
  name: string;
  /** File name in the tessdata folder. */
  file: string;
  bytes: number;
  sha256: string;
  /** Where it is fetched from (the catalog's base URL plus `file`). */
  url: string;
}

/**
 * Default source: the tesseract-ocr/tessdata_fast repository on GitHub, raw files, at the
 * commit Debian's tesseract-lang 1:4.1.0 packages (65727574dfcd264acbb0c3e07860e4e9e9b22185,
 * "Add equ.traineddata", 2019-10-30; named in that package's changelog). Pinned to the commit,
 * not a branch, so the bytes behind a URL cannot change under the checksums below. A mirror
 * (an organisation's file server) replaces this base by configuration; the files under it
 * must be the same bytes.
 */
export const DEFAULT_LANGUAGE_DATA_URL = "https://raw.githubusercontent.com/tesseract-ocr/tessdata_fast/65727574dfcd264acbb0c3e07860e4e9e9b22185";

/**
 * The catalog. Sizes and checksums are those of Debian's tesseract-ocr-eng and
 * tesseract-ocr-msa 1:4.1.0-2 files, built from the commit above (the test compares them
 * with the installed packages). Another language is one more entry, with its own pinned size
 * and checksum.
 */
const CATALOG: Omit<LanguageDataEntry, "url">[] = [
  { language: "eng", name: "English", file: "eng.traineddata", bytes: 4_113_088, sha256: "7d4322bd2a7749724879683fc3912cb542f19906c83bcc1a52132556427170b2" },
  { language: "msa", name: "Malay", file: "msa.traineddata", bytes: 1_747_801, sha256: "e41a3e5febfec50c90371eb1cbb17a48b10cad387900e3420b1f134c1b766cba" },
];

/** Tesseract's language codes: also what keeps a code from naming a path. */
export const LANGUAGE_CODE = /^[a-z]{3}(_[a-z]+)?$/;

/** The catalog with its URLs under `baseUrl` (default: tessdata_fast on GitHub). */
export function languageDataCatalog(baseUrl: string = DEFAULT_LANGUAGE_DATA_URL): LanguageDataEntry[] {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new LanguageDataError("invalid_source", `'${baseUrl}' is not a URL for OCR language data`);
  }
  if (base.protocol !== "https:" && base.protocol !== "http:") throw new LanguageDataError("invalid_source", `OCR language data is fetched over HTTP(S), not ${base.protocol}`);
  const root = base.href.replace(/\/+$/, "");
  return CATALOG.map((entry) => ({ ...entry, url: `${root}/${entry.file}` }));
}

/** Where the built-in engine's language data lives in a data folder. */
export function tessdataDir(dataDir: string): string {
  return path.join(dataDir, "ocr", "tessdata");
}

export type LanguageDataErrorCode = "unknown_language" | "invalid_source" | "download_failed" | "checksum_mismatch";

export class LanguageDataError extends Error {
  override name = "LanguageDataError";
  constructor(
    readonly code: LanguageDataErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type LanguageDataState = "installed" | "missing" | "fetching";

/** One catalog language as the UI shows it. */
export interface LanguageDataStatus {
  language: string;
  name: string;
  file: string;
  state: LanguageDataState;
  /** Bytes on disk: the whole file when installed, the part fetched so far otherwise (a resumable partial download). */
  received: number;
  /** The file's size. */
  bytes: number;
}

export interface LanguageDataOptions {
  /** The server's data folder; files go to `<dataDir>/ocr/tessdata`. */
  dataDir: string;
  /** Base URL of the files (a mirror); default `DEFAULT_LANGUAGE_DATA_URL`. */
  baseUrl?: string;
}

export interface FetchLanguageOptions {
  signal?: AbortSignal;
  /** Progress over all the languages asked for: bytes so far and the total. */
  onProgress?: (progress: { language: string; received: number; total: number }) => void;
}

/**
 * Downloads under way in this process, by destination file: a second request for the same
 * file (from any store on the same folder) joins the first rather than writing the same
 * partial file twice.
 */
const fetching = new Map<string, { received: number; done: Promise<void> }>();

/** The language data of one data folder: what is installed, and fetching what is not. */
export class LanguageDataStore {
  readonly dir: string;
  readonly catalog: LanguageDataEntry[];

  constructor(options: LanguageDataOptions) {
    this.dir = tessdataDir(options.dataDir);
    this.catalog = languageDataCatalog(options.baseUrl);
  }

  /** The catalog entry for a language, or a `unknown_language` error naming those there are. */
  entry(language: string): LanguageDataEntry {
    const found = this.catalog.find((e) => e.language === language);
    if (!found) throw new LanguageDataError("unknown_language", `There is no OCR language data for '${language}' in the catalog (it has ${this.catalog.map((e) => `${e.language} (${e.name})`).join(", ")}).`);
    return found;
  }

  /** The file a language is read from (whether or not it is there). */
  file(language: string): string {
    if (!LANGUAGE_CODE.test(language)) throw new LanguageDataError("unknown_language", `'${language}' is not a Tesseract language code (such as eng or msa)`);
    return path.join(this.dir, `${language}.traineddata`);
  }

  /**
   * Whether a language can be read now, offline: its file is there (moved into place only
   * after its checksum matched) with the catalog's size. A file put there by hand for a
   * language the catalog does not list counts as installed.
   */
  installed(language: string): boolean {
    let size: number;
    try {
      size = statSync(this.file(language)).size;
    } catch {
      return false;
    }
    const entry = this.catalog.find((e) => e.language === language);
    return entry ? size === entry.bytes : size > 0;
  }

  /** Every catalog language: installed, missing (with any partial download), or being fetched (with bytes so far). */
  status(): LanguageDataStatus[] {
    return this.catalog.map((entry) => {
      const base = { language: entry.language, name: entry.name, file: entry.file, bytes: entry.bytes };
      const running = fetching.get(path.join(this.dir, entry.file));
      if (running) return { ...base, state: "fetching", received: running.received };
      if (this.installed(entry.language)) return { ...base, state: "installed", received: entry.bytes };
      const partial = path.join(this.dir, `${entry.file}.part`);
      return { ...base, state: "missing", received: existsSync(partial) ? statSync(partial).size : 0 };
    });
  }

  /**
   * Fetches the languages not yet installed, one after another, resuming any partial file.
   * Languages already installed cost nothing (no request). A checksum that differs deletes
   * the download and fails with `checksum_mismatch`; a dropped connection leaves the part
   * fetched for the next call to resume.
   */
  async fetch(languages: string[], options: FetchLanguageOptions = {}): Promise<void> {
    const entries = languages.map((l) => this.entry(l));
    const total = entries.reduce((n, e) => n + e.bytes, 0);
    let done = 0;
    for (const entry of entries) {
      const base = done;
      const report = (received: number) => options.onProgress?.({ language: entry.language, received: base + received, total });
      if (!this.installed(entry.language)) {
        const dest = path.join(this.dir, entry.file);
        let running = fetching.get(dest);
        if (!running) {
          const state = { received: 0, done: Promise.resolve() };
          state.done = this.download(entry, dest, (p) => ((state.received = p.received), report(p.received)), options.signal).finally(() => fetching.delete(dest));
          fetching.set(dest, state);
          running = state;
        }
        await running.done;
      }
      done += entry.bytes;
      report(entry.bytes);
    }
  }

  private async download(entry: LanguageDataEntry, dest: string, onProgress: (p: DownloadProgress) => void, signal?: AbortSignal): Promise<void> {
    try {
      await downloadModel({ url: entry.url, dest, expectedSha256: entry.sha256, expectedBytes: entry.bytes, onProgress, signal });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const cause = (error as Error & { cause?: unknown }).cause;
      const message = `${(error as Error).message}${cause instanceof Error ? ` (${cause.message})` : ""}`;
      if (/checksum mismatch/.test(message)) {
        throw new LanguageDataError("checksum_mismatch", `The ${entry.name} OCR data from ${entry.url} is not the file the catalog names (its SHA-256 differs), so it was deleted; check the source or mirror.`);
      }
      throw new LanguageDataError("download_failed", `Fetching the ${entry.name} OCR data (${entry.file}) from ${entry.url} failed: ${message}`);
    }
  }
}
