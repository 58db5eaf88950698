/**
 * Retrieval quality on the project's bilingual set (test/fixtures/eval): recall@5 and
 * nDCG@10 for vector, keyword and hybrid search, with a real embedding model, through
 * the HTTP API. A chunk is relevant when it holds the question's evidence span (or most
 * of it, when a chunk boundary cuts the span).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer } from "../helpers/test-server.js";

export interface EvalQuestion {
  id: string;
  lang: "en" | "ms";
  question: string;
  doc: string | null;
  evidence: string | null;
  answer?: string;
  cross_lingual?: boolean;
}

export type Mode = "vector" | "keyword" | "hybrid";

export interface QuestionEvidence {
  id: string;
  lang: "en" | "ms";
  answerable: boolean;
  /** Unanswerable questions: `near_miss` (the corpus's topics, not its facts) or `off_topic`. */
  kind: string | null;
  evidence: Record<string, number | null>;
}

export interface ModeScore {
  /** The search mode, or a hybrid variant's label (`hybrid dbsf w=0.5`). */
  mode: string;
  recallAt5: number;
  ndcgAt10: number;
  byGroup: Record<string, { n: number; recallAt5: number; ndcgAt10: number }>;
}

export interface EvalResult {
  model: string;
  chunking: string;
  documents: number;
  chunks: number;
  questions: number;
  scores: ModeScore[];
  /** Vector similarities of the best and the 10th hit, for answerable vs unanswerable questions (relevance gate tuning). */
  gate: { answerable: [number, number][]; unanswerable: [number, number][] };
  /** The relevance evidence of every question (answerable and not) under the default hybrid search. */
  evidence: QuestionEvidence[];
  indexSeconds: number;
  /** With `tune`: what `POST …/search/tune` answered for the fitting half. */
  tuned?: Record<string, unknown>;
}

const EVAL_DIR = path.join(REPO_ROOT, "test", "fixtures", "eval");
const normalize = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/** Relevant: the chunk holds the evidence, or at least its first or last 60%. */
export function isRelevant(chunkText: string, evidence: string): boolean {
  const chunk = normalize(chunkText);
  const ev = normalize(evidence);
  if (chunk.includes(ev)) return true;
  const part = Math.ceil(ev.length * 0.6);
  return chunk.includes(ev.slice(0, part)) || chunk.includes(ev.slice(ev.length - part));
}

export function loadEvalSet(): { docs: string[]; questions: EvalQuestion[]; unanswerable: (EvalQuestion & { kind: string })[] } {
  const docs = readdirSync(path.join(EVAL_DIR, "docs")).sort();
  const questions = JSON.parse(readFileSync(path.join(EVAL_DIR, "questions.json"), "utf8")) as EvalQuestion[];
  const unanswerable = JSON.parse(readFileSync(path.join(EVAL_DIR, "unanswerable.json"), "utf8")) as (EvalQuestion & { kind: string })[];
  return { docs, questions, unanswerable };
}

/** A hybrid search with another fusion, measured beside the three modes. */
export interface HybridVariant {
  label: string;
  fusion: { method?: "convex" | "dbsf" | "rrf"; vector_weight?: number; keyword_trust?: "auto" | "squared" | "linear" | "language" | "fixed" };
}

/**
 * `tune`: the corpus's search is tuned (`POST …/search/tune`) on the even-numbered
 * answerable questions, and every mode, plus `tuned` (the best setting stored as the
 * corpus's), is measured on the odd-numbered ones only.
 */
