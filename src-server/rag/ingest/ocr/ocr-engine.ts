/**
 * The OCR engine a parse uses, whichever Tesseract reads the page: Debian's (or any
 * installed) `tesseract` in a child process, or tesseract.js (WebAssembly) inside the app
 * with language data fetched into the data folder. Both give the same `OcrPage`: text in
 * reading order, words with boxes and confidences, the image's size.
 *
 * `chooseOcrEngine` prefers the native one where it is installed with the languages wanted,
 * else the built-in one where the data folder holds the languages, else fails with what to
 * install or fetch. Measured (bench/ocr-engines.ts): the same text from both; warm, the
 * WebAssembly engine spends about a tenth less CPU per page (the native process loads its
 * models for every page), but its first page waits seconds for the worker to start, and it
 * holds 100–180 MB while warm where the native process peaks at 55–140 MB per page and then
 * holds nothing; the native one also needs nothing fetched and is updated with the system.
 */
import { LANGUAGE_CODE, languageDataCatalog, tessdataDir } from "./language-data.js";
import { missingLanguageData, TesseractWasm, type TesseractWasmOptions } from "./tesseract-wasm.js";
import { OcrError, recognise as recogniseNative, tesseractBinary, tesseractInfo, type OcrPage } from "./tesseract.js";

export interface OcrRecogniseOptions {
  /** Tesseract language codes, e.g. ["eng", "msa"]. */
  languages: string[];
  /** The page is stopped after this long (ms). */
  timeoutMs: number;
  /** The resolution to assume when the image does not say. Default 300. */
  dpi?: number;
  signal?: AbortSignal;
}

export interface OcrEngine {
  readonly kind: "native" | "wasm";
  /** What read the pages, for the document's OCR report (e.g. "tesseract 5.3.0"). */
  describe(): Promise<string>;
  /**
   * Reads one page image: PNG, JPEG, BMP, or TIFF (its first page: a caller wanting another
   * page of a TIFF hands that page over on its own).
   * @throws OcrError `ocr_language_missing`, `ocr_timeout`, `ocr_failed` (unreadable or too large an image, cancelled), `ocr_unavailable`
   */
  recognise(image: Uint8Array, options: OcrRecogniseOptions): Promise<OcrPage>;
  /** Releases what the engine holds (the WebAssembly worker). Idempotent. */
  close(): Promise<void>;
}

const isTiff = (b: Uint8Array) => b.length >= 4 && ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a));

/**
 * One page, in a form both engines read alike. A TIFF becomes a PNG of its first page:
 * Tesseract's command line would read every page of a multi-page TIFF into one result, and
 * tesseract.js's libtiff lacks Deflate compression, which ImageMagick and scanners use.
 */
async function onePage(image: Uint8Array): Promise<Uint8Array> {
  if (!isTiff(image)) return image;
  try {
    const { default: sharp } = await import("sharp");
    return await sharp(image, { page: 0 }).png({ compressionLevel: 1 }).toBuffer();
  } catch (error) {
    throw new OcrError("ocr_failed", `The TIFF image could not be read: ${(error as Error).message.slice(0, 200)}`);
  }
}

/** Debian's (or any installed) Tesseract, a child process per page. */
export function nativeTesseract(options: { binary?: string } = {}): OcrEngine {
  const binary = options.binary;
  return {
    kind: "native",
    async describe() {
      const info = await tesseractInfo(tesseractBinary(binary));
      return info ? `tesseract ${info.version}` : "tesseract";
    },
    async recognise(image, opts) {
      const page = await onePage(image);
      return recogniseNative(Buffer.from(page.buffer, page.byteOffset, page.byteLength), { ...opts, ...(binary ? { binary } : {}) });
    },
    async close() {},
  };
}

/** tesseract.js (WebAssembly) in a bounded worker, reading language data from `tessdataDir`. */
export function wasmTesseract(options: TesseractWasmOptions): OcrEngine {
  const engine = new TesseractWasm(options);
  return {
    kind: "wasm",
    describe: () => engine.describe(),
    async recognise(image, opts) {
      return engine.recognise(await onePage(image), opts);
    },
    close: () => engine.close(),
  };
}

export interface ChooseOcrEngineOptions {
  /** The languages pages will be read with. */
  languages: string[];
  /** The server's data folder: the built-in engine's language data is in `<dataDir>/ocr/tessdata`. */
  dataDir: string;
  /** The Tesseract executable (default: the installed one, if any). */
  binary?: string;
  /** Settings of the built-in engine, should it be chosen. */
  wasm?: Omit<TesseractWasmOptions, "tessdataDir">;
}

/** How much to fetch, for the message: "Malay (msa.traineddata, 1.7 MB)". */
function describeData(language: string): string {
  const entry = languageDataCatalog().find((e) => e.language === language);
  return entry ? `${entry.name} (${entry.file}, ${(entry.bytes / 1e6).toFixed(1)} MB)` : `${language}.traineddata (not in the OCR language catalog: copy the file there)`;
}

/**
 * The engine to read `languages` with: native Tesseract when it is installed with every one
 * of them, else tesseract.js when the data folder holds every one, else an `ocr_unavailable`
 * OcrError saying what to install or fetch. The caller closes the engine.
 */
export async function chooseOcrEngine(options: ChooseOcrEngineOptions): Promise<OcrEngine> {
  const { languages } = options;
  if (languages.length === 0) throw new OcrError("ocr_language_missing", "OCR needs at least one language");
  for (const language of languages) if (!LANGUAGE_CODE.test(language)) throw new OcrError("ocr_language_missing", `'${language}' is not a Tesseract language code (such as eng or msa)`);
  const binary = tesseractBinary(options.binary);
  const native = binary ? await tesseractInfo(binary) : null;
  const nativeMissing = native ? languages.filter((l) => !native.languages.includes(l)) : languages;
  if (native && nativeMissing.length === 0) return nativeTesseract(options.binary ? { binary: options.binary } : {});

  const dir = tessdataDir(options.dataDir);
  const wasmOptions: TesseractWasmOptions = { ...options.wasm, tessdataDir: dir };
  const wasmMissing = missingLanguageData(dir, languages);
  if (wasmMissing.length === 0) return wasmTesseract(wasmOptions);

  const debian = (langs: string[]) => langs.map((l) => `tesseract-ocr-${l.replace(/_/g, "-")}`).join(" ");
  const nativeWhy = native
    ? `the installed Tesseract has no data for ${nativeMissing.join(", ")} (Debian: apt-get install ${debian(nativeMissing)})`
    : `Tesseract is not installed (Debian: apt-get install tesseract-ocr ${debian(languages)})`;
  throw new OcrError(
    "ocr_unavailable",
    `No OCR engine can read ${languages.join("+")}: ${nativeWhy}, and the built-in engine has no language data for ${wasmMissing.join(", ")} (fetch ${wasmMissing.map(describeData).join(" and ")} into ${dir}).`,
  );
}
