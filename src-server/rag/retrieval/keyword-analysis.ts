/**
 * Keyword analysis for BM25: the same steps for indexed chunks and for questions, so a
 * word matches its inflections in either language.
 *
 * - Tokens: runs of letters and digits, lower-cased, accents folded (`naïve` → `naive`),
 *   English possessives dropped (`Malaysia's` → `malaysia`).
 * - Stop words: function words of English and Bahasa Melayu are not indexed and not asked
 *   for; they match nearly every chunk and would reward `the`, `yang` and `berapa`.
 * - Stems: each chunk's language is detected from its function words, and its words are
 *   stemmed as that language's (Porter for English, `malayStem` for Malay). A question is
 *   often too short to tell, so it asks for both stems of each word unless its language is
 *   clear.
 */
import { stemmer as porterStem } from "stemmer";
import { malayStem } from "./malay-stemmer.js";

export type KeywordLanguage = "en" | "ms";

/**
 * Chunks' analysed terms are stored (sealed) with them; raise this whenever `analyzeChunk`'s
 * output changes, and stored analyses are redone from the text when a corpus next opens.
 */
export const KEYWORD_ANALYSIS_VERSION = 1;

/** Function words that mark English text (and are never worth matching). */
const ENGLISH_FUNCTION_WORDS = new Set(
  (
    "a an the and or but if of to in on at by for with from as is are was were be been being am do does did done " +
    "have has had having this that these those it its there their they them we our you your he she his her i me my " +
    "what which who whom whose when where why how much many whether not no yes can could should would will shall may might must " +
    "about into over under after before between during than then so such also any all each every some more most other same only " +
    "according please tell give list describe explain say says said"
  ).split(/\s+/),
);

/** Function words that mark Bahasa Melayu text (and are never worth matching). */
const MALAY_FUNCTION_WORDS = new Set(
  (
    "yang dan atau tetapi jika kalau untuk kepada pada di ke dari daripada dengan oleh bagi dalam atas bawah antara " +
    "ini itu tersebut adalah ialah merupakan ada tiada tidak bukan ya juga lagi sudah telah akan sedang masih boleh dapat " +
    "apa apakah siapa siapakah bila bilakah bagaimana bagaimanakah mengapa kenapa berapa berapakah mana manakah adakah " +
    "sebanyak ramai se sebuah seorang sesuatu semua setiap beberapa lebih paling hanya sahaja pun lah kah " +
    "nya mereka kami kita anda saya dia beliau ia nyatakan sebutkan terangkan jelaskan senaraikan menurut berdasarkan " +
    "iaitu serta manakala namun kerana sehingga hingga selepas sebelum sebagai"
  ).split(/\s+/),
);

const STOP_WORDS = new Set([...ENGLISH_FUNCTION_WORDS, ...MALAY_FUNCTION_WORDS]);

/** Whether a lower-cased, accent-folded token is an English or Malay function word (never worth matching). */
export function isStopWord(token: string): boolean {
  return STOP_WORDS.has(token);
}

/** Lower-cased, accent-folded tokens of `text`, in order (stop words included). */
export function tokenize(text: string): string[] {
  const folded = text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/['’]s\b/g, "");
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The language of a text from its function words: Malay when it has more Malay than English
 * ones; English otherwise, and when it has none (names, codes, numbers stem the same in both).
 */
export function detectLanguage(tokens: readonly string[]): KeywordLanguage {
  let english = 0;
  let malay = 0;
  for (const token of tokens) {
    if (ENGLISH_FUNCTION_WORDS.has(token)) english++;
    if (MALAY_FUNCTION_WORDS.has(token)) malay++;
  }
  return malay > english ? "ms" : "en";
}

/** Stems are cached: a corpus has tens of thousands of distinct words, seen millions of times. */
const stemCache: Record<KeywordLanguage, Map<string, string>> = { en: new Map(), ms: new Map() };
const STEM_CACHE_LIMIT = 200_000;

export function stem(word: string, language: KeywordLanguage): string {
  const cache = stemCache[language];
  let stemmed = cache.get(word);
  if (stemmed === undefined) {
    // Porter is for letters; numbers and codes (`2024`, `q2`, `pps`) stay as they are.
    stemmed = !/^\p{L}+$/u.test(word) ? word : language === "en" ? porterStem(word) : malayStem(word);
    if (cache.size >= STEM_CACHE_LIMIT) cache.clear();
    cache.set(word, stemmed);
  }
  return stemmed;
}

/** A chunk's terms for the full-text index: its content words stemmed in its language, space-separated. */
export function analyzeChunk(text: string): { terms: string; language: KeywordLanguage } {
  const tokens = tokenize(text);
  const language = detectLanguage(tokens);
  const terms: string[] = [];
  for (const token of tokens) if (!STOP_WORDS.has(token)) terms.push(stem(token, language));
  return { terms: terms.join(" "), language };
}

/**
 * A question's distinct search terms: the stems of its content words, in the question's
 * language when its function words say which, else in both. Empty when only function
 * words remain (then there is nothing to match on).
 */
export function analyzeQuery(question: string): string[] {
  return analyzeQueryWithLanguage(question).terms;
}

/**
 * `analyzeQuery`, with the question's language when its function words tell (null: unclear),
 * and its content words each as the set of stems it was searched as (one per language
 * tried), so a word counts once however many forms it was searched in.
 */
export function analyzeQueryWithLanguage(question: string): { terms: string[]; language: KeywordLanguage | null; words: string[][] } {
  const tokens = tokenize(question);
  let english = 0;
  let malay = 0;
  for (const token of tokens) {
    if (ENGLISH_FUNCTION_WORDS.has(token)) english++;
    if (MALAY_FUNCTION_WORDS.has(token)) malay++;
  }
  const languages: KeywordLanguage[] = english > 0 && malay === 0 ? ["en"] : malay > 0 && english === 0 ? ["ms"] : ["en", "ms"];
  const terms = new Set<string>();
  const words = new Map<string, string[]>();
  for (const token of tokens) {
    if (STOP_WORDS.has(token) || words.has(token)) continue;
    const stems = [...new Set(languages.map((language) => stem(token, language)))];
    words.set(token, stems);
    for (const s of stems) terms.add(s);
  }
  return { terms: [...terms], language: languages.length === 1 ? languages[0]! : null, words: [...words.values()] };
}
