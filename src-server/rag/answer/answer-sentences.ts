/**
 * An answer cut into the sentences attribution judges: `[n]` source markers set aside
 * (each belongs to the sentence it follows), list bullets left out, fragments holding
 * nothing but markers and punctuation dropped. English and Bahasa Melayu alike.
 */
import { sentenceSpans } from "../chunking/sentences.js";

export interface AnswerSentenceSpan {
  /** Offsets into the answer: the sentence with the markers that follow it on its line. */
  start: number;
  end: number;
  /** The sentence's text with its markers blanked out (what is matched against sources). */
  content: string;
  /** Source numbers the sentence's markers name, in order of appearance, without repeats. */
  markers: number[];
}

/** `[1]`, `[2, 3]`, `[2; 3]`: up to three digits each, so years and prices in brackets are not markers. */
const MARKER = /\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]/g;

/** A list bullet or heading marker at the start of a line (`- `, `* `, `• `, `1. `, `2) `, `## `). */
const BULLET = /^[ \t]*(?:[-*+\u2022\u2013]|\d{1,3}[.)]|#{1,6})[ \t]+/u;

const HAS_CONTENT = /[\p{L}\p{N}]/u;

/** Every source number the answer's markers name, including markers outside any sentence. */
export function markerNumbers(answer: string): Set<number> {
  const numbers = new Set<number>();
  for (const match of answer.matchAll(MARKER)) for (const n of match[1]!.split(/[,;]/)) numbers.add(Number(n.trim()));
  return numbers;
}

interface Marker {
  start: number;
  end: number;
  numbers: number[];
}

/**
 * The sentences of `answer`, in order. Markers are blanked (same length, so offsets stay
 * true) before segmenting, which keeps "one.[1] Two" from being cut inside the brackets;
 * each line is segmented on its own (model answers break lines between list items).
 * A marker between sentences belongs to the sentence before it (the first one when none
 * precedes) and extends that sentence's span when only spaces and punctuation separate them.
 */
export function answerSentences(answer: string): AnswerSentenceSpan[] {
  const markers: Marker[] = [];
  const masked = answer.replace(MARKER, (whole: string, list: string, offset: number) => {
    markers.push({ start: offset, end: offset + whole.length, numbers: list.split(/[,;]/).map((n) => Number(n.trim())) });
    return " ".repeat(whole.length);
  });
  const sentences: AnswerSentenceSpan[] = [];
  const lines = /[^\r\n]+/g;
  for (let line = lines.exec(masked); line !== null; line = lines.exec(masked)) {
    const bullet = BULLET.exec(line[0]);
    const from = line.index + (bullet ? bullet[0].length : 0);
    for (const span of sentenceSpans(masked.slice(from, line.index + line[0].length), from)) {
      const content = masked.slice(span.start, span.end);
      if (HAS_CONTENT.test(content)) sentences.push({ start: span.start, end: span.end, content, markers: [] });
    }
  }
  if (sentences.length === 0) return [];
  let at = 0;
  for (const marker of markers) {
    while (at + 1 < sentences.length && sentences[at + 1]!.start <= marker.start) at++;
    const sentence = sentences[at]!;
    for (const n of marker.numbers) if (!sentence.markers.includes(n)) sentence.markers.push(n);
    // "… fact.[1]" or "… fact. [1][2]": the span runs on over its trailing markers.
    if (marker.start >= sentence.end && /^[^\r\n\p{L}\p{N}]*$/u.test(masked.slice(sentence.end, marker.start))) sentence.end = marker.end;
  }
  return sentences;
}
