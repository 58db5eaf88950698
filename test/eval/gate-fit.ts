/**
 * Fitting the relevance gate: logistic regression (gradient descent on standardised
 * features, L2, classes weighted equally) over the questions' evidence and judge scores,
 * then the threshold chosen on the same data so at most `maxRefusedAnswerable` of the
 * answerable questions are refused. The split is by question id, so calibration and test
 * sets never share a question.
 */
import { EVIDENCE_FEATURES, answerability, gateFeatures, type GateFeature, type RelevanceGateModel } from "../../src-server/rag/answer/relevance-gate.js";
import type { RelevanceEvidence } from "../../src-server/rag/retrieval/corpus-index.js";

export interface GateRow {
  id: string;
  answerable: boolean;
  /** Unanswerable questions: `near_miss`, `off_topic` or `original`. */
  kind: string | null;
  /** As `/search` returns it (snake_case). */
  evidence: Record<string, number | null>;
  /** The judge's probability of "yes", or null without a judge. */
  judge: number | null;
}

/** A stable half of the questions by id (FNV-1a parity): `true` for the calibration half. */
export function inCalibrationHalf(id: string): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h % 2 === 0;
}

/** `/search`'s snake_case evidence as the service's `RelevanceEvidence`. */
export function evidenceOf(wire: Record<string, number | null>): Partial<RelevanceEvidence> {
  return {
    bestSimilarity: wire.best_similarity ?? null,
    similarityGap: wire.similarity_gap ?? null,
    keywordCoverage: wire.keyword_coverage ?? null,
    unknownTermShare: wire.unknown_term_share ?? null,
    missingMaxIdf: wire.missing_max_idf ?? null,
  };
}

const score = (row: GateRow, model: RelevanceGateModel) => answerability(evidenceOf(row.evidence), row.judge, model);

export function fitGate(rows: readonly GateRow[], options: { judgeOnly?: boolean; l2?: number; maxRefusedAnswerable?: number; iterations?: number } = {}): RelevanceGateModel {
  const withJudge = rows.every((r) => r.judge !== null);
  const features: GateFeature[] = options.judgeOnly ? ["judge"] : withJudge ? [...EVIDENCE_FEATURES, "judge"] : [...EVIDENCE_FEATURES];
  const l2 = options.l2 ?? 0.01;
  const x = rows.map((r) => {
    const f = gateFeatures(evidenceOf(r.evidence), r.judge);
    return features.map((name) => f[name]);
  });
  const y = rows.map((r) => (r.answerable ? 1 : 0));
  const dims = features.length;
  const mean = Array.from({ length: dims }, (_, j) => x.reduce((s, row) => s + row[j]!, 0) / x.length);
  const sd = Array.from({ length: dims }, (_, j) => Math.sqrt(x.reduce((s, row) => s + (row[j]! - mean[j]!) ** 2, 0) / x.length) || 1);
  const z = x.map((row) => row.map((v, j) => (v - mean[j]!) / sd[j]!));
  const positives = y.filter((v) => v === 1).length;
  const weightOf = (label: number) => (label === 1 ? rows.length / (2 * positives) : rows.length / (2 * (rows.length - positives)));
  let bias = 0;
  const w = new Array<number>(dims).fill(0);
  const rate = 0.5;
  for (let it = 0; it < (options.iterations ?? 3000); it++) {
    let gb = 0;
    const gw = new Array<number>(dims).fill(0);
    for (let i = 0; i < z.length; i++) {
      const p = 1 / (1 + Math.exp(-(bias + z[i]!.reduce((s, v, j) => s + v * w[j]!, 0))));
      const err = (p - y[i]!) * weightOf(y[i]!);
      gb += err;
      for (let j = 0; j < dims; j++) gw[j]! += err * z[i]![j]!;
    }
    bias -= (rate * gb) / z.length;
    for (let j = 0; j < dims; j++) w[j]! -= rate * (gw[j]! / z.length + l2 * w[j]!);
  }
  // Back to the raw features' scale.
  const weights: Partial<Record<GateFeature, number>> = {};
  let intercept = bias;
  features.forEach((name, j) => {
    weights[name] = w[j]! / sd[j]!;
    intercept -= (w[j]! * mean[j]!) / sd[j]!;
  });
  const model: RelevanceGateModel = { intercept, weights, threshold: 0.5 };
  // The threshold: the highest that refuses at most the allowed share of answerable questions.
  const answerableScores = rows.filter((r) => r.answerable).map((r) => score(r, model)).sort((a, b) => a - b);
  const allowed = Math.floor((options.maxRefusedAnswerable ?? 0.05) * answerableScores.length);
  model.threshold = answerableScores.length ? answerableScores[allowed]! : 0.5;
  return model;
}

export interface GateRates {
  answerable: number;
  unanswerable: number;
  /** Share of answerable questions the gate refused. */
  refusedAnswerable: number;
  /** Share of unanswerable questions the gate refused (the "not in the corpus" reply). */
  refusedUnanswerable: number;
  /** Share refused per kind of unanswerable question. */
  byKind: Record<string, number>;
}

export function gateRates(rows: readonly GateRow[], model: RelevanceGateModel): GateRates {
  const refused = (r: GateRow) => score(r, model) < model.threshold;
  const a = rows.filter((r) => r.answerable);
  const u = rows.filter((r) => !r.answerable);
  const kinds = [...new Set(u.map((r) => r.kind ?? "original"))];
  return {
    answerable: a.length,
    unanswerable: u.length,
    refusedAnswerable: a.filter(refused).length / Math.max(1, a.length),
    refusedUnanswerable: u.filter(refused).length / Math.max(1, u.length),
    byKind: Object.fromEntries(kinds.map((k) => {
      const of = u.filter((r) => (r.kind ?? "original") === k);
      return [k, of.filter(refused).length / Math.max(1, of.length)];
    })),
  };
}
