/**
 * A page OCR read, as the blocks every parser gives: Tesseract's paragraphs become
 * paragraphs (lines joined, words hyphenated across lines joined again), and a short
 * paragraph set clearly larger than the page's body text becomes a heading. Each block
 * keeps which words it holds and where each begins in its text, so the document can say
 * where on the page image every word of a passage is.
 */
import { joinLines } from "../pdf-layout.js";
import type { OcrPage as RecognisedPage, OcrWord as RecognisedWord } from "./tesseract.js";

export interface OcrBlock {
  kind: "heading" | "paragraph";
  text: string;
  level?: number;
  /** The block's words, each with where it begins in `text`. */
  words: { word: RecognisedWord; at: number }[];
}

/** Lines at least this much taller than the page's typical line are headings (when short). */
const HEADING_RATIO = 1.3;
const HEADING_MAX_CHARS = 120;

export function ocrBlocks(page: RecognisedPage): OcrBlock[] {
  const lines = linesOf(page);
  if (lines.length === 0) return [];
  const body = median(lines.map((l) => l.height));
  const paragraphs: Line[][] = [];
  for (const line of lines) {
    const last = paragraphs.at(-1);
    if (last && last.at(-1)!.paragraph === line.paragraph) last.push(line);
    else paragraphs.push([line]);
  }
  return paragraphs.map((group) => {
    let text = "";
    const words: OcrBlock["words"] = [];
    for (const line of group) {
      const lineText = line.words.map((w) => w.text).join(" ");
      const joined = text === "" ? lineText : joinLines(text, lineText);
      let at = joined.length - lineText.length;
      for (const word of line.words) {
        words.push({ word, at });
        at += word.text.length + 1;
      }
      text = joined;
    }
    const height = Math.max(...group.map((l) => l.height));
    const heading = group.length <= 2 && text.length <= HEADING_MAX_CHARS && /\p{L}/u.test(text) && height >= body * HEADING_RATIO;
    return heading ? { kind: "heading", text, level: height >= body * 1.8 ? 1 : 2, words } : { kind: "paragraph", text, words };
  });
}

interface Line {
  words: RecognisedWord[];
  paragraph: number;
  /** The line's letter height: the median height of its words' boxes. */
  height: number;
}

/**
 * The page's lines in reading order with their paragraph, from the text Tesseract gave
 * (lines joined by a newline, paragraphs by a blank line) and the words' line numbers.
 */
function linesOf(page: RecognisedPage): Line[] {
  const byLine = new Map<number, RecognisedWord[]>();
  for (const word of page.words) {
    const list = byLine.get(word.line);
    if (list) list.push(word);
    else byLine.set(word.line, [word]);
  }
  const lines: Line[] = [];
  let paragraph = 0;
  let index = 0;
  for (const row of page.text.split("\n")) {
    if (row.trim() === "") {
      paragraph++;
      continue;
    }
    const words = byLine.get(index++) ?? [];
    if (words.length > 0) lines.push({ words, paragraph, height: median(words.map((w) => w.box.height)) });
  }
  return lines;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
