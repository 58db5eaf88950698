/**
 * Units: the pieces paragraph and semantic chunking assemble chunks from (a whole block,
 * a sentence, a list line, or a word run cut from an over-long sentence), each with an
 * estimated token cost, and prefix sums to cost any run of consecutive units in O(1).
 */
import type { ChunkContext } from "./chunk-context.js";
import { fitSpan } from "./fit-span.js";
import { sentenceSpans } from "./sentences.js";
import { lineSpans, type MeasuredSpan, type TextSpan } from "./text-span.js";

/** A piece of one block; `tokens` is its estimated contribution to a chunk (tokenizer overhead excluded). */
export interface Unit extends MeasuredSpan {
  /** Index of the block in `ctx.outline.blocks`. */
  block: number;
  /** The unit is (part of) a heading: chunks may start at it but never end right after it. */
  heading: boolean;
}

/** Block `index` as a single unit when it fits in `maxTokens`, else `splitBlock`'s units. */
export function blockUnits(ctx: ChunkContext, index: number): Unit[] {
  const tokens = ctx.meter.piece(ctx.outline.blockText(index));
  if (tokens + ctx.meter.overhead > ctx.options.maxTokens) return splitBlock(ctx, index);
  return [unit(ctx, ctx.outline.blocks[index]!, index, tokens)];
}

/**
 * Block `index` cut into units: paragraphs (and headings) into sentences, lists, tables and
 * code into lines. A sentence or line above `maxTokens` is cut at word boundaries into
 * pieces of at most `targetTokens`; everything else stays whole.
 */
export function splitBlock(ctx: ChunkContext, index: number): Unit[] {
  const { outline, meter, options } = ctx;
  const block = outline.blocks[index]!;
  const parts = block.kind === "paragraph" || block.kind === "heading" ? sentenceSpans(outline.blockText(index), block.start) : lineSpans(outline.text, block);
  const units: Unit[] = [];
  for (const part of parts) {
    const tokens = meter.piece(outline.text.slice(part.start, part.end));
    if (tokens + meter.overhead <= options.maxTokens) {
      units.push(unit(ctx, part, index, tokens));
      continue;
    }
    for (const piece of fitSpan(outline.text, part, options.targetTokens, meter, "word")) {
      units.push(unit(ctx, piece, index, Math.max(0, piece.tokens - meter.overhead)));
    }
  }
  return units;
}

/** Estimated tokens of runs of consecutive units, from prefix sums. */
export class UnitCosts {
  /** `sums[i]`: tokens of units 0..i-1 with the separators between them. */
  private readonly sums: number[] = [0];
  /** `gaps[i]`: separator tokens between unit i-1 and unit i (0 for i = 0). */
  private readonly gaps: number[] = [];

  constructor(
    private readonly ctx: ChunkContext,
    readonly units: readonly Unit[],
  ) {
    let total = 0;
    units.forEach((u, i) => {
      const gap = i === 0 ? 0 : ctx.meter.separator(ctx.outline.text.slice(units[i - 1]!.end, u.start));
      this.gaps.push(gap);
      total += gap + u.tokens;
      this.sums.push(total);
    });
  }

  /** Estimated exact count of a chunk made of units `from..to` inclusive (overhead included). */
  cost(from: number, to: number): number {
    return this.ctx.meter.overhead + this.sums[to + 1]! - this.sums[from]! - this.gaps[from]!;
  }
}

function unit(ctx: ChunkContext, span: TextSpan, block: number, tokens: number): Unit {
  return { start: span.start, end: span.end, tokens, block, heading: ctx.outline.blocks[block]!.kind === "heading" };
}
