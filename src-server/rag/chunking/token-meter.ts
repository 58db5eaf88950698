/**
 * Token counting for chunkers. The tokenizer is synchronous but not free, so chunkers
 * count small pieces once (words, sentences, separators) and add the counts up; only
 * a finished chunk is counted exactly. Sums of piece counts are estimates: the
 * tokenizer's per-call overhead (BOS/EOS or CLS/SEP tokens) is measured once and
 * subtracted from each piece, and merges across piece boundaries are ignored.
 */

/** Pieces up to this many characters are memoised (words, separators, most sentences). */
const MEMO_MAX_CHARS = 256;
/** The memo is dropped when it reaches this many entries, bounding memory on huge documents. */
const MEMO_MAX_ENTRIES = 50_000;

/** Counts tokens exactly for chunks and approximately, with memoisation, for the pieces they are built from. */
export class TokenMeter {
  /** Tokens the tokenizer adds to every call, whatever the text (counted on the empty string). */
  readonly overhead: number;
  private readonly memo = new Map<string, number>();

  constructor(private readonly countTokens: (text: string) => number) {
    this.overhead = Math.max(0, safeCount(countTokens, ""));
  }

  /** Exact token count of `text` as one model input, overhead included. */
  exact(text: string): number {
    return this.countTokens(text);
  }

  /** Tokens `text` adds to a chunk it is part of: its count less the per-call overhead (never negative). */
  piece(text: string): number {
    if (text.length === 0) return 0;
    if (text.length > MEMO_MAX_CHARS) return Math.max(0, this.countTokens(text) - this.overhead);
    const known = this.memo.get(text);
    if (known !== undefined) return known;
    if (this.memo.size >= MEMO_MAX_ENTRIES) this.memo.clear();
    const tokens = Math.max(0, this.countTokens(text) - this.overhead);
    this.memo.set(text, tokens);
    return tokens;
  }

  /** Tokens contributed by whitespace between two pieces ("\n\n" between blocks may cost a token; a space rarely does). */
  separator(text: string): number {
    return /^ ?$/u.test(text) ? 0 : this.piece(text);
  }
}

function safeCount(countTokens: (text: string) => number, text: string): number {
  try {
    const n = countTokens(text);
    return Number.isFinite(n) ? n : 0;
  } catch {
    // Some tokenizers reject empty input; then there is no measurable overhead.
    return 0;
  }
}
