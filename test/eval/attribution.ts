/**
 * `npm run eval:attribution [-- --model multilingual-e5-small --threads 2 --generate --embeddings]`
 *
 * Attribution quality on the bilingual set (test/fixtures/eval): for each answerable
 * question, the citations `/search` returns (top_k 5, hybrid), and the gold `answer` as the
 * answer text, attributed by `attributeAnswer`. A sentence counts as correct when it is
 * supported and attributed to a citation that really holds the question's evidence
 * (`isRelevant`, as in the retrieval eval). Reported per language: correct, attributed to
 * a wrong source, flagged unsupported; the retrieval ceiling (evidence in the top 5); and a
 * control, each question's citations against another question's answer (which they should
 * not support: the higher its unsupported share, the fewer false attributions).
 *
 * `--generate` also asks `/query` (the small chat model, temperature 0) and reports the
 * server's own attribution of the generated answers. `--embeddings` measures the optional
 * embedding similarity (the corpus's model, one embed call per question) beside the lexical
 * attribution, at the `--sim` calibrations given (`lo:hi` pairs, cosine mapped to 0–1).
 */
import { parseArgs } from "node:util";
import { attribute, attributionPlan, type AttributionOptions, type AttributionPlan } from "../../src-server/rag/answer/attribution.js";
import { testModel, type TestModelId } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";
import { isRelevant, loadEvalSet, type EvalQuestion } from "./retrieval-eval.js";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: "multilingual-e5-small" },
    threads: { type: "string", default: "2" },
    generate: { type: "boolean", default: false },
    embeddings: { type: "boolean", default: false },
    sim: { type: "string", default: "0.80:0.92,0.82:0.94,0.85:0.95" },
    thresholds: { type: "string", default: "0.3,0.4,0.5,0.6" },
    examples: { type: "string", default: "0" },
    failures: { type: "boolean", default: false },
  },
});

interface Hit {
  index: number;
  filename: string;
  text: string;
}

interface Case {
  q: EvalQuestion;
  hits: Hit[];
  /** Whether the evidence is among the hits at all (the ceiling of correct attribution). */
  retrievable: boolean;
}

interface Tally {
  sentences: number;
  /** Sentences of questions whose evidence was retrieved, and how many of them were attributed to it. */
  retrievable: number;
  correctRetrievable: number;
  correct: number;
  wrong: number;
  unsupported: number;
  /** Correct and the supporting span itself holds (part of) the evidence. */
  spanHit: number;
}

const tally = (): Tally => ({ sentences: 0, retrievable: 0, correctRetrievable: 0, correct: 0, wrong: 0, unsupported: 0, spanHit: 0 });
const normalize = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();
const holdsEvidence = (c: Case, hit: Hit | undefined) => hit !== undefined && hit.filename === c.q.doc && isRelevant(hit.text, c.q.evidence!);

/** The evidence and a span overlap: the span holds most of the evidence, or lies inside it. */
function spanHoldsEvidence(span: string, evidence: string): boolean {
  const s = normalize(span);
  return isRelevant(span, evidence) || (s.length >= 12 && normalize(evidence).includes(s));
}

function score(c: Case, plan: AttributionPlan, options: AttributionOptions, into: Tally): void {
  const sources = c.hits.map((h) => ({ index: h.index, text: h.text }));
  const result = attribute(plan, sources, options);
  for (const s of result.sentences) {
    into.sentences++;
    if (c.retrievable) into.retrievable++;
    if (!s.supported) {
      into.unsupported++;
      continue;
    }
    const good = s.citations.filter((n) => holdsEvidence(c, c.hits.find((h) => h.index === n)));
    if (good.length === 0) {
      into.wrong++;
      continue;
    }
    into.correct++;
    if (c.retrievable) into.correctRetrievable++;
    if (s.spans.some((x) => good.includes(x.index) && spanHoldsEvidence(c.hits.find((h) => h.index === x.index)!.text.slice(x.start, x.end), c.q.evidence!))) into.spanHit++;
  }
}

const pct = (n: number, d: number) => (d === 0 ? "n/a" : `${((100 * n) / d).toFixed(1)}`);
const GROUPS: [string, (q: EvalQuestion) => boolean][] = [
  ["en", (q) => q.lang === "en"],
  ["ms", (q) => q.lang === "ms"],
  ["cross-lingual", (q) => q.cross_lingual === true],
  ["all", () => true],
];

