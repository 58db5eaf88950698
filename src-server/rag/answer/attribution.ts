/**
 * Attribution: which source passage supports each sentence of an answer, so a reader can
 * check it. Pure (no I/O). A sentence with `[n]` markers is attributed to those sources
 * when they support it; otherwise (no markers, or markers pointing at sources that do not
 * hold the statement) to the source sentences that best cover its terms: IDF-weighted
 * overlap of stemmed words, numbers and names weighing most. Coverage below a threshold
 * leaves the sentence unsupported, as does a number its supporting sources do not hold.
 * An optional similarity (e.g. embeddings) can lift a sentence's coverage where words
 * differ (paraphrase, the other language); on the bilingual eval set it changed nothing
 * (`npm run eval:attribution -- --embeddings`), so the query service does not use it.
 */
import { sentenceSpans } from "../chunking/sentences.js";
import { answerSentences, markerNumbers } from "./answer-sentences.js";
import { answerTerms, sourceKeys, sourceLanguage, type AnswerTerm, type TermKind } from "./support-terms.js";

export interface AttributionSource {
  /** The `[n]` of the source. */
  index: number;
  text: string;
}

/** A span of a source's text that supports a sentence. */
export interface SupportSpan {
  index: number;
  /** Offsets into the source's text. */
  start: number;
  end: number;
  /** Share (0–1) of the sentence's weighted terms this span holds. */
  score: number;
}

export interface SentenceAttribution {
  /** Offsets into the answer. */
  start: number;
  end: number;
  /** Sources that support the sentence (or that its markers name, when none does), ascending. */
  citations: number[];
  supported: boolean;
  /** Share (0–1) of the sentence's weighted terms found in its supporting spans. */
  coverage: number;
  /** The supporting span in each cited source (absent for a source without one). */
  spans: SupportSpan[];
}

export interface Attribution {
  sentences: SentenceAttribution[];
  /** Per source: the span that best supports a supported sentence (sources supporting nothing are absent). */
  support: Map<number, SupportSpan>;
  /** Sources the answer uses: named by a marker or supporting a sentence. */
  cited: Set<number>;
}

export interface AttributionOptions {
  /** Coverage from which a sentence without (trustworthy) markers is supported. Default 0.5. */
  threshold?: number;
  /** Coverage from which the sources a sentence's markers name support it. Default 0.3. */
  markedThreshold?: number;
  /**
   * Similarity (0–1) of answer sentence `sentence` and source sentence `candidate` (e.g.
   * cosine of embeddings); counts as coverage when higher. Indexes follow `attributionPlan`.
   */
  similarity?: (sentence: number, candidate: number) => number;
  /** A sentence stating a number its supporting sources do not hold is unsupported, whatever its coverage. Default true. */
  strictNumbers?: boolean;
}

/** A source sentence attribution may point at. */
export interface Candidate {
  source: number;
  start: number;
  end: number;
  text: string;
}

export interface AttributionPlan {
  sentences: { start: number; end: number; content: string; markers: number[]; terms: AnswerTerm[] }[];
  candidates: Candidate[];
  /** Candidate indexes holding each key. */
  postings: Map<string, number[]>;
  /** Source numbers named by any marker of the answer (also outside sentences). */
  markers: Set<number>;
}

const KIND_WEIGHT: Record<TermKind, number> = { number: 3, digit: 1, name: 2, word: 1 };
/** Source sentences longer than this are cut at line breaks (tables, lists glued together). */
const LONG_CANDIDATE = 600;
/** At most this many passages support one sentence; each after the first must add this share. */
const MAX_PICKS = 3;
const MIN_EXTRA_GAIN = 0.15;
/** Two picks in one source closer than this (characters) make one span. */
const JOIN_GAP = 300;

/** The answer's sentences and the sources' sentences, indexed for matching. */
export function attributionPlan(answer: string, sources: readonly AttributionSource[]): AttributionPlan {
  const candidates: Candidate[] = [];
  const postings = new Map<string, number[]>();
  for (const source of sources) {
    const language = sourceLanguage(source.text);
    for (const span of sourceSentences(source.text)) {
      const id = candidates.length;
      const text = source.text.slice(span.start, span.end);
      candidates.push({ source: source.index, start: span.start, end: span.end, text });
      for (const key of sourceKeys(text, language)) {
        const list = postings.get(key);
        if (list) list.push(id);
        else postings.set(key, [id]);
      }
    }
  }
  const sentences = answerSentences(answer).map((s) => ({ ...s, terms: answerTerms(s.content) }));
  return { sentences, candidates, postings, markers: markerNumbers(answer) };
}

/** Attribution of `answer` to `sources` (see the module comment). */
export function attributeAnswer(answer: string, sources: readonly AttributionSource[], options: AttributionOptions = {}): Attribution {
  return attribute(attributionPlan(answer, sources), sources, options);
}

