/**
 * Where to cut one section (a heading and the units under it) into chunks, given the
 * semantic distance at each gap: at topic shifts (peaks of distance at or above a threshold)
 * once a chunk has some substance, at the best gap before a chunk outgrows its target,
 * never right after a heading, never past the limit.
 */
import type { UnitCosts } from "./block-units.js";

/** Limits for `sectionCuts`, in tokens. */
export interface CutLimits {
  /** A chunk is cut at a topic shift only once it has this many tokens; smaller trailing chunks are merged back. */
  minTokens: number;
  /** Size a chunk should not grow beyond when a cut is possible. */
  targetTokens: number;
  /** Hard limit (estimated; `buildChunks` enforces it exactly). */
  maxTokens: number;
  /** Distances at or above this that are also local peaks are topic shifts. */
  threshold: number;
}

/** Added to the distance of a gap between two blocks when choosing where to cut an oversized chunk. */
const BLOCK_BOUNDARY_BONUS = 0.05;

/**
 * Chunks of one section as inclusive unit-index ranges `[from, to]`, in order, covering
 * every unit. `distances[i]` is the distance between unit i-1 and unit i, or null
 * where no cut is suggested by meaning (headings, units that were not embedded).
 */
export function sectionCuts(costs: UnitCosts, distances: readonly (number | null)[], limits: CutLimits): [number, number][] {
  const units = costs.units;
  const ranges: [number, number][] = [];
  if (units.length === 0) return ranges;
  const allowed = (j: number): boolean => !units[j - 1]!.heading;
  let start = 0;
  const cutBefore = (j: number): void => {
    ranges.push([start, j - 1]);
    start = j;
  };
  for (let i = 1; i < units.length; i++) {
    const distance = distances[i] ?? null;
    if (allowed(i) && distance !== null && distance >= limits.threshold && isPeak(distances, i) && costs.cost(start, i - 1) >= limits.minTokens) {
      cutBefore(i);
      continue;
    }
    while (start < i && costs.cost(start, i) > limits.targetTokens) {
      let at = bestCut(costs, distances, limits.minTokens, start, i);
      if (at === null) {
        if (costs.cost(start, i) <= limits.maxTokens) break;
        at = lastAllowed(start, i, allowed) ?? i;
      }
      cutBefore(at);
    }
  }
  ranges.push([start, units.length - 1]);
  const last = ranges.at(-1)!;
  const prev = ranges.at(-2);
  if (prev !== undefined && costs.cost(...last) < limits.minTokens && costs.cost(prev[0], last[1]) <= limits.maxTokens) {
    ranges.splice(-2, 2, [prev[0], last[1]]);
  }
  return ranges;
}

/**
 * The gap in `(start, i]` to cut before when the chunk `start..i` is too big: the most
 * distant one, preferring block boundaries and later gaps, among those leaving at least
 * `minTokens` before them; null when there is none.
 */
function bestCut(costs: UnitCosts, distances: readonly (number | null)[], minTokens: number, start: number, i: number): number | null {
  const units = costs.units;
  let best: number | null = null;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let j = start + 1; j <= i; j++) {
    if (units[j - 1]!.heading || costs.cost(start, j - 1) < minTokens) continue;
    const score = (distances[j] ?? 0) + (units[j - 1]!.block === units[j]!.block ? 0 : BLOCK_BOUNDARY_BONUS);
    if (score >= bestScore) [best, bestScore] = [j, score];
  }
  return best;
}

/**
 * Whether the distance at gap `i` is at least its neighbours'. Averaging windows make
 * distances rise and fall around a topic shift; cutting at the peak, not at the first
 * gap over the threshold, keeps the sentence next to the shift on the right side.
 */
function isPeak(distances: readonly (number | null)[], i: number): boolean {
  const d = distances[i] ?? Number.NEGATIVE_INFINITY;
  return d >= (distances[i - 1] ?? Number.NEGATIVE_INFINITY) && d >= (distances[i + 1] ?? Number.NEGATIVE_INFINITY);
}

function lastAllowed(start: number, i: number, allowed: (j: number) => boolean): number | null {
  for (let j = i; j > start; j--) if (allowed(j)) return j;
  return null;
}
