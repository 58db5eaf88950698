import { describe, expect, it } from "vitest";
import type { OcrPage } from "../api/contract.js";
import { highlightOcrPages } from "./ocr-highlight.js";

/** A page of words laid out left to right, 100 px per word, 40 px per line (`|` starts a line). */
function page(n: number, text: string, width = 1100, height = 560): OcrPage {
  const words: OcrPage["words"] = [];
  let line = 0;
  let x = 0;
  for (const token of text.split(" ")) {
    if (token === "|") {
      line++;
      x = 0;
      continue;
    }
    words.push({ text: token, box: [64 + x * 100, 50 + line * 40, 90, 30], confidence: 90 });
    x++;
  }
  return { object: "rag.ocr_page", document_id: "doc_1", page: n, width, height, confidence: 90, words };
}

const notice = page(1, "NOTIS GANGGUAN BEKALAN AIR | Bekalan air di Klang akan terganggu pada 14 Mac 2024 | dari jam 9.00 pagi hingga 6.00 petang. | Water supply in Klang will be interrupted");

describe("highlightOcrPages", () => {
  it("finds the passage's words whatever the spacing, case and Markdown, and gives their boxes as fractions of the page", () => {
    const [hl] = highlightOcrPages([notice], "# Notis gangguan bekalan air\n\nBekalan air di  Klang akan terganggu", null);
    expect(hl!.passage.map((w) => w.text)).toEqual(["NOTIS", "GANGGUAN", "BEKALAN", "AIR", "Bekalan", "air", "di", "Klang", "akan", "terganggu"]);
    const first = hl!.passage[0]!;
    expect(first.left).toBeCloseTo((64 / 1100) * 100);
    expect(first.top).toBeCloseTo((50 / 560) * 100);
    expect(first.width).toBeCloseTo((90 / 1100) * 100);
    expect(first.height).toBeCloseTo((30 / 560) * 100);
    for (const w of hl!.passage) {
      expect(w.left + w.width).toBeLessThanOrEqual(100);
      expect(w.top + w.height).toBeLessThanOrEqual(100);
    }
    expect(hl!.support).toEqual([]);
  });

  it("marks the supporting sentence apart from the rest of the passage", () => {
    const [hl] = highlightOcrPages([notice], "Bekalan air di Klang akan terganggu pada 14 Mac 2024 dari jam 9.00 pagi hingga 6.00 petang.", "14 Mac 2024 dari jam 9.00 pagi");
    expect(hl!.support.map((w) => w.text)).toEqual(["14", "Mac", "2024", "dari", "jam", "9.00", "pagi"]);
    expect(hl!.passage).toHaveLength(17);
  });

  it("follows a passage over a page break onto both pages", () => {
    const next = page(2, "hingga 6.00 petang kerana kerja penyelenggaraan paip utama.");
    const pages = highlightOcrPages([next, notice], "Water supply in Klang will be interrupted hingga 6.00 petang kerana kerja");
    expect(pages.map((p) => p.page)).toEqual([1, 2]);
    expect(pages[0]!.passage.map((w) => w.text)).toEqual(["Water", "supply", "in", "Klang", "will", "be", "interrupted"]);
    expect(pages[1]!.passage.map((w) => w.text)).toEqual(["hingga", "6.00", "petang", "kerana", "kerja"]);
  });

  it("highlights nothing when the passage is not on the page, or the page has no words", () => {
    expect(highlightOcrPages([notice], "Laporan banjir Kelantan")[0]!.passage).toEqual([]);
    expect(highlightOcrPages([{ ...notice, words: [] }], "Bekalan air")[0]!.passage).toEqual([]);
  });

  it("keeps boxes inside the page even when a box runs past its edge", () => {
    const edge: OcrPage = { ...notice, words: [{ text: "AIR", box: [1080, 540, 60, 40], confidence: 80 }] };
    const [w] = highlightOcrPages([edge], "air")[0]!.passage;
    expect(w!.left).toBeCloseTo((1080 / 1100) * 100);
    expect(w!.left + w!.width).toBeCloseTo(100);
    expect(w!.top + w!.height).toBeCloseTo(100);
  });
});
