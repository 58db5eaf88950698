/**
 * Search tuning: which search settings rank a corpus's own judged questions best, and
 * whether that choice holds on questions it was not chosen on.
 *
 * No fixed fusion holds every collection (docs/EVALUATION.md: Vaswani wants a vector weight
 * of 0.2–0.3, SciFact 0.7, the bilingual set 0.9, and no per-question feature tells them
 * apart), so a corpus can be tuned on questions whose answers its owner knows. The
 * candidates are the two single modes and convex fusions over a grid of vector weights and
 * keyword-trust rules, plus the settings in force. Each is scored by nDCG@10 over documents
 * (ranked by their best passage), and the choice is checked by two-fold cross-validation:
 * chosen on one half of the questions, scored on the other.
 */
import type { KeywordTrust, SearchMode } from "../../domain/vocabulary.js";
import type { HybridFusion } from "./score-fusion.js";

/** One search setting: a mode, and for hybrid search its fusion. */
export interface SearchSetting {
  search: SearchMode;
  fusion: HybridFusion | null;
}

export interface ScoredSetting extends SearchSetting {
  /** Mean nDCG@10 and recall@10 over the questions (documents ranked by their best passage). */
  ndcg: number;
  recall: number;
}

/** Vector weights tried for convex fusion. */
export const TUNING_WEIGHTS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] as const;
export const TUNING_TRUSTS: readonly KeywordTrust[] = ["auto", "squared", "linear", "language", "fixed"];

/** The settings tried: the ones in force first (ties keep them), then the single modes, then the grid. */
export function tuningCandidates(current: SearchSetting): SearchSetting[] {
  const all: SearchSetting[] = [current, { search: "keyword", fusion: null }, { search: "vector", fusion: null }];
  for (const keywordTrust of TUNING_TRUSTS) for (const vectorWeight of TUNING_WEIGHTS) all.push({ search: "hybrid", fusion: { method: "convex", vectorWeight, keywordTrust } });
  const seen = new Set<string>();
  return all.filter((s) => {
    const key = settingKey(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A setting's identity (an unset keyword trust is the default, `auto`). */
export function settingKey(s: SearchSetting): string {
  if (s.search !== "hybrid" || !s.fusion) return s.search;
  return `hybrid:${s.fusion.method}:${s.fusion.vectorWeight}:${s.fusion.keywordTrust ?? "auto"}`;
}

/**
 * The best setting by mean score over `questions` (indexes into each setting's scores);
 * the first wins ties, so the settings in force stay unless another is strictly better.
 */
export function bestSetting(scores: readonly (readonly number[])[], questions: readonly number[]): number {
  let best = 0;
  let bestMean = Number.NEGATIVE_INFINITY;
  scores.forEach((perQuestion, i) => {
    const mean = questions.reduce((sum, q) => sum + perQuestion[q]!, 0) / Math.max(1, questions.length);
    if (mean > bestMean + 1e-12) {
      best = i;
      bestMean = mean;
    }
  });
  return best;
}

/**
 * Two-fold cross-validation of "choose the best setting": the questions split in two by
 * position (even, odd), the setting chosen on each half scored on the other. Returns the
 * held-out mean over all questions of the chosen settings, and that of the settings in
 * force (index 0) for comparison.
 */
export function crossValidate(scores: readonly (readonly number[])[]): { tuned: number; current: number } {
  const n = scores[0]?.length ?? 0;
  const halves = [0, 1].map((parity) => Array.from({ length: n }, (_, q) => q).filter((q) => q % 2 === parity));
  let tuned = 0;
  for (const [fit, test] of [
    [halves[0]!, halves[1]!],
    [halves[1]!, halves[0]!],
  ] as const) {
    const chosen = bestSetting(scores, fit);
    for (const q of test) tuned += scores[chosen]![q]!;
  }
  const current = scores[0]!.reduce((a, b) => a + b, 0);
  return { tuned: n ? tuned / n : 0, current: n ? current / n : 0 };
}

/** Documents in the order of their best passage in `ranked` (passage → document ids). */
export function documentRanking(ranked: readonly { documentId: string }[]): string[] {
  return [...new Set(ranked.map((h) => h.documentId))];
}