/** Attribution from a plan (callers that add a similarity build the plan first to embed its texts). */
export function attribute(plan: AttributionPlan, sources: readonly AttributionSource[], options: AttributionOptions = {}): Attribution {
  const threshold = options.threshold ?? 0.5;
  const strict = options.strictNumbers ?? true;
  const holds = (m: { coverage: number; missingNumber: boolean }, min: number) => m.coverage >= min && !(strict && m.missingNumber);
  const markedThreshold = options.markedThreshold ?? 0.3;
  const known = new Set(sources.map((s) => s.index));
  const cited = new Set([...plan.markers].filter((n) => known.has(n)));
  const support = new Map<number, SupportSpan>();
  const sentences = plan.sentences.map((sentence, i): SentenceAttribution => {
    const marked = sentence.markers.filter((n) => known.has(n));
    const matcher = new SentenceMatcher(plan, sentence.terms, options.similarity && ((c) => options.similarity!(i, c)));
    let result = { citations: [] as number[], supported: false, coverage: 0, spans: [] as SupportSpan[] };
    if (marked.length > 0) {
      const own = matcher.match(new Set(marked));
      const other = holds(own, markedThreshold) ? null : matcher.match(null);
      if (other && holds(other, threshold)) result = { ...other, citations: other.sources, supported: true };
      else result = { citations: [...marked].sort((a, b) => a - b), supported: holds(own, markedThreshold), coverage: own.coverage, spans: own.spans };
    } else {
      const found = matcher.match(null);
      if (holds(found, threshold)) result = { ...found, citations: found.sources, supported: true };
      else result.coverage = found.coverage;
    }
    if (result.supported) {
      for (const span of result.spans) {
        cited.add(span.index);
        const best = support.get(span.index);
        if (!best || span.score > best.score) support.set(span.index, span);
      }
    }
    return { start: sentence.start, end: sentence.end, citations: result.citations, supported: result.supported, coverage: result.coverage, spans: result.supported ? result.spans : [] };
  });
  return { sentences, support, cited };
}

/** Source sentences, long ones cut at line breaks. */
function sourceSentences(text: string): { start: number; end: number }[] {
  return sentenceSpans(text).flatMap((span) => {
    if (span.end - span.start <= LONG_CANDIDATE) return [span];
    const lines: { start: number; end: number }[] = [];
    const re = /[^\r\n]+/g;
    const part = text.slice(span.start, span.end);
    for (let m = re.exec(part); m !== null; m = re.exec(part)) if (/[\p{L}\p{N}]/u.test(m[0])) lines.push({ start: span.start + m.index, end: span.start + m.index + m[0].length });
    return lines;
  });
}

/** Greedy cover of one answer sentence's weighted terms by source sentences. */
class SentenceMatcher {
  private readonly weights: number[];
  private readonly numbers: number[];
  private readonly holders: number[][];
  private readonly total: number;

  constructor(
    private readonly plan: AttributionPlan,
    terms: readonly AnswerTerm[],
    private readonly similarity?: (candidate: number) => number,
  ) {
    const n = plan.candidates.length;
    this.holders = terms.map((term) => {
      const ids = new Set<number>();
      for (const key of term.keys) for (const id of plan.postings.get(key) ?? []) ids.add(id);
      return [...ids];
    });
    // A term no source holds weighs most: the sentence then says something the sources do not.
    this.weights = terms.map((term, t) => KIND_WEIGHT[term.kind] * Math.log(1 + (n + 1) / (this.holders[t]!.length + 0.5)));
    this.total = this.weights.reduce((a, b) => a + b, 0);
    this.numbers = terms.flatMap((term, t) => (term.kind === "number" || term.kind === "digit" ? [t] : []));
  }

  /** The best cover using candidates of `allowed` sources (all when null). */
  match(allowed: Set<number> | null): { coverage: number; missingNumber: boolean; sources: number[]; spans: SupportSpan[] } {
    const ok = (id: number) => allowed === null || allowed.has(this.plan.candidates[id]!.source);
    const picks: { id: number; gain: number }[] = [];
    const covered = new Set<number>();
    let coverage = 0;
    if (this.total > 0) {
      for (let round = 0; round < MAX_PICKS; round++) {
        const gains = new Map<number, number>();
        this.holders.forEach((ids, t) => {
          if (covered.has(t)) return;
          for (const id of ids) if (ok(id)) gains.set(id, (gains.get(id) ?? 0) + this.weights[t]!);
        });
        let best = -1;
        let bestGain = 0;
        for (const [id, gain] of gains) if (gain > bestGain || (gain === bestGain && id < best)) [best, bestGain] = [id, gain];
        if (best < 0 || (round > 0 && bestGain / this.total < MIN_EXTRA_GAIN)) break;
        picks.push({ id: best, gain: bestGain / this.total });
        this.holders.forEach((ids, t) => ids.includes(best) && covered.add(t));
        coverage += bestGain / this.total;
      }
    }
    if (this.similarity) {
      // A semantic match stands for the whole sentence when it beats the lexical cover.
      let best = -1;
      let bestSim = coverage;
      this.plan.candidates.forEach((_, id) => {
        if (!ok(id)) return;
        const sim = this.similarity!(id);
        if (sim > bestSim) [best, bestSim] = [id, sim];
      });
      if (best >= 0) {
        picks.splice(0, picks.length, { id: best, gain: bestSim });
        coverage = bestSim;
      }
    }
    const found = this.spansOf(picks);
    // Numbers are held to the whole text of the supporting sources, not only to their spans.
    const missingNumber = this.numbers.some((t) => !this.holders[t]!.some((id) => found.sources.includes(this.plan.candidates[id]!.source)));
    return { coverage: Math.min(1, coverage), missingNumber, ...found };
  }

  /** One span per source: its first pick, joined with later picks close to it. */
  private spansOf(picks: { id: number; gain: number }[]): { sources: number[]; spans: SupportSpan[] } {
    const spans = new Map<number, SupportSpan>();
    for (const { id, gain } of picks) {
      const c = this.plan.candidates[id]!;
      const span = spans.get(c.source);
      if (!span) spans.set(c.source, { index: c.source, start: c.start, end: c.end, score: gain });
      else if (c.start - span.end <= JOIN_GAP && span.start - c.end <= JOIN_GAP) Object.assign(span, { start: Math.min(span.start, c.start), end: Math.max(span.end, c.end), score: span.score + gain });
    }
    const sources = [...spans.keys()].sort((a, b) => a - b);
    return { sources, spans: sources.map((s) => spans.get(s)!) };
  }
}
