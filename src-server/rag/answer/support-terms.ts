/**
 * The terms attribution matches between an answer sentence and source sentences, with the
 * keyword index's analysis (`keyword-analysis.ts`): accent-folded words, English and Malay
 * function words dropped, Porter or Malay stems; plus whole numbers ("41,870", "26.8",
 * "RM2.4"), which count most, and names (capitalised inside a sentence, acronyms).
 */
import { detectLanguage, isStopWord, stem, tokenize, type KeywordLanguage } from "../retrieval/keyword-analysis.js";

/** `number`: a figure with two or more digits ("31", "26.8", "41,870"); a lone digit ("1", "7") is `digit` and weighs as a word (list numbering, "Item 1"). */
export type TermKind = "number" | "digit" | "name" | "word";

/** A term of an answer sentence: the keys any of which a source sentence may hold. */
export interface AnswerTerm {
  keys: string[];
  kind: TermKind;
}

/** Numbers with their thousands separators and decimals ("1,200", "26.8", "2.28"). */
const NUMBER = /\d+(?:[.,]\d+)*/g;

/** Words that refer to the sources rather than state a fact ("according to source 2"). */
const SOURCE_WORDS = new Set(["source", "sources", "sumber", "passage", "petikan", "document", "dokumen", "corpus", "korpus"]);

/** At most this many distinct terms of one sentence are matched (hostile answers). */
const MAX_TERMS = 400;

/** "41,870" → "41870", "26,8" → "26.8" (a comma that is no thousands separator is a decimal one). */
function normaliseNumber(raw: string): string {
  return `#${/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(raw) ? raw.replace(/,/g, "") : raw.replace(/,/g, ".")}`;
}

/** Accent-folded, possessive-free words of `text` in their original case. */
function words(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .replace(/['\u2019]s\b/giu, "")
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * The distinct terms of an answer sentence. A word's keys are itself and its English and
 * Malay stems (an answer may be in either language whatever its sources' language).
 */
export function answerTerms(sentence: string): AnswerTerm[] {
  const seen = new Set<string>();
  const terms: AnswerTerm[] = [];
  const add = (term: AnswerTerm) => {
    if (terms.length >= MAX_TERMS || seen.has(term.keys[0]!)) return;
    seen.add(term.keys[0]!);
    terms.push(term);
  };
  for (const raw of sentence.match(NUMBER) ?? []) add({ keys: [normaliseNumber(raw)], kind: raw.length > 1 ? "number" : "digit" });
  const tokens = words(sentence.replace(NUMBER, " "));
  tokens.forEach((token, i) => {
    const lower = token.toLowerCase();
    if (lower.length < 2 || isStopWord(lower) || SOURCE_WORDS.has(lower)) return;
    const name = /^\p{Lu}{2,}$/u.test(token) || (i > 0 && /^\p{Lu}/u.test(token));
    add({ keys: [...new Set([lower, stem(lower, "en"), stem(lower, "ms")])], kind: name ? "name" : "word" });
  });
  return terms;
}

/** The language a source's words are stemmed in (its own, from its function words). */
export function sourceLanguage(text: string): KeywordLanguage {
  return detectLanguage(tokenize(text));
}

/** Every key a source sentence holds: its numbers, its words and their stems in `language`. */
export function sourceKeys(sentence: string, language: KeywordLanguage): Set<string> {
  const keys = new Set<string>();
  for (const raw of sentence.match(NUMBER) ?? []) keys.add(normaliseNumber(raw));
  for (const token of words(sentence.replace(NUMBER, " "))) {
    const lower = token.toLowerCase();
    if (lower.length < 2 || isStopWord(lower)) continue;
    keys.add(lower);
    keys.add(stem(lower, language));
  }
  return keys;
}
