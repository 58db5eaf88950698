/**
 * Paragraph chunking: whole blocks merged in order up to `targetTokens`. A heading starts
 * a new chunk and stays with what follows it; so does a short line that opens a chunk (a
 * title in plain text, a label, a caption), which alone would make a passage no search can
 * use and leave its block without it. A block too long for `maxTokens` is cut into
 * sentences (lines for lists, tables and code), and a sentence too long for `maxTokens`
 * into word runs; otherwise nothing is ever split.
 */
import type { ParsedDocument } from "../ingest/types.js";
import { blockUnits, UnitCosts, type Unit } from "./block-units.js";
import { buildChunks } from "./chunk-builder.js";
import { createChunkContext, type ChunkContext } from "./chunk-context.js";
import type { TextSpan } from "./text-span.js";
import type { ChunkDraft, ChunkerDeps, ChunkOptions } from "./types.js";

/**
 * Chunks `doc` by paragraphs. Blocks are merged while the chunk stays within
 * `options.targetTokens`; a heading and the block after it may together go up to
 * `options.maxTokens`; no chunk exceeds `options.maxTokens`.
 */
export function paragraphChunker(doc: ParsedDocument, options: ChunkOptions, deps: ChunkerDeps): Promise<ChunkDraft[]> {
  return Promise.resolve().then(() => {
    const ctx = createChunkContext(doc, options, deps);
    return buildChunks(ctx, paragraphSpans(ctx));
  });
}

/** An opening run of at most targetTokens / 6 tokens (33 of the default 200) stays with the next block. */
const SHORT_OPENING_SHARE = 6;

function paragraphSpans(ctx: ChunkContext): TextSpan[] {
  const units: Unit[] = ctx.outline.blocks.flatMap((_, i) => blockUnits(ctx, i));
  const costs = new UnitCosts(ctx, units);
  const { targetTokens, maxTokens } = ctx.options;
  const spans: TextSpan[] = [];
  let start = 0;
  let onlyHeadings = units[0]?.heading ?? false;
  const cut = (at: number): void => {
    spans.push({ start: units[start]!.start, end: units[at - 1]!.end });
    start = at;
    onlyHeadings = units[at]!.heading;
  };
  // A run this short at a chunk's start (a title line) may take the next block up to maxTokens, as a heading does.
  const short = Math.max(1, Math.floor(targetTokens / SHORT_OPENING_SHARE));
  for (let i = 1; i < units.length; i++) {
    const unit = units[i]!;
    const opening = onlyHeadings || costs.cost(start, i - 1) <= short;
    if (unit.heading && !onlyHeadings) cut(i);
    else if (costs.cost(start, i) > (opening ? maxTokens : targetTokens)) cut(i);
    else onlyHeadings &&= unit.heading;
  }
  if (units.length > 0) spans.push({ start: units[start]!.start, end: units.at(-1)!.end });
  return spans;
}
