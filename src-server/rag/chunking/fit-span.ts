/**
 * Splitting text that is too long for a token budget: at sentence boundaries first,
 * then at word boundaries, and only for a single "word" longer than the budget (a URL,
 * base64, a run of CJK text) at character boundaries. Every piece returned is counted
 * exactly, so callers can rely on `tokens <= budget`.
 */
import { sentenceSpans } from "./sentences.js";
import { codePointEnds, trimSpan, wordSpans, type MeasuredSpan, type TextSpan } from "./text-span.js";
import type { TokenMeter } from "./token-meter.js";

/** The coarsest boundary `fitSpan` may cut at. */
export type SplitLevel = "sentence" | "word" | "char";

/** Longest run of characters tried per token of budget when cutting inside a word. */
const MAX_CHARS_PER_TOKEN = 16;

/**
 * `span` (trimmed) as consecutive pieces of at most `budget` tokens each, counted
 * exactly with `meter`; one piece when it already fits. Pieces are packed greedily,
 * so all but the last are close to the budget.
 * @throws RangeError when a single character exceeds `budget` (a budget below the tokenizer's overhead).
 */
export function fitSpan(text: string, span: TextSpan, budget: number, meter: TokenMeter, level: SplitLevel = "sentence"): MeasuredSpan[] {
  const trimmed = trimSpan(text, span);
  if (trimmed.end <= trimmed.start) return [];
  const tokens = meter.exact(text.slice(trimmed.start, trimmed.end));
  if (tokens <= budget) return [{ ...trimmed, tokens }];
  if (level === "char") return splitChars(text, trimmed, budget, meter);
  const units = level === "sentence" ? sentenceSpans(text.slice(trimmed.start, trimmed.end), trimmed.start) : wordSpans(text, trimmed);
  const lower: SplitLevel = level === "sentence" ? "word" : "char";
  if (units.length <= 1) return fitSpan(text, trimmed, budget, meter, lower);
  return pack(text, units, budget, meter, lower);
}

/** Greedy packing of `units` by estimated tokens, each group then verified exactly and shrunk if needed. */
function pack(text: string, units: TextSpan[], budget: number, meter: TokenMeter, lower: SplitLevel): MeasuredSpan[] {
  const out: MeasuredSpan[] = [];
  const exact = (from: number, count: number): number => meter.exact(text.slice(units[from]!.start, units[from + count - 1]!.end));
  let i = 0;
  while (i < units.length) {
    let count = 1;
    let estimate = meter.overhead + meter.piece(text.slice(units[i]!.start, units[i]!.end));
    while (i + count < units.length) {
      const prev = units[i + count - 1]!;
      const next = units[i + count]!;
      const added = meter.separator(text.slice(prev.end, next.start)) + meter.piece(text.slice(next.start, next.end));
      if (estimate + added > budget) break;
      estimate += added;
      count++;
    }
    let tokens = exact(i, count);
    if (tokens > budget) {
      // The estimate was optimistic: find the longest prefix of the group that fits.
      let good = 0;
      let bad = count;
      while (bad - good > 1) {
        const mid = (good + bad) >> 1;
        const n = exact(i, mid);
        if (n <= budget) [good, tokens] = [mid, n];
        else bad = mid;
      }
      count = good;
    }
    if (count === 0) {
      for (const piece of fitSpan(text, units[i]!, budget, meter, lower)) out.push(piece);
      i++;
      continue;
    }
    out.push({ start: units[i]!.start, end: units[i + count - 1]!.end, tokens });
    i += count;
  }
  return out;
}

/** Longest prefixes (by code points) that fit, found by binary search on exact counts. */
function splitChars(text: string, span: TextSpan, budget: number, meter: TokenMeter): MeasuredSpan[] {
  const ends = codePointEnds(text, span);
  const out: MeasuredSpan[] = [];
  let from = 0;
  let start = span.start;
  while (from < ends.length) {
    let good = from;
    let goodTokens = 0;
    let bad = Math.min(ends.length, from + budget * MAX_CHARS_PER_TOKEN) + 1;
    while (bad - good > 1) {
      const mid = (good + bad) >> 1;
      const n = meter.exact(text.slice(start, ends[mid - 1]));
      if (n <= budget) [good, goodTokens] = [mid, n];
      else bad = mid;
    }
    if (good === from) throw new RangeError(`maxTokens ${budget} is too small: one character takes more tokens`);
    const end = ends[good - 1]!;
    const piece = trimSpan(text, { start, end });
    if (piece.end > piece.start) out.push({ ...piece, tokens: piece.start === start && piece.end === end ? goodTokens : meter.exact(text.slice(piece.start, piece.end)) });
    from = good;
    start = end;
  }
  return out;
}
