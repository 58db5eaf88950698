/**
 * A parsed document's OCR report, as it is stored: the summary in clear (pages, why, how sure:
 * no text), each page's words and boxes sealed under the corpus key, bound to the document
 * and page (the AAD), compact (`[text, left, top, width, height, confidence]` per word).
 */
import type { DataCipher } from "../security/data-cipher.js";
import type { OcrSummary } from "../store/document-store.js";
import type { SealedOcrPage } from "../store/ocr-page-store.js";
import type { OcrReport, OcrWord } from "./ingest/types.js";

export type PackedWord = [text: string, left: number, top: number, width: number, height: number, confidence: number];

export function ocrSummary(report: OcrReport): OcrSummary {
  return {
    engine: report.engine,
    languages: report.languages,
    pages: report.pages.map((p) => ({ page: p.page, reason: p.reason, confidence: p.confidence, words: p.words.length, ...(p.deskewed !== undefined ? { deskewed: p.deskewed } : {}) })),
  };
}

export function sealOcrPages(cipher: DataCipher, documentId: string, report: OcrReport): SealedOcrPage[] {
  return report.pages.map((p) => ({
    page: p.page,
    width: p.width,
    height: p.height,
    words: cipher.seal(Buffer.from(JSON.stringify(p.words.map((w): PackedWord => [w.text, ...w.box, w.confidence])), "utf8"), aad(documentId, p.page)),
  }));
}

/** A page whose words are already packed (`[text, left, top, width, height, confidence]`), as a corpus bundle carries them. */
export function sealPackedOcrPage(cipher: DataCipher, documentId: string, page: { page: number; width: number; height: number; words: readonly PackedWord[] }): SealedOcrPage {
  return { page: page.page, width: page.width, height: page.height, words: cipher.seal(Buffer.from(JSON.stringify(page.words), "utf8"), aad(documentId, page.page)) };
}

export function openOcrWords(cipher: DataCipher, documentId: string, page: SealedOcrPage): OcrWord[] {
  const packed = JSON.parse(cipher.open(page.words, aad(documentId, page.page)).toString("utf8")) as PackedWord[];
  return packed.map(([text, left, top, width, height, confidence]) => ({ text, box: [left, top, width, height], confidence }));
}

function aad(documentId: string, page: number): string {
  return `ocr:${documentId}:${page}`;
}
