/** OCR on the wire: a page's words with their boxes, and the page number in a path. */
import type { Request } from "express";
import type { OcrPageWords } from "../../rag/answer/source-service.js";
import { routeParam } from "../route-param.js";

export function ocrPageObject(page: OcrPageWords) {
  return {
    object: "rag.ocr_page" as const,
    document_id: page.document.id,
    page: page.page,
    width: page.width,
    height: page.height,
    confidence: page.confidence,
    words: page.words.map((w) => ({ text: w.text, box: w.box, confidence: w.confidence })),
  };
}

/**
 * `:page` as a 1-based page number, or NaN when it is not one: the service says so (400
 * `invalid_page`) once the corpus and document are known to exist (an unknown one is a 404 first).
 */
export function pageNumberParam(req: Request): number {
  const raw = routeParam(req, "page");
  return /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : Number.NaN;
}
