/**
 * OCR for the parsers (scanned PDF pages, image files): one page image in, the page's
 * blocks and its report (words, boxes, confidence) out, with the limits every page gets,
 * and Tesseract's failures turned into the document's `ParseError`s.
 */
import { ParseError, type OcrPage, type ParseSettings } from "../types.js";
import { straighten, unrotateBox, type PageImage } from "./deskew.js";
import { ocrBlocks, type OcrBlock } from "./ocr-blocks.js";
import { chooseOcrEngine, type OcrEngine } from "./ocr-engine.js";
import { OcrError } from "./tesseract.js";

export const OCR_LIMITS = {
  /** One page's OCR is stopped after this long (a dense 300-DPI page takes 5–15 s on one core). */
  pageTimeoutMs: 120_000,
  /** Pages one document may have OCR'd; a document needing more fails (`document_too_large`). */
  maxPages: 500,
  /** Largest page image OCR'd, in pixels (an A3 page at 300 DPI is 17 million). */
  maxPagePixels: 40_000_000,
};

/** Resolution pages are rendered at for OCR, and assumed for images that do not say. */
export const OCR_DPI = 300;

export interface RecognisedPage {
  blocks: OcrBlock[];
  report: OcrPage;
}

/**
 * The engine for these settings, kept for the life of the parse worker: the built-in
 * (WebAssembly) engine's worker stays warm from page to page and document to document.
 */
const engines = new Map<string, Promise<OcrEngine>>();

function engineFor(settings: ParseSettings): Promise<OcrEngine> {
  const key = `${settings.ocrLanguages.join("+")}\u0000${settings.dataDir ?? ""}\u0000${settings.ocrEngine ?? "auto"}`;
  let engine = engines.get(key);
  if (!engine) {
    // No data folder: only an installed Tesseract can serve (the built-in engine's data lives there).
    engine = chooseOcrEngine({
      languages: settings.ocrLanguages,
      dataDir: settings.dataDir ?? "/nonexistent",
      // The built-in engine on request: the installed one is then passed over as if absent.
      ...(settings.ocrEngine === "builtin" ? { binary: "/nonexistent/tesseract" } : {}),
    });
    engines.set(key, engine);
    // A failure is not kept: the language data may be fetched, or Tesseract installed, meanwhile.
    engine.catch(() => engines.delete(key));
  }
  return engine;
}

/** What read the pages, for the document's report ("tesseract 5.3.0", "tesseract.js 7.0.0 (WebAssembly)"). */
export async function ocrEngineName(settings: ParseSettings): Promise<string> {
  return (await engineFor(settings)).describe();
}

/**
 * Checks OCR can run with the corpus's languages before any page is rendered.
 * @returns null when it can, else why not (said to the user, with what to install or fetch).
 */
export async function ocrUnavailable(settings: ParseSettings): Promise<string | null> {
  if (!settings.ocr) return "OCR is turned off for this corpus.";
  try {
    await engineFor(settings);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Reads one page image.
 * @throws ParseError `ocr_unavailable` (engine or language missing), `parse_timeout` (the page
 *   took longer than the limit), `corrupt_document` (the engine could not read the image).
 */
export async function recognisePage(image: PageImage, page: number, reason: OcrPage["reason"], settings: ParseSettings, dpi = OCR_DPI): Promise<RecognisedPage> {
  let read;
  let straight;
  try {
    // A page scanned askew is straightened first; its words' boxes are turned back after.
    straight = await straighten(image);
    const engine = await engineFor(settings);
    read = await engine.recognise(straight.image, { languages: settings.ocrLanguages, timeoutMs: OCR_LIMITS.pageTimeoutMs, dpi });
  } catch (error) {
    throw toParseError(error, page);
  }
  const blocks = ocrBlocks(read);
  return {
    blocks,
    report: {
      page,
      reason,
      confidence: Math.round(read.confidence * 10) / 10,
      width: straight.original.width,
      height: straight.original.height,
      ...(straight.angle !== 0 ? { deskewed: straight.angle } : {}),
      words: read.words.map((w) => ({ text: w.text, box: unrotateBox([w.box.left, w.box.top, w.box.width, w.box.height], straight), confidence: Math.round(w.confidence) })),
    },
  };
}

function toParseError(error: unknown, page: number): ParseError {
  if (!(error instanceof OcrError)) return new ParseError("corrupt_document", `Page ${page} could not be read by OCR (${error instanceof Error ? error.message : String(error)}).`);
  switch (error.code) {
    case "ocr_unavailable":
    case "ocr_language_missing":
      return new ParseError("ocr_unavailable", `${error.message}.`);
    case "ocr_timeout":
      return new ParseError("parse_timeout", `Page ${page}: ${error.message}.`);
    default:
      return new ParseError("corrupt_document", `Page ${page}: ${error.message}.`);
  }
}
