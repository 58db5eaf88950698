/**
 * Whether a PDF page's text layer can be trusted, or the page should be read by OCR (issue
 * 34): decided per page, from the text the PDF gives. A scan has none, or a few stray
 * characters (a stamp, a page number); a PDF made with a broken font encoding gives text
 * that is not words at all — private-use or control characters, replacement characters, or
 * runs of Latin letters without vowels. English and Malay prose is mostly words of 2–12
 * letters with vowels, so a page whose words mostly are not is garbage.
 */

export type TextLayerVerdict =
  /** Text that reads as words: index it as it is. */
  | "usable"
  /** No text at all: a scanned page. */
  | "none"
  /** A few characters only (a page number, a stamp) on a page that holds more: OCR it. */
  | "too_little"
  /** Characters that are not words (a broken font encoding): OCR it. */
  | "garbage";

export interface TextLayerReport {
  verdict: TextLayerVerdict;
  /** Letters and digits on the page (a Chinese character counted as three). */
  characters: number;
  /** Share of its word-like tokens that look like words (0–1). */
  wordShare: number;
  /** Share of its characters that are private-use, control or replacement characters (0–1). */
  junkShare: number;
}

/** Below this many letters and digits a page has too little text to be the page. */
export const MIN_PAGE_CHARACTERS = 40;

// Private use, replacement, and control characters (other than tab and line breaks): what a broken encoding leaves.
const JUNK = /[\p{Co}\uFFFD]|(?![\t\n\r])\p{Cc}/gu;
const TOKEN = /[\p{L}\p{N}]+/gu;
const LATIN = /^[A-Za-zÀ-ɏ]+$/;
const VOWEL = /[aeiouyAEIOUYÀ-ÖØ-öø-ɏ]/;

/** Whether a token reads as a word of a language written in Latin letters (or as a number). */
function wordLike(token: string): boolean {
  if (/^\d+([.,]\d+)*$/.test(token)) return true;
  if (!LATIN.test(token)) return /\p{L}/u.test(token); // other scripts (Jawi, Chinese, Tamil): trusted
  if (token.length > 20) return false;
  if (token.length <= 3) return true;
  return VOWEL.test(token) && !/(.)\1\1/.test(token.toLowerCase());
}

export function judgeTextLayer(text: string): TextLayerReport {
  const junk = (text.match(JUNK) ?? []).length;
  const tokens = text.match(TOKEN) ?? [];
  // A Chinese character says about what three Latin letters do.
  const characters = tokens.reduce((n, t) => n + t.length + 2 * (t.match(/\p{Script=Han}/gu)?.length ?? 0), 0);
  const visible = text.replace(/\s+/g, "").length;
  const junkShare = visible === 0 ? 0 : junk / visible;
  const words = tokens.filter((t) => t.length >= 2);
  const wordShare = words.length === 0 ? 0 : words.filter(wordLike).length / words.length;
  let verdict: TextLayerVerdict;
  if (characters === 0 && junk === 0) verdict = "none";
  else if (junkShare > 0.2 || (words.length >= 5 && wordShare < 0.6)) verdict = "garbage";
  else if (characters < MIN_PAGE_CHARACTERS) verdict = "too_little";
  else verdict = "usable";
  return { verdict, characters, wordShare, junkShare };
}
