/**
 * Hybrid fusion: one score per candidate chunk from its cosine similarity and its BM25
 * score. Every candidate carries both signals (the index computes the similarity of
 * chunks that only the keyword search found), so nothing is scored 0 for having been
 * missed by one list's cut-off.
 *
 * - `convex`: `w · vector + (1 − w) · keyword`, similarity min–max scaled over the
 *   candidates, BM25 divided by the best BM25 (0 stays 0: the chunk has none of the terms).
 * - `dbsf` (distribution-based score fusion): each signal scaled by its own spread,
 *   `(s − (μ − 3σ)) / 6σ` clipped to [0, 1], then the same weighted sum. Steadier than
 *   min–max when one outlier stretches a list.
 * - `rrf`: reciprocal rank fusion, `w/(60 + rank_v) + (1 − w)/(60 + rank_k)`, doubled so
 *   equal weights give the classic form; ignores the scores' sizes.
 */

import type { FusionMethod, KeywordTrust } from "../../domain/vocabulary.js";

export type { FusionMethod, KeywordTrust };

export interface HybridFusion {
  method: FusionMethod;
  /** Weight of the vector signal (the keyword signal gets the rest). */
  vectorWeight: number;
  /**
   * How the keyword weight adapts to each question (`CorpusIndex.search`): scaled by the
   * square of the best keyword hits' coverage of the question and by the share of close
   * passages in its language (`squared`, the default), by the coverage itself (`linear`),
   * by the language share alone (`language`), or not at all (`fixed`).
   */
  keywordTrust?: KeywordTrust;
}


export interface FusionCandidate {
  id: string;
  /** Cosine similarity to the query. */
  similarity: number;
  /** BM25 score; 0 when the chunk has none of the query's terms. */
  keyword: number;
}

const RRF_K = 60;

function minMax(values: readonly number[]): (v: number) => number {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return (v) => (max > min ? (v - min) / (max - min) : 1);
}

function spread(values: readonly number[]): (v: number) => number {
  if (values.length === 0) return () => 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
  if (sd === 0) return () => 1;
  return (v) => Math.min(1, Math.max(0, (v - (mean - 3 * sd)) / (6 * sd)));
}

/** The candidates with their fused scores, best first (ties by id, so results are stable). */
export function fuseScores(candidates: readonly FusionCandidate[], fusion: HybridFusion): { id: string; score: number }[] {
  const w = fusion.vectorWeight;
  const matched = candidates.filter((c) => c.keyword > 0).map((c) => c.keyword);
  let score: (c: FusionCandidate) => number;
  if (fusion.method === "rrf") {
    const rankOf = (list: FusionCandidate[]) => new Map(list.map((c, i) => [c.id, i + 1]));
    const vectorRank = rankOf([...candidates].sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id)));
    const keywordRank = rankOf(candidates.filter((c) => c.keyword > 0).sort((a, b) => b.keyword - a.keyword || a.id.localeCompare(b.id)));
    score = (c) => 2 * (w / (RRF_K + vectorRank.get(c.id)!) + (keywordRank.has(c.id) ? (1 - w) / (RRF_K + keywordRank.get(c.id)!) : 0));
  } else if (fusion.method === "dbsf") {
    const v = spread(candidates.map((c) => c.similarity));
    const k = spread(matched);
    score = (c) => w * v(c.similarity) + (1 - w) * (c.keyword > 0 ? k(c.keyword) : 0);
  } else {
    const v = minMax(candidates.map((c) => c.similarity));
    const best = Math.max(0, ...matched);
    score = (c) => w * v(c.similarity) + (1 - w) * (best > 0 ? c.keyword / best : 0);
  }
  return candidates.map((c) => ({ id: c.id, score: score(c) })).sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}
