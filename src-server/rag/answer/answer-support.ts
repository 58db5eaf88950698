/**
 * A finished answer's citations for a reader to check: which sources the answer uses,
 * which passage of each supports it and on which page, and which sentence rests on which
 * sources (see `attribution.ts`).
 */
import { pageAt } from "../chunking/page-at.js";
import { attribute, attributionPlan, type AttributionOptions } from "./attribution.js";
import type { AnswerCitation, Citation } from "./query-service.js";

/** A sentence of the answer and the sources that support it. */
export interface AnswerSentence {
  /** Offsets into the answer text. */
  start: number;
  end: number;
  /** Citation numbers (`index`) of the supporting sources; the marked ones when none supports it. */
  citations: number[];
  /** False when no source holds what the sentence says. */
  supported: boolean;
}

export interface SupportedAnswer {
  citations: AnswerCitation[];
  sentences: AnswerSentence[];
}

/**
 * Attributes `answer` to `citations`. A fallback answer ("not in the corpus", `grounded`
 * false) has no attribution: nothing cited, no sentences.
 */
export function supportAnswer(citations: readonly Citation[], answer: string, grounded: boolean, options: AttributionOptions = {}): SupportedAnswer {
  if (!grounded) return { citations: citations.map((c) => ({ ...c, cited: false, support: null })), sentences: [] };
  const sources = citations.map((c) => ({ index: c.index, text: c.text }));
  const result = attribute(attributionPlan(answer, sources), sources, options);
  return {
    citations: citations.map((c) => {
      const span = result.support.get(c.index);
      return { ...c, cited: result.cited.has(c.index), support: span ? { page: pageAt(c, span.start), start: span.start, end: span.end } : null };
    }),
    sentences: result.sentences.map((s) => ({ start: s.start, end: s.end, citations: s.citations, supported: s.supported })),
  };
}
