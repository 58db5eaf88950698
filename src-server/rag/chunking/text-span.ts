/** Character ranges into a document's text, and the small helpers that cut text into them. */

/** A half-open character range `[start, end)` into some text (offsets in UTF-16 code units). */
export interface TextSpan {
  start: number;
  end: number;
}

/** A span with its token count (exact or estimated, as the producer documents). */
export interface MeasuredSpan extends TextSpan {
  tokens: number;
}

const WHITESPACE = /\s/u;

/** `span` shrunk to exclude leading and trailing whitespace; `start === end` when it held only whitespace. */
export function trimSpan(text: string, span: TextSpan): TextSpan {
  let { start, end } = span;
  while (start < end && WHITESPACE.test(text.charAt(start))) start++;
  while (end > start && WHITESPACE.test(text.charAt(end - 1))) end--;
  return { start, end };
}

/** Whitespace-separated words of `text.slice(span.start, span.end)`, as spans into `text`. */
export function wordSpans(text: string, span: TextSpan): TextSpan[] {
  return matchSpans(text, span, /\S+/gu);
}

/** Non-blank lines of `text.slice(span.start, span.end)`, trimmed, as spans into `text`. */
export function lineSpans(text: string, span: TextSpan): TextSpan[] {
  const out: TextSpan[] = [];
  for (const line of matchSpans(text, span, /[^\r\n]+/gu)) {
    const trimmed = trimSpan(text, line);
    if (trimmed.end > trimmed.start) out.push(trimmed);
  }
  return out;
}

/**
 * Code-point boundaries inside `span` (excluding `span.start`, including `span.end`),
 * so character-level splitting never cuts a surrogate pair in half.
 */
export function codePointEnds(text: string, span: TextSpan): number[] {
  const ends: number[] = [];
  let i = span.start;
  while (i < span.end) {
    const code = text.codePointAt(i) ?? 0;
    i = Math.min(span.end, i + (code > 0xffff ? 2 : 1));
    ends.push(i);
  }
  return ends;
}

function matchSpans(text: string, span: TextSpan, pattern: RegExp): TextSpan[] {
  const slice = text.slice(span.start, span.end);
  const out: TextSpan[] = [];
  for (const match of slice.matchAll(pattern)) {
    const start = span.start + match.index;
    out.push({ start, end: start + match[0].length });
  }
  return out;
}
