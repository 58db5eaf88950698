/**
 * How hard a bundle's passphrase is to guess, roughly, for the hint beside the field. The
 * server only insists on 12 characters (age's scrypt makes each guess slow, not impossible),
 * so this is advice: it counts the kinds of characters used and marks down what guessers try
 * first (repeats, runs, common words).
 */

/** The shortest passphrase the server accepts for a bundle. */
export const MIN_PASSPHRASE_LENGTH = 12;

export type PassphraseStrength = "short" | "weak" | "fair" | "strong";

/** Words and runs that a guesser tries first, in English and Malay. */
const COMMON = ["password", "katalaluan", "kata laluan", "pustaka", "qwerty", "asdf", "letmein", "welcome", "admin", "rahsia", "sayang", "123456", "abcdef", "iloveyou"];

/** An estimate in bits of what a guesser must try, and its band. */
export function passphraseStrength(passphrase: string): { strength: PassphraseStrength; bits: number } {
  const chars = [...passphrase];
  if (chars.length < MIN_PASSPHRASE_LENGTH) return { strength: "short", bits: 0 };
  let pool = 0;
  if (/[a-z]/.test(passphrase)) pool += 26;
  if (/[A-Z]/.test(passphrase)) pool += 26;
  if (/[0-9]/.test(passphrase)) pool += 10;
  if (/[^a-zA-Z0-9]/.test(passphrase)) pool += 33;
  // A common word is one guess among a few thousand (about 12 bits), not its letters' worth.
  let rest = passphrase.toLowerCase();
  let words = 0;
  for (const word of COMMON) {
    while (rest.includes(word)) {
      rest = rest.replace(word, "\n");
      words++;
    }
  }
  // (A passphrase typed into a one-line field holds no line break: it marks where a word was.)
  const restChars = [...rest].filter((c) => c !== "\n");
  // Each remaining character counts for what the pool gives, but a string of few distinct
  // characters ("aaaa…", "abab…") is only as good as those.
  const distinct = new Set(restChars).size;
  const effective = Math.min(restChars.length, distinct * 2);
  let bits = effective * Math.log2(Math.max(pool, 2)) + words * 12;
  bits -= runLength(restChars.join("")) * 3;
  bits = Math.max(0, Math.round(bits));
  return { strength: bits < 50 ? "weak" : bits < 75 ? "fair" : "strong", bits };
}

/** Characters that continue a run ("abcd", "4321") or repeat the one before. */
function runLength(s: string): number {
  let n = 0;
  for (let i = 1; i < s.length; i++) {
    const step = s.charCodeAt(i) - s.charCodeAt(i - 1);
    if (step === 0 || step === 1 || step === -1) n++;
  }
  return n;
}
