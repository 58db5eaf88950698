/**
 * Whether this server can read scans and images, and in which languages: what the workbench
 * shows beside a corpus's OCR languages, what a corpus's languages are checked against, and
 * the built-in engine's language data (fetched like a model, for machines without Tesseract:
 * the desktop app).
 */
import { conflict, invalidRequest, ServiceError } from "../errors.js";
import { DEFAULT_PARSE_SETTINGS } from "./ingest/types.js";
import { LanguageDataError, LanguageDataStore, type LanguageDataStatus } from "./ingest/ocr/language-data.js";
import { missingLanguageData, TESSERACT_JS_VERSION } from "./ingest/ocr/tesseract-wasm.js";
import { tesseractBinary, tesseractInfo } from "./ingest/ocr/tesseract.js";

export interface OcrStatusView {
  available: boolean;
  engine: "tesseract" | "tesseract-wasm" | null;
  version: string | null;
  languages: string[];
  defaultLanguages: string[];
  reason: string | null;
  /** The built-in engine's catalog: each language, and whether its data is here. */
  languageData: LanguageDataStatus[];
}

export interface OcrStatusOptions {
  /** The server's data folder (the built-in engine's language data is under it); absent: none. */
  dataDir?: string;
  /** `builtin`: the installed Tesseract is passed over. */
  engine?: "auto" | "builtin";
  /** A mirror of the language data (default: the catalog's). */
  languageDataUrl?: string;
}

/** Tesseract language codes: three letters, an optional variant (`chi_sim`). */
const LANGUAGE_CODE = /^[a-z]{3}(_[a-z]+)?$/;
/** Tesseract's data files that are not languages (orientation and script detection). */
const NOT_LANGUAGES = new Set(["osd", "equ"]);

export class OcrStatusService {
  private readonly data: LanguageDataStore | null;

  constructor(private readonly options: OcrStatusOptions = {}) {
    this.data = options.dataDir ? new LanguageDataStore({ dataDir: options.dataDir, ...(options.languageDataUrl ? { baseUrl: options.languageDataUrl } : {}) }) : null;
  }

  async status(): Promise<OcrStatusView> {
    const defaults = DEFAULT_PARSE_SETTINGS.ocrLanguages;
    const languageData = this.data?.status() ?? [];
    const info = this.options.engine === "builtin" ? null : await tesseractInfo(tesseractBinary() ?? undefined);
    if (info) {
      const languages = info.languages.filter((l) => !NOT_LANGUAGES.has(l)).sort();
      const missing = defaults.filter((l) => !languages.includes(l));
      const reason = missing.length > 0 ? `The default languages ${missing.join(", ")} are not installed (Debian: apt-get install ${missing.map((l) => `tesseract-ocr-${l}`).join(" ")}).` : null;
      return { available: true, engine: "tesseract", version: info.version, languages, defaultLanguages: defaults, reason, languageData };
    }
    const installed = this.data ? languageData.filter((l) => l.state === "installed").map((l) => l.language) : [];
    const builtin = this.data ? installed.filter((l) => missingLanguageData(this.data!.dir, [l]).length === 0) : [];
    if (builtin.length > 0) {
      const missing = defaults.filter((l) => !builtin.includes(l));
      const reason = missing.length > 0 ? `Fetch the language data for ${missing.join(", ")} to read scans in it (POST /v1/rag/ocr/languages/{language}).` : null;
      return { available: true, engine: "tesseract-wasm", version: `tesseract.js ${TESSERACT_JS_VERSION}`, languages: builtin.sort(), defaultLanguages: defaults, reason, languageData };
    }
    return {
      available: false,
      engine: null,
      version: null,
      languages: [],
      defaultLanguages: defaults,
      reason: this.data
        ? "No OCR engine can read scans yet: fetch the built-in engine's language data (English and Malay, 5.9 MB; POST /v1/rag/ocr/languages/eng and …/msa), or install Tesseract (Debian: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa)."
        : "No OCR engine is installed: scanned PDFs and images cannot be read (Debian: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa).",
      languageData,
    };
  }

  /**
   * Fetches one language's data for the built-in engine (resumed if cut, checked against the
   * catalog's sha256); resolves once it is installed.
   * @throws 400 `unknown_ocr_language` (not in the catalog), 409 `ocr_data_unavailable` (no data folder), 502 `ocr_data_fetch_failed`.
   */
  async fetchLanguage(language: string, signal?: AbortSignal): Promise<OcrStatusView> {
    if (!this.data) throw conflict("This server keeps no OCR language data (it has no data folder)", "ocr_data_unavailable");
    try {
      this.data.entry(language);
    } catch {
      throw invalidRequest(`'${language.slice(0, 40)}' is not in the OCR language catalog (${this.data.status().map((l) => l.language).join(", ")})`, "unknown_ocr_language", "language");
    }
    try {
      await this.data.fetch([language], signal ? { signal } : {});
    } catch (error) {
      const why = error instanceof LanguageDataError ? error.message : error instanceof Error ? error.message : String(error);
      throw new ServiceError("bad_gateway", `The language data for ${language} could not be fetched: ${why}`, { code: "ocr_data_fetch_failed", cause: error });
    }
    return this.status();
  }

  /**
   * A corpus's OCR languages, checked: codes Tesseract knows the shape of, no repeats, and
   * readable here when an engine is (with none, any well-formed code is kept: the documents
   * say what is missing when they are read).
   * @throws 400 `invalid_ocr_languages`.
   */
  async check(languages: string[]): Promise<string[]> {
    const bad = languages.filter((l) => !LANGUAGE_CODE.test(l) || NOT_LANGUAGES.has(l));
    if (bad.length > 0) throw invalidRequest(`'${bad[0]!.slice(0, 40)}' is not an OCR language code (three letters, such as eng or msa)`, "invalid_ocr_languages", "ocr_languages");
    if (new Set(languages).size !== languages.length) throw invalidRequest("ocr_languages names a language twice", "invalid_ocr_languages", "ocr_languages");
    const status = await this.status();
    if (status.available) {
      const missing = languages.filter((l) => !status.languages.includes(l));
      if (missing.length > 0) {
        throw invalidRequest(`OCR cannot read ${missing.join(", ")} here: it reads ${status.languages.join(", ")}${status.engine === "tesseract" ? ` (Debian: apt-get install ${missing.map((l) => `tesseract-ocr-${l.replace(/_/g, "-")}`).join(" ")})` : " (fetch the language's data first)"}`, "invalid_ocr_languages", "ocr_languages");
      }
    }
    return languages;
  }
}
