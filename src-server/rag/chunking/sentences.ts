/**
 * Sentence boundaries for English and Bahasa Melayu. `Intl.Segmenter` does the work
 * (ICU's sentence rules, language-neutral); on top of it we undo the breaks it makes
 * after abbreviations ("Dr. Ahmad", "Syarikat ABC Sdn. Bhd.", "No. 5, Jln. Ampang"),
 * which ICU without locale suppressions treats as sentence ends.
 */
import { trimSpan, type TextSpan } from "./text-span.js";

const segmenter = new Intl.Segmenter(undefined, { granularity: "sentence" });

/** A sentence shorter than this (trimmed, in characters) is glued to the next one: "Ya.", "1.", "Hj.". */
const MIN_SENTENCE_CHARS = 4;

/**
 * Abbreviations that end in a full stop without ending the sentence, lower-case, without
 * the dot. English and Malay titles, company forms, addresses and reference words. A single
 * capital letter ("A." in "A. Samad Said") counts as an initial and is handled the same way.
 * Words that often end a sentence ("etc", "dll", "dsb") are deliberately absent.
 */
const ABBREVIATIONS: ReadonlySet<string> = new Set([
  // English titles and references
  "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "rev", "hon", "gen", "col", "lt", "capt", "sgt",
  "no", "nos", "vs", "fig", "figs", "vol", "vols", "p", "pp", "ch", "sec", "para", "ref", "approx", "dept",
  "inc", "ltd", "co", "corp", "plc", "ave", "rd", "tel", "fax", "jan", "feb", "mar", "apr", "jun", "jul",
  "aug", "sep", "sept", "oct", "nov", "dec", "e.g", "i.e", "cf", "al",
  // Malay titles, company forms, addresses and references
  "sdn", "bhd", "jln", "lrg", "tmn", "kg", "bt", "bil", "hj", "hjh", "dato", "datin", "dsp", "tn", "pn",
  "en", "cik", "yb", "ybhg", "yab", "ir", "ts", "sek", "tkt", "lwn", "faks", "sk", "smk",
]);

/** Characters of an abbreviation, dots included ("e.g", "i.e"). */
const WORD_CHAR = /[\p{L}.]/u;

/** What may precede an abbreviation. */
const OPENER = /[\s("'[\u201c\u2018]/u;

/** Punctuation that ends a sentence, possibly followed by closing quotes or brackets. */
const TERMINAL = /[.!?\u2026\u3002\uff01\uff1f]["'\u2019\u201d)\]]*$/u;

/** Line and paragraph separators (a blank line counts two). */
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/gu;

/**
 * Sentence spans of `text`, each trimmed of surrounding whitespace, in order, as offsets
 * into `text` plus `offset` (pass a block's start to get document offsets).
 * Segments are merged into the following one when they end with a known abbreviation or
 * an initial, when they are very short, or when only a single line break follows a
 * segment without closing punctuation (a wrapped line). A blank line always ends a sentence.
 */
export function sentenceSpans(text: string, offset = 0): TextSpan[] {
  const raw: TextSpan[] = [];
  for (const segment of segmenter.segment(text)) {
    const span = trimSpan(text, { start: segment.index, end: segment.index + segment.segment.length });
    if (span.end > span.start) raw.push(span);
  }
  const out: TextSpan[] = [];
  let pendingStart: number | null = null;
  for (let i = 0; i < raw.length; i++) {
    const span = raw[i]!;
    const next = raw[i + 1];
    const start: number = pendingStart ?? span.start;
    if (next !== undefined && gluesToNext(text, { start, end: span.end }, next)) {
      pendingStart = start;
      continue;
    }
    pendingStart = null;
    out.push({ start: start + offset, end: span.end + offset });
  }
  return out;
}

/**
 * Whether the sentence so far (`span`, possibly several glued segments) continues into
 * `next`. Only the end of the sentence is looked at, so long glued runs stay linear.
 */
function gluesToNext(text: string, span: TextSpan, next: TextSpan): boolean {
  const breaks = text.slice(span.end, next.start).match(LINE_BREAK)?.length ?? 0;
  if (breaks > 1) return false;
  const word = wordBeforeFullStop(text, span);
  const abbreviated = word !== null && (ABBREVIATIONS.has(word.toLowerCase()) || /^\p{Lu}$/u.test(word));
  // ICU ends a sentence at every line break; inside a block a single one is usually a wrapped line.
  if (breaks === 1) return abbreviated || !TERMINAL.test(text.slice(Math.max(span.start, span.end - 8), span.end));
  return abbreviated || span.end - span.start < MIN_SENTENCE_CHARS;
}

/**
 * The word right before the full stop that ends `span` ("Bhd" in "ABC Sdn. Bhd.", "e.g" in
 * "see e.g."), if it starts the span or follows a space or an opening bracket or quote.
 */
function wordBeforeFullStop(text: string, span: TextSpan): string | null {
  if (text.charAt(span.end - 1) !== ".") return null;
  let i = span.end - 1;
  while (i > span.start && WORD_CHAR.test(text.charAt(i - 1))) i--;
  if (i === span.end - 1 || !/\p{L}/u.test(text.charAt(i))) return null;
  if (i > span.start && !OPENER.test(text.charAt(i - 1))) return null;
  return text.slice(i, span.end - 1);
}
