/**
 * Semantic chunking, the default. Structure first: a heading starts a new section (and
 * opens its first chunk); lists, tables and code blocks stay whole when they fit; page
 * changes may fall inside a chunk (recorded in its page range). Within a section, the
 * topic decides: chunks are cut where neighbouring sentences drift furthest apart,
 * relative to the document. How far apart two runs of sentences are is measured from
 * their words (`breakpoints: "lexical"`, the default: lexical-cohesion.ts), or from
 * sentence embeddings (`"embedding"`: the whole document in a few large batches).
 *
 * Lexical is the default because it costs no embedding: with sentence embeddings every
 * sentence is embedded and then again as part of its chunk, which doubled indexing time,
 * and on the bilingual eval set and BEIR SciFact the chunks it makes retrieve as well
 * (docs/EVALUATION.md, "Topic shifts from words").
 */
import type { ParsedDocument } from "../ingest/types.js";
import { blockUnits, splitBlock, UnitCosts, type Unit } from "./block-units.js";
import { buildChunks } from "./chunk-builder.js";
import { createChunkContext, type ChunkContext } from "./chunk-context.js";
import { sectionCuts } from "./section-cuts.js";
import { gapDistances, percentile } from "./semantic-breakpoints.js";
import { lexicalVectors } from "./lexical-cohesion.js";
import type { TextSpan } from "./text-span.js";
import type { ChunkDraft, ChunkerDeps, ChunkOptions } from "./types.js";

/** Distances at or above this percentile of the document's distances may be topic shifts. */
const BREAKPOINT_PERCENTILE = 90;
/** Sentences averaged on each side of a gap before comparing. */
const DISTANCE_WINDOW = 2;
/** A chunk must reach this fraction of `targetTokens` before a topic shift may end it. */
const MIN_CHUNK_FRACTION = 0.25;
/** Texts per `deps.embed` call. */
const EMBED_BATCH = 512;

/**
 * Chunks `doc` at structural boundaries and, within sections, at topic shifts (from words
 * or from sentence embeddings, as `options.breakpoints` says). Chunks aim at `options.targetTokens`, are never cut at a topic shift below
 * a quarter of it, and never exceed `options.maxTokens`.
 * @throws Error when `deps.embed` returns a different number of vectors than it was given.
 */
export async function semanticChunker(doc: ParsedDocument, options: ChunkOptions, deps: ChunkerDeps): Promise<ChunkDraft[]> {
  const ctx = createChunkContext(doc, options, deps);
  const minTokens = Math.max(1, Math.round(options.targetTokens * MIN_CHUNK_FRACTION));
  const sections = sectionUnits(ctx).map((units) => new UnitCosts(ctx, units));

  // Only sections big enough to hold two chunks can be cut by topic; only their sentences are compared.
  const wanted = sections.map((costs) => costs.units.length > 1 && costs.cost(0, costs.units.length - 1) >= 2 * minTokens);
  const texts = sections.flatMap((costs, s) => (wanted[s] ? costs.units.filter((u) => !u.heading).map((u) => doc.text.slice(u.start, u.end)) : []));
  const vectors = (options.breakpoints ?? "lexical") === "lexical" ? lexicalVectors(texts) : await embedAll(deps, texts);

  let next = 0;
  const distances = sections.map((costs, s) =>
    gapDistances(costs.units.map((u) => (wanted[s] && !u.heading ? vectors[next++]! : null)), DISTANCE_WINDOW),
  );
  const known = distances.flat().filter((d): d is number => d !== null);
  const threshold = breakpointThreshold(known);

  const spans: TextSpan[] = [];
  sections.forEach((costs, s) => {
    const limits = { minTokens, targetTokens: options.targetTokens, maxTokens: options.maxTokens, threshold };
    for (const [from, to] of sectionCuts(costs, distances[s]!, limits)) {
      spans.push({ start: costs.units[from]!.start, end: costs.units[to]!.end });
    }
  });
  return buildChunks(ctx, spans);
}

/**
 * Units grouped into sections: a heading opens a new section unless the current one holds
 * only headings so far (a chapter title straight above a section title). Paragraphs become
 * sentences; lists, tables, code and headings stay whole unless they exceed `maxTokens`.
 */
function sectionUnits(ctx: ChunkContext): Unit[][] {
  const sections: Unit[][] = [];
  let current: Unit[] = [];
  let hasContent = false;
  ctx.outline.blocks.forEach((block, i) => {
    if (block.kind === "heading" && hasContent) {
      sections.push(current);
      current = [];
      hasContent = false;
    }
    hasContent ||= block.kind !== "heading";
    for (const unit of block.kind === "paragraph" ? splitBlock(ctx, i) : blockUnits(ctx, i)) current.push(unit);
  });
  if (current.length > 0) sections.push(current);
  return sections;
}

/**
 * The `BREAKPOINT_PERCENTILE`th percentile of the document's distances, or Infinity (no
 * topic shifts) when it is no higher than the median: evenly spread distances mark none.
 */
function breakpointThreshold(distances: number[]): number {
  const threshold = percentile(distances, BREAKPOINT_PERCENTILE);
  return threshold > percentile(distances, 50) ? threshold : Number.POSITIVE_INFINITY;
}

async function embedAll(deps: ChunkerDeps, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH) {
    const batch = texts.slice(i, i + EMBED_BATCH);
    const vectors = await deps.embed(batch);
    if (vectors.length !== batch.length) throw new Error(`embed returned ${vectors.length} vectors for ${batch.length} texts`);
    for (const vector of vectors) out.push(vector);
  }
  return out;
}
