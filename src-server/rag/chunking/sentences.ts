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
 * the dot. English and Malay titles, company forms, addresses and reference words.
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

/** The last word before a final full stop, e.g. "Bhd" in "ABC Sdn. Bhd." or "e.g" in "see e.g.". */
const LAST_WORD = /(?:^|[\s("'[“‘])([\p{L}][\p{L}.]*)\.$/u;

/** An initial such as "A." in "A. Samad Said" or "J." in "J. R. R. Tolkien". */
const INITIAL = /(?:^|\s)\p{Lu}\.$/u;

/**
 * Sentence spans of `text`, each trimmed of surrounding whitespace, in order, as offsets
 * into `text` plus `offset` (pass a block's start to get document offsets).
 * Segments are merged into the following one when they are very short or end with a
 * known abbreviation or an initial, unless a line break separates them (list items,
 * headings and table rows stay apart).
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

/** Whether the sentence so far (`span`, possibly several glued segments) continues into `next`. */
function gluesToNext(text: string, span: TextSpan, next: TextSpan): boolean {
  if (/[\r\n\u2029]/u.test(text.slice(span.end, next.start))) return false;
  const sentence = text.slice(span.start, span.end);
  if (sentence.length < MIN_SENTENCE_CHARS) return true;
  if (INITIAL.test(sentence)) return true;
  const word = LAST_WORD.exec(sentence)?.[1];
  return word !== undefined && ABBREVIATIONS.has(word.toLowerCase());
}