export async function runRetrievalEval(options: { modelPath: string; modelName: string; chunking?: string; variants?: HybridVariant[]; dataDir?: string; tune?: boolean }): Promise<EvalResult> {
  const { docs, questions, unanswerable } = loadEvalSet();
  const t = await startTestServer({ bindings: { [options.modelName]: options.modelPath }, config: { engine: { threads: 2 } }, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  try {
    // With a kept data directory, a corpus indexed by an earlier run is reused (retrieval changes measured without re-embedding).
    const name = `eval ${options.modelName} ${options.chunking ?? "semantic"} ${docs.length}`;
    const existing = options.dataDir ? ((await t.call("GET", "/v1/rag/corpora?limit=100")).json.data as { id: string; name: string; status: string }[]).find((c) => c.name === name && c.status === "ready") : undefined;
    const corpus = existing ?? (await t.call("POST", "/v1/rag/corpora", { name, embedding_model: options.modelName, chunking: options.chunking ?? "semantic" })).json;
    const started = Date.now();
    if (!existing) {
      const uploaded = await upload(t, corpus.id, docs.map(evalDoc));
      if (uploaded.status !== 202) throw new Error(`upload failed: ${uploaded.status} ${JSON.stringify(uploaded.json)}`);
    }
    const ready = await waitForStatus(t, corpus.id, 600_000);
    const indexSeconds = existing ? Number.NaN : (Date.now() - started) / 1000;
    if (ready.document_counts.failed > 0) throw new Error(`${ready.document_counts.failed} eval documents failed to index`);
    let answerable = questions.filter((q) => q.doc && q.evidence);
    let measured = questions;
    await t.call("PATCH", `/v1/rag/corpora/${corpus.id}`, { search_defaults: null });
    let tuned: Record<string, unknown> | null = null;
    if (options.tune) {
      const fit = answerable.filter((_, i) => i % 2 === 0);
      const res = await t.call("POST", `/v1/rag/corpora/${corpus.id}/search/tune`, { questions: fit.map((q) => ({ question: q.question, relevant: [q.doc] })) });
      if (res.status !== 200) throw new Error(`tuning failed: ${JSON.stringify(res.json)}`);
      tuned = res.json;
      answerable = answerable.filter((_, i) => i % 2 === 1);
      measured = questions.filter((q) => !fit.includes(q));
    }
    const scores: ModeScore[] = [];
    const gate = { answerable: [] as [number, number][], unanswerable: [] as [number, number][] };
    const runs: { mode: string; body: Record<string, unknown> }[] = [
      ...(["vector", "keyword", "hybrid"] as Mode[]).map((mode) => ({ mode, body: { search: mode } })),
      ...(options.variants ?? []).map((v) => ({ mode: v.label, body: { search: "hybrid", fusion: v.fusion } })),
      ...(tuned ? [{ mode: "tuned", body: {} }] : []),
    ];
    for (const { mode, body } of runs) {
      if (mode === "tuned") {
        const best = tuned!.best as { search: string; fusion: unknown };
        await t.call("PATCH", `/v1/rag/corpora/${corpus.id}`, { search_defaults: { search: best.search, ...(best.fusion ? { fusion: best.fusion } : {}) } });
      }
      const perQuestion: { q: EvalQuestion; recall: number; ndcg: number }[] = [];
      for (const q of measured) {
        const res = await t.call("POST", `/v1/rag/corpora/${corpus.id}/search`, { query: q.question, top_k: 10, ...body });
        if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.json)}`);
        if (mode === "vector") {
          const scores = (res.json.data as { score: number }[]).map((h) => h.score);
          (q.doc ? gate.answerable : gate.unanswerable).push([scores[0] ?? -1, scores.at(-1) ?? -1]);
        }
        if (!q.doc || !q.evidence) continue;
        const hits = res.json.data as { filename: string; text: string }[];
        const rank = hits.findIndex((h) => h.filename === q.doc && isRelevant(h.text, q.evidence!));
        perQuestion.push({ q, recall: rank >= 0 && rank < 5 ? 1 : 0, ndcg: rank >= 0 ? 1 / Math.log2(rank + 2) : 0 });
      }
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
      const group = (name: string, pick: (q: EvalQuestion) => boolean) => {
        const rows = perQuestion.filter((r) => pick(r.q));
        return [name, { n: rows.length, recallAt5: mean(rows.map((r) => r.recall)), ndcgAt10: mean(rows.map((r) => r.ndcg)) }] as const;
      };
      scores.push({
        mode,
        recallAt5: mean(perQuestion.map((r) => r.recall)),
        ndcgAt10: mean(perQuestion.map((r) => r.ndcg)),
        byGroup: Object.fromEntries([group("en", (q) => q.lang === "en"), group("ms", (q) => q.lang === "ms"), group("cross-lingual", (q) => q.cross_lingual === true)]),
      });
    }
    const evidence: QuestionEvidence[] = [];
    for (const q of [...questions, ...unanswerable]) {
      const res = await t.call("POST", `/v1/rag/corpora/${corpus.id}/search`, { query: q.question, top_k: 5 });
      if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.json)}`);
      evidence.push({ id: q.id, lang: q.lang, answerable: q.doc !== null, kind: "kind" in q ? (q.kind as string) : q.doc ? null : "original", evidence: res.json.evidence });
    }
    if (tuned) await t.call("PATCH", `/v1/rag/corpora/${corpus.id}`, { search_defaults: null });
    return { model: options.modelName, chunking: options.chunking ?? "semantic", documents: docs.length, chunks: ready.chunk_count, questions: answerable.length, scores, gate, evidence, indexSeconds, ...(tuned ? { tuned } : {}) };
  } finally {
    await t.close();
  }
}

