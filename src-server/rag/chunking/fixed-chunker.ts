/**
 * Fixed chunking: windows of about `targetTokens` over the document's words, ignoring
 * structure, each sharing about `overlapTokens` with the previous one. Windows start and
 * end on word boundaries; only a single word longer than a window is cut inside.
 */
import type { ParsedDocument } from "../ingest/types.js";
import { UnitCosts, type Unit } from "./block-units.js";
import { buildChunks } from "./chunk-builder.js";
import { createChunkContext, type ChunkContext } from "./chunk-context.js";
import { fitSpan } from "./fit-span.js";
import { wordSpans, type TextSpan } from "./text-span.js";
import type { ChunkDraft, ChunkerDeps, ChunkOptions } from "./types.js";

/** Overlap is capped at this fraction of the window. */
const MAX_OVERLAP_FRACTION = 0.5;

/**
 * Chunks `doc` into overlapping token windows. Each word is counted once and windows are
 * sized from running sums, so the tokenizer sees the text about twice in all (words,
 * then each finished chunk). The overlap is capped at half of `options.targetTokens`
 * (more would re-embed most of the text several times over).
 */
export function fixedChunker(doc: ParsedDocument, options: ChunkOptions, deps: ChunkerDeps): Promise<ChunkDraft[]> {
  return Promise.resolve().then(() => {
    const ctx = createChunkContext(doc, options, deps);
    return buildChunks(ctx, windowSpans(ctx));
  });
}

function windowSpans(ctx: ChunkContext): TextSpan[] {
  const words = documentWords(ctx);
  const costs = new UnitCosts(ctx, words);
  const { targetTokens } = ctx.options;
  const overlapTokens = Math.min(ctx.options.overlapTokens, Math.floor(targetTokens * MAX_OVERLAP_FRACTION));
  const overhead = ctx.meter.overhead;
  const spans: TextSpan[] = [];
  let start = 0;
  while (start < words.length) {
    let end = start;
    while (end + 1 < words.length && costs.cost(start, end + 1) <= targetTokens) end++;
    spans.push({ start: words[start]!.start, end: words[end]!.end });
    if (end === words.length - 1) break;
    // Next window: the earliest start after this one whose tail up to `end` fits in the overlap.
    let lo = start + 1;
    let hi = end + 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (costs.cost(mid, end) - overhead <= overlapTokens) hi = mid;
      else lo = mid + 1;
    }
    start = lo;
  }
  return spans;
}

/** Every word of every block, a word longer than a window cut into window-sized pieces. */
function documentWords(ctx: ChunkContext): Unit[] {
  const { outline, meter, options } = ctx;
  const words: Unit[] = [];
  outline.blocks.forEach((block, index) => {
    const heading = block.kind === "heading";
    for (const word of wordSpans(outline.text, block)) {
      const tokens = meter.piece(outline.text.slice(word.start, word.end));
      if (tokens + meter.overhead <= options.targetTokens) {
        words.push({ start: word.start, end: word.end, tokens, block: index, heading });
        continue;
      }
      for (const piece of fitSpan(outline.text, word, options.targetTokens, meter, "char")) {
        words.push({ start: piece.start, end: piece.end, tokens: Math.max(0, piece.tokens - meter.overhead), block: index, heading });
      }
    }
  });
  return words;
}
