/**
 * Where a cited passage is on a page OCR read: the passage is matched against the page's
 * words in reading order, as pdf-highlight.ts matches it against a text layer's spans
 * (whitespace, case and Markdown marks ignored), and the matched words' boxes are given as
 * fractions of the page image, so they scale with the page however large it is drawn.
 */
import type { OcrPage } from "../api/contract.js";
import { findPassageSpans } from "./pdf-highlight.js";

export interface WordBox {
  /** Index of the word in its page's `words`. */
  index: number;
  text: string;
  /** Left, top, width and height as percentages of the page image. */
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface PageHighlight {
  page: number;
  passage: WordBox[];
  /** The words of the part that supports the answer (within or beside the passage). */
  support: WordBox[];
}

/** A word's box in percent of the page, cut to the page (a box may run past an edge). */
const box = (page: OcrPage, index: number): WordBox => {
  const word = page.words[index]!;
  const [x, y, w, h] = word.box;
  const pct = (v: number, of: number) => (of > 0 ? Math.min(100, Math.max(0, (v / of) * 100)) : 0);
  const left = pct(x, page.width);
  const top = pct(y, page.height);
  return { index, text: word.text, left, top, width: pct(x + w, page.width) - left, height: pct(y + h, page.height) - top };
};

/**
 * The words of `passage` (and of `support`) on the OCR'd pages, for each page. Pages are
 * matched as one sequence in page order, so a passage that runs over a page break is found
 * on both pages.
 */
export function highlightOcrPages(pages: readonly OcrPage[], passage: string, support: string | null = null): PageHighlight[] {
  const ordered = [...pages].sort((a, b) => a.page - b.page);
  const owner: { page: number; word: number }[] = [];
  const texts: string[] = [];
  for (const [p, page] of ordered.entries()) {
    page.words.forEach((w, i) => {
      texts.push(w.text);
      owner.push({ page: p, word: i });
    });
  }
  const collect = (hits: number[]) => {
    const byPage = ordered.map((): WordBox[] => []);
    for (const hit of hits) {
      const o = owner[hit]!;
      byPage[o.page]!.push(box(ordered[o.page]!, o.word));
    }
    return byPage;
  };
  const passageHits = collect(findPassageSpans(texts, passage));
  const supportHits = collect(support ? findPassageSpans(texts, support) : []);
  return ordered.map((page, p) => ({ page: page.page, passage: passageHits[p]!, support: supportHits[p]! }));
}