function table(title: string, cases: Case[], run: (c: Case, into: Tally, control: Tally) => void, spans = true): string {
  const rows = GROUPS.map(([name, pick]) => {
    const t = tally();
    const control = tally();
    const mine = cases.filter((c) => pick(c.q));
    for (const c of mine) run(c, t, control);
    const ceiling = mine.filter((c) => c.retrievable).length;
    return `| ${name} | ${mine.length} | ${t.sentences} | ${pct(t.correct, t.sentences)} | ${spans ? pct(t.spanHit, t.sentences) : "–"} | ${pct(t.wrong, t.sentences)} | ${pct(t.unsupported, t.sentences)} | ${pct(ceiling, mine.length)} | ${pct(t.correctRetrievable, t.retrievable)} | ${control.sentences ? pct(control.unsupported, control.sentences) : "–"} |`;
  });
  return [
    `#### ${title}`,
    "| questions | n | sentences | attributed to the evidence % | …and span on the evidence % | attributed elsewhere % | unsupported % | evidence retrieved % | attributed to the evidence when retrieved % | control: unsupported % |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Cosine similarities of each answer sentence with each candidate, from one embed call. */
async function similarities(t: TestServer, model: string, plan: AttributionPlan, prompt: string): Promise<number[][]> {
  const texts = [...plan.sentences.map((s) => s.content), ...plan.candidates.map((c) => c.text)];
  if (plan.sentences.length === 0 || plan.candidates.length === 0) return plan.sentences.map(() => []);
  const res = await t.call("POST", "/v1/embeddings", { model, input: texts.map((x) => prompt + x) });
  if (res.status !== 200) throw new Error(`embeddings failed: ${JSON.stringify(res.json)}`);
  const vectors = (res.json.data as { embedding: number[] }[]).map((d) => d.embedding);
  const unit = vectors.map((v) => {
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  });
  const n = plan.sentences.length;
  return plan.sentences.map((_, i) => plan.candidates.map((_, j) => unit[i]!.reduce((sum, x, k) => sum + x * unit[n + j]![k]!, 0)));
}

const modelName = args.model;
const threads = Number(args.threads);
const t = await startTestServer({
  bindings: { [modelName]: testModel(modelName as TestModelId), chat: testModel("smollm2-135m-instruct") },
  config: { engine: { threads }, chat: { contextSize: 4096, sequences: 1 } },
});
try {
  const { docs, questions } = loadEvalSet();
  const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "eval", embedding_model: modelName })).json;
  const uploaded = await upload(t, corpus.id, docs.map(evalDoc));
  if (uploaded.status !== 202) throw new Error(`upload failed: ${uploaded.status} ${JSON.stringify(uploaded.json)}`);
  const ready = await waitForStatus(t, corpus.id, 900_000);
  if (ready.document_counts.failed > 0) throw new Error(`${ready.document_counts.failed} eval documents failed to index`);
  const cases: Case[] = [];
  for (const q of questions.filter((x) => x.doc && x.evidence && x.answer)) {
    const res = await t.call("POST", `/v1/rag/corpora/${corpus.id}/search`, { query: q.question, top_k: 5 });
    if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.json)}`);
    const hits = (res.json.data as Hit[]).map((h) => ({ index: h.index, filename: h.filename, text: h.text }));
    cases.push({ q, hits, retrievable: hits.some((h) => h.filename === q.doc && isRelevant(h.text, q.evidence!)) });
  }
  const sources = (c: Case) => c.hits.map((h) => ({ index: h.index, text: h.text }));
  const other = (c: Case) => cases[(cases.indexOf(c) + 7) % cases.length]!.q.answer!;
  const out: string[] = [`### Attribution on the bilingual set: ${modelName}, ${ready.chunk_count} chunks, ${cases.length} answerable questions, top 5 hybrid`];

  for (const threshold of args.thresholds.split(",").map(Number)) {
    for (const strictNumbers of threshold === 0.5 ? [true, false] : [true]) {
      const options = { threshold, strictNumbers };
      out.push(
        table(`gold answers, lexical, threshold ${threshold}${strictNumbers ? "" : ", numbers not strict"}`, cases, (c, into, control) => {
          score(c, attributionPlan(c.q.answer!, sources(c)), options, into);
          score(c, attributionPlan(other(c), sources(c)), options, control);
        }),
      );
    }
  }

  if (args.failures) {
    // Gold answers whose evidence was retrieved but that were not attributed to it.
    for (const c of cases.filter((x) => x.retrievable)) {
      const t1 = tally();
      score(c, attributionPlan(c.q.answer!, sources(c)), {}, t1);
      if (t1.correct < t1.sentences) out.push(`missed ${c.q.id} (${c.q.lang}${c.q.cross_lingual ? ", cross-lingual" : ""}): answer ${JSON.stringify(c.q.answer)}; evidence ${JSON.stringify(c.q.evidence)}`);
    }
  }

  if (args.embeddings) {
    const prompt = corpus.embedding_prompts.query as string;
    const sims = new Map<Case, { gold: number[][]; control: number[][] }>();
    for (const c of cases) {
      sims.set(c, {
        gold: await similarities(t, modelName, attributionPlan(c.q.answer!, sources(c)), prompt),
        control: await similarities(t, modelName, attributionPlan(other(c), sources(c)), prompt),
      });
    }
    for (const spec of args.sim.split(",")) {
      const [lo, hi] = spec.split(":").map(Number) as [number, number];
      const map = (cos: number) => Math.max(0, Math.min(1, (cos - lo) / (hi - lo)));
      out.push(
        table(`gold answers, lexical + embeddings (cosine ${lo}→0, ${hi}→1)`, cases, (c, into, control) => {
          const s = sims.get(c)!;
          score(c, attributionPlan(c.q.answer!, sources(c)), { similarity: (i, j) => map(s.gold[i]![j]!) }, into);
          score(c, attributionPlan(other(c), sources(c)), { similarity: (i, j) => map(s.control[i]![j]!) }, control);
        }),
      );
    }
  }

  if (args.generate) {
    const started = Date.now();
    const generated = new Map<Case, any>();
    for (const c of cases) {
      const res = await t.call("POST", `/v1/rag/corpora/${corpus.id}/query`, { question: c.q.question, top_k: 5, model: "chat", temperature: 0, max_tokens: 80 });
      if (res.status !== 200) throw new Error(`query failed: ${JSON.stringify(res.json)}`);
      generated.set(c, res.json);
    }
    const seconds = (Date.now() - started) / 1000;
    out.push(
      table(`generated answers (smollm2-135m-instruct via /query, the server's attribution; ${seconds.toFixed(0)} s for ${cases.length} questions)`, cases, (c, into) => {
        const answer = generated.get(c)!;
        const hits = (answer.citations as Hit[]).map((h) => ({ index: h.index, filename: h.filename, text: h.text }));
        const retrievable = hits.some((h) => holdsEvidence(c, h));
        for (const s of answer.sentences as { citations: number[]; supported: boolean }[]) {
          into.sentences++;
          if (retrievable) into.retrievable++;
          if (!s.supported) into.unsupported++;
          else if (s.citations.some((n) => holdsEvidence(c, hits.find((h) => h.index === n)))) {
            into.correct++;
            if (retrievable) into.correctRetrievable++;
          } else into.wrong++;
        }
      }, false),
    );
    const grounded = [...generated.values()].filter((a) => a.grounded).length;
    const marked = [...generated.values()].filter((a) => /\[\d{1,3}\]/.test(a.answer)).length;
    out.push(`generated: ${grounded}/${cases.length} grounded, ${marked} with [n] markers`);
    for (const c of cases.slice(0, Number(args.examples))) {
      const answer = generated.get(c)!;
      const shown = (answer.sentences as { start: number; end: number; citations: number[]; supported: boolean }[]).map(
        (s) => `  ${s.supported ? `[${s.citations.join(",")}]` : "UNSUPPORTED"} ${JSON.stringify(answer.answer.slice(s.start, s.end))}`,
      );
      out.push([`${c.q.id} ${JSON.stringify(c.q.question)} (evidence in ${c.q.doc})`, ...shown].join("\n"));
    }
  }
  process.stdout.write(`${out.join("\n\n")}\n`);
} finally {
  await t.close();
}