export function formatEval(result: EvalResult): string {
  const pct = (x: number) => (Number.isFinite(x) ? (x * 100).toFixed(1) : "n/a");
  const lines = [
    `### ${result.model}, ${result.chunking} chunking: ${result.documents} documents, ${result.chunks} chunks, ${result.questions} answerable questions (indexed in ${result.indexSeconds.toFixed(1)} s)`,
    "| mode | recall@5 | nDCG@10 | EN recall@5 | MS recall@5 | cross-lingual recall@5 |",
    "|---|---|---|---|---|---|",
    ...result.scores.map((s) => `| ${s.mode} | ${pct(s.recallAt5)} | ${pct(s.ndcgAt10)} | ${pct(s.byGroup.en!.recallAt5)} | ${pct(s.byGroup.ms!.recallAt5)} | ${pct(s.byGroup["cross-lingual"]!.recallAt5)} (n=${s.byGroup["cross-lingual"]!.n}) |`),
  ];
  if (result.tuned) {
    const { best, held_out: heldOut } = result.tuned as { best: unknown; held_out: unknown };
    lines.push(`\nTuned on the even-numbered answerable questions, measured on the ${result.questions} odd-numbered ones: best ${JSON.stringify(best)}; cross-validated within the fitting half ${JSON.stringify(heldOut)}`);
  }
  const describe = (pairs: [number, number][]) => {
    const best = pairs.map((p) => p[0]).sort((a, b) => a - b);
    const gap = pairs.map((p) => p[0] - p[1]).sort((a, b) => a - b);
    const q = (xs: number[], f: number) => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))]!.toFixed(3);
    return `best similarity min/p10/median ${q(best, 0)}/${q(best, 0.1)}/${q(best, 0.5)}; best-minus-10th min/p10/median ${q(gap, 0)}/${q(gap, 0.1)}/${q(gap, 0.5)}`;
  };
  lines.push(`\nRelevance gate data — answerable: ${describe(result.gate.answerable)}`);
  lines.push(`unanswerable: ${describe(result.gate.unanswerable)} (all: ${result.gate.unanswerable.map((p) => `${p[0].toFixed(3)}/${(p[0] - p[1]).toFixed(3)}`).join(" ")})`);
  return lines.join("\n");
}

/** Hybrid must not lose to the better of vector and keyword (a small tolerance for ties). */
export function hybridHolds(result: EvalResult, tolerance = 0.005): boolean {
  const by = Object.fromEntries(result.scores.map((s) => [s.mode, s]));
  const best = Math.max(by.vector!.ndcgAt10, by.keyword!.ndcgAt10);
  const bestRecall = Math.max(by.vector!.recallAt5, by.keyword!.recallAt5);
  return by.hybrid!.ndcgAt10 >= best - tolerance && by.hybrid!.recallAt5 >= bestRecall - tolerance;
}
