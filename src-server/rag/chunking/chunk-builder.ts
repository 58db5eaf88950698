/** Turns the spans a chunker chose into `ChunkDraft`s, enforcing the hard token limit on the way. */
import type { ChunkContext } from "./chunk-context.js";
import { fitSpan } from "./fit-span.js";
import { trimSpan, type TextSpan } from "./text-span.js";
import type { ChunkDraft } from "./types.js";

/**
 * Chunks for `spans` (in document order): each span trimmed, empty ones dropped, its text
 * sliced from the document, counted exactly, and given its heading path and page range.
 * A span whose exact count exceeds `maxTokens` (the chunker's estimate was short) is split
 * at sentence boundaries, then words, so no chunk ever exceeds the limit.
 */
export function buildChunks(ctx: ChunkContext, spans: readonly TextSpan[]): ChunkDraft[] {
  const { outline, meter, options } = ctx;
  const text = outline.text;
  const chunks: ChunkDraft[] = [];
  for (const raw of spans) {
    const span = trimSpan(text, raw);
    if (span.end <= span.start) continue;
    const tokens = meter.exact(text.slice(span.start, span.end));
    const pieces = tokens <= options.maxTokens ? [{ ...span, tokens }] : fitSpan(text, span, options.maxTokens, meter);
    for (const piece of pieces) {
      const { pageStart, pageEnd } = outline.pages(piece.start, piece.end);
      chunks.push({
        index: chunks.length,
        text: text.slice(piece.start, piece.end),
        start: piece.start,
        end: piece.end,
        pageStart,
        pageEnd,
        pageBreaks: outline.pageBreaks(piece.start, piece.end),
        headingPath: outline.headingPath(piece.start, piece.end),
        tokenCount: piece.tokens,
      });
    }
  }
  return chunks;
}
