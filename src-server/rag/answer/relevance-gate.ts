/**
 * "Does the corpus answer this?" — decided from evidence that separates answerable
 * questions from the rest. The best similarity alone cannot: on the bilingual set its
 * ranges for the two overlap almost completely (a question about the corpus's topic
 * that the corpus cannot answer is as close to its passages as one it can).
 *
 * The gate is a logistic model over retrieval features (`RelevanceEvidence`: how far the
 * closest passage stands out, how much of the question's wording the results hold, how
 * much of it the corpus has never seen, how rare the rarest missing word is) and, when
 * the chat model was asked, the judge's log-odds of "yes" (`relevance-judge.ts`). The
 * coefficients are fitted by `npm run eval:gate` on one half of the bilingual set and
 * tested on the other; they depend on the embedding model's similarity scale and on the
 * judge, so the fitted gates ship per model pair in `DEFAULT_GATES`, and the config can
 * give others.
 */
import type { RelevanceEvidence } from "../retrieval/corpus-index.js";

export const EVIDENCE_FEATURES = ["best_similarity", "similarity_gap", "keyword_coverage", "unknown_term_share", "missing_max_idf"] as const;
export const GATE_FEATURES = [...EVIDENCE_FEATURES, "judge"] as const;
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
export function gateFeatures(evidence: Partial<RelevanceEvidence>, judge: number | null): Record<GateFeature, number> {
  return {
    best_similarity: evidence.bestSimilarity ?? 0,
    similarity_gap: evidence.similarityGap ?? 0,
    // No words to match (a question of stop words only): neither for nor against.
    keyword_coverage: evidence.keywordCoverage ?? 0.5,
    unknown_term_share: evidence.unknownTermShare ?? 0,
    missing_max_idf: evidence.missingMaxIdf ?? 0,
    judge: judge === null ? 0 : judgeLogOdds(judge),
  };
}

/** Probability that the corpus answers the question, under `model`. */
export function answerability(evidence: Partial<RelevanceEvidence>, judge: number | null, model: RelevanceGateModel): number {
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

/**
 * Gates fitted by `npm run eval:gate` on the bilingual set, by "embedding model|chat
 * model" fingerprints (the chat model is the judge; `*`: the evidence alone, no judge).
 */
export const BUILT_IN_GATES: Record<string, RelevanceGateModel> = {};

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
