/**
 * A light affix stemmer for Bahasa Melayu (and Indonesian, whose morphology it shares),
 * after Tala's rule-based light stemmer for Indonesian (2003): no dictionary, only the
 * inflectional and derivational affixes, removed in a fixed order while the word keeps
 * more than two syllables.
 *
 * 1. particles: -kah, -lah, -tah, -pun;
 * 2. possessive pronouns: -ku, -mu, -nya;
 * 3. a first-order prefix (meN-, peN-, di-, ter-, ke-): then a suffix (-kan, -an, -i), and
 *    after a suffix a second-order prefix (ber-, per-, pe-) as in `diperbesarkan`;
 * 4. otherwise a second-order prefix, then a suffix.
 *
 * Nasal prefixes assimilate and drop the root's first consonant; only `meny-`/`peny-`
 * before a vowel are restored to `s-` (`menyapu` → `sapu`), as in Tala's stemmer: the other
 * restorations are ambiguous without a dictionary (`memakan` is `makan`, `memukul` is
 * `pukul`). Confixes that Malay does not form are not stripped (`di-…-an`, `ke-…-i`,
 * `ber-…-i`, `meN-…-an`, `ter-…-an`, `peN-…-kan`, `ke-…-kan`).
 *
 * Being light it conflates most inflections of a root (`banjir`, `kebanjiran`,
 * `dibanjiri`) and errs in both directions on some words; what matters for search is that
 * documents and questions are stemmed alike.
 */

type Prefix = "meN" | "peN" | "di" | "ter" | "ke" | "ber" | "pe" | null;

const VOWEL = /[aeiou]/;

function syllables(word: string): number {
  let n = 0;
  for (const c of word) if (VOWEL.test(c)) n++;
  return n;
}

/** Strips the first suffix of `suffixes` that `word` ends with, if the word has more than two syllables. */
function stripSuffix(word: string, suffixes: readonly string[]): string {
  if (syllables(word) <= 2) return word;
  for (const suffix of suffixes) if (word.length > suffix.length + 2 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  return word;
}

function firstOrderPrefix(word: string): [string, Prefix] {
  const rest = (n: number) => word.slice(n);
  if (word.startsWith("meny") && VOWEL.test(word[4] ?? "")) return [`s${rest(4)}`, "meN"];
  if (word.startsWith("peny") && VOWEL.test(word[4] ?? "")) return [`s${rest(4)}`, "peN"];
  for (const [prefix, kind] of [
    ["meng", "meN"],
    ["men", "meN"],
    ["mem", "meN"],
    ["me", "meN"],
    ["peng", "peN"],
    ["pen", "peN"],
    ["pem", "peN"],
    ["di", "di"],
    ["ter", "ter"],
    ["ke", "ke"],
  ] as const) {
    if (word.startsWith(prefix) && word.length > prefix.length + 2) return [rest(prefix.length), kind];
  }
  return [word, null];
}

function secondOrderPrefix(word: string): [string, Prefix] {
  if (word.startsWith("ber") && word.length > 5) return [word.slice(3), "ber"];
  if (word.startsWith("bel") && word.slice(3).startsWith("ajar")) return [word.slice(3), "ber"];
  if (word.startsWith("be") && /^[^aeiou]er/.test(word.slice(2))) return [word.slice(2), "ber"]; // bekerja → kerja
  if (word.startsWith("per") && word.length > 5) return [word.slice(3), "pe"];
  if (word.startsWith("pel") && word.slice(3).startsWith("ajar")) return [word.slice(3), "pe"];
  if (word.startsWith("pe") && word.length > 4) return [word.slice(2), "pe"];
  return [word, null];
}

/** The derivational suffix, unless Malay does not combine it with the prefix already removed. */
function derivationalSuffix(word: string, prefix: Prefix): string {
  if (syllables(word) <= 2) return word;
  if (word.endsWith("kan") && word.length > 5 && prefix !== "ke" && prefix !== "peN" && prefix !== "pe") return word.slice(0, -3);
  if (word.endsWith("an") && word.length > 4 && prefix !== "di" && prefix !== "meN" && prefix !== "ter") return word.slice(0, -2);
  if (word.endsWith("i") && !word.endsWith("si") && word.length > 3 && prefix !== "ber" && prefix !== "ke" && prefix !== "peN") return word.slice(0, -1);
  return word;
}

/** The stem of one lower-case word. */
export function malayStem(word: string): string {
  if (syllables(word) <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = stripSuffix(word, ["kah", "lah", "tah", "pun"]);
  w = stripSuffix(w, ["nya", "ku", "mu"]);
  if (syllables(w) <= 2) return w;
  const [afterFirst, first] = firstOrderPrefix(w);
  if (first !== null && syllables(afterFirst) >= 2) {
    const afterSuffix = derivationalSuffix(afterFirst, first);
    if (afterSuffix !== afterFirst && syllables(afterSuffix) > 2) {
      const [afterSecond] = secondOrderPrefix(afterSuffix);
      return syllables(afterSecond) >= 2 ? afterSecond : afterSuffix;
    }
    return afterSuffix;
  }
  const [afterSecond, second] = secondOrderPrefix(w);
  if (second !== null && syllables(afterSecond) >= 2) return derivationalSuffix(afterSecond, second);
  return derivationalSuffix(w, null);
}
