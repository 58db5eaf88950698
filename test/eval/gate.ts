/**
 * `npm run eval:gate [-- --judge gemma3-270m --judge qwen2.5-coder-1.5b --judge name=/path/model.gguf --data DIR]`
 *
 * The relevance gate on the bilingual set: every answerable question (test/fixtures/eval
 * questions.json) and every unanswerable one (questions without a document, plus
 * unanswerable.json's near misses and off-topic questions). Each is searched through the
 * real `/search` (hybrid, top_k 5, the corpus on multilingual-e5-small); the chat model
 * is then asked the judge prompt over the same sources (`scoreChoices`, the engine call
 * the server makes). The gate is fitted on one half of the questions (FNV parity of the
 * id) and measured on the other: the share of unanswerable questions refused and of
 * answerable ones refused, per judge, and for the evidence features alone.
 *
 * `--cache FILE` keeps the searched sources and judge scores between runs (refits are then
 * instant). `--verify JUDGE` afterwards asks `/query` itself for every held-out question,
 * with that judge's fitted gate configured, and counts `grounded: false` (the path
 * clients see; it must agree with the offline figures).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import { LlamaEngine } from "../../src-server/engine/llama-engine.js";
import type { ModelEntry } from "../../src-server/models/model-registry.js";
import { readGgufSummary } from "../../src-server/models/gguf-summary.js";
import { modelFingerprint, type RelevanceGateModel } from "../../src-server/rag/answer/relevance-gate.js";
import { judgeMessages, JUDGE_CHOICES } from "../../src-server/rag/answer/relevance-judge.js";
import { REPO_ROOT, testModel, type TestModelId } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";
import { fitGate, gateRates, inCalibrationHalf, type GateRow } from "./gate-fit.js";
import { loadEvalSet } from "./retrieval-eval.js";

const { values: args } = parseArgs({
  options: {
    judge: { type: "string", multiple: true, default: ["gemma3-270m", "smollm2-135m-instruct"] },
    data: { type: "string" },
    cache: { type: "string", default: path.join(REPO_ROOT, ".eval-cache", "gate.json") },
    threads: { type: "string", default: "2" },
    "max-refused": { type: "string", default: "0.05" },
    verify: { type: "string" },
  },
});

interface Source {
  index: number;
  filename: string;
  pageStart: number | null;
  pageEnd: number | null;
  headingPath: string[];
  text: string;
}

interface Cached {
  id: string;
  question: string;
  lang: string;
  answerable: boolean;
  kind: string | null;
  evidence: Record<string, number | null>;
  sources: Source[];
  /** Judge name → probability of "yes". */
  judge: Record<string, number>;
}

const EMBEDDER = "multilingual-e5-small";

/** The eval corpus on a server (reused with --data), with more models bound and more configuration when asked. */
async function withCorpus<T>(extra: { bindings?: Record<string, string>; config?: Record<string, unknown> }, use: (t: TestServer, corpusId: string) => Promise<T>): Promise<T> {
  const { docs } = loadEvalSet();
  const dataDir = args.data ? path.join(args.data, EMBEDDER) : undefined;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const t = await startTestServer({
    bindings: { [EMBEDDER]: testModel(EMBEDDER), ...extra.bindings },
    config: { engine: { threads: Number(args.threads) }, chat: { contextSize: 4096, sequences: 1 }, ...extra.config },
    ...(dataDir ? { dataDir } : {}),
  });
  try {
    // The same corpus the retrieval eval builds (and reuses with --data).
    const name = `eval ${EMBEDDER} semantic ${docs.length}`;
    const existing = ((await t.call("GET", "/v1/rag/corpora?limit=100")).json.data as { id: string; name: string; status: string }[]).find((c) => c.name === name && c.status === "ready");
    const corpus = existing ?? (await t.call("POST", "/v1/rag/corpora", { name, embedding_model: EMBEDDER, chunking: "semantic" })).json;
    if (!existing) await upload(t, corpus.id, docs.map(evalDoc));
    await waitForStatus(t, corpus.id, 600_000);
    return await use(t, corpus.id);
  } finally {
    await t.close();
  }
}

async function searchAll(): Promise<Cached[]> {
  const { questions, unanswerable } = loadEvalSet();
  return withCorpus({}, async (t, corpusId) => {
    const rows: Cached[] = [];
    for (const q of [...questions, ...unanswerable]) {
      const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: q.question, top_k: 5 });
      if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.json)}`);
      const hits = res.json.data as { filename: string; page_start: number | null; page_end: number | null; heading_path: string[]; text: string }[];
      rows.push({
        id: q.id,
        question: q.question,
        lang: q.lang,
        answerable: q.doc !== null,
        kind: "kind" in q ? (q.kind as string) : q.doc ? null : "original",
        evidence: res.json.evidence,
        sources: hits.map((h, i) => ({ index: i + 1, filename: h.filename, pageStart: h.page_start, pageEnd: h.page_end, headingPath: h.heading_path, text: h.text })),
        judge: {},
      });
    }
    return rows;
  });
}

/** A judge: a test model's id (`qwen2.5-coder-1.5b` is the strongest), or `NAME=/path/to/model.gguf`. */
function judgeEntry(spec: string): { name: string; file: string; entry: ModelEntry } {
  const [name, file] = spec.includes("=") ? (spec.split("=", 2) as [string, string]) : [spec, testModel(spec as TestModelId)];
  if (!existsSync(file)) throw new Error(`judge model file not found: ${file}`);
  return { name, file, entry: { id: name, type: "chat", gguf: { path: file } } as unknown as ModelEntry };
}

/** Judges each question with each judge in turn; the cache is written after every judge, so a long run keeps what finished. */
async function judgeAll(rows: Cached[], specs: string[], save: () => void): Promise<void> {
  const engine = new LlamaEngine({ gpu: "cpu", threads: Number(args.threads), idleUnloadSeconds: 0, chat: { contextSize: 4096, sequences: 1, maxQueued: 8, promptCache: true }, embeddings: { contexts: 1 }, rerank: { contexts: 1 } }, pino({ level: "silent" }));
  try {
    for (const spec of specs) {
      const { name, entry } = judgeEntry(spec);
      const todo = rows.filter((r) => r.judge[name] === undefined);
      const started = Date.now();
      let tokens = 0;
      for (const row of todo) {
        const scored = await engine.scoreChoices(entry, judgeMessages(row.question, row.sources), [...JUDGE_CHOICES], new AbortController().signal);
        row.judge[name] = scored.probabilities[0]!;
        tokens += scored.promptTokens;
      }
      if (todo.length) process.stderr.write(`judge ${name}: ${todo.length} questions in ${((Date.now() - started) / 1000).toFixed(0)} s (${(tokens / todo.length).toFixed(0)} prompt tokens each)\n`);
      save();
    }
  } finally {
    await engine.close();
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

const cacheFile = args.cache;
let rows: Cached[] = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : [];
if (rows.length === 0) rows = await searchAll();
mkdirSync(path.dirname(cacheFile), { recursive: true });
const saveCache = () => writeFileSync(cacheFile, JSON.stringify(rows));
saveCache();
await judgeAll(rows, args.judge, saveCache);

const maxRefused = Number(args["max-refused"]);
const calibration = rows.filter((r) => inCalibrationHalf(r.id));
const heldOut = rows.filter((r) => !inCalibrationHalf(r.id));
const count = (xs: Cached[]) => `${xs.filter((r) => r.answerable).length} answerable + ${xs.filter((r) => !r.answerable).length} unanswerable`;
process.stdout.write(`calibration: ${count(calibration)}; held out: ${count(heldOut)}; answerable refused at most ${pct(maxRefused)} on calibration\n\n`);
process.stdout.write("| gate | held-out unanswerable refused | held-out answerable refused | near miss refused | off topic refused | calibration unanswerable / answerable refused |\n|---|---|---|---|---|---|\n");
const fingerprint = async (file: string) => modelFingerprint(await readGgufSummary(file));
const embedderPrint = await fingerprint(testModel(EMBEDDER));
const fitted: Record<string, RelevanceGateModel> = {};
const asRows = (xs: Cached[], judge: string | null): GateRow[] => xs.map((r) => ({ id: r.id, answerable: r.answerable, kind: r.kind, evidence: r.evidence, judge: judge ? r.judge[judge]! : null }));
// A judge earns its place (and its prompt evaluation per question) only when, on the
// calibration half, judge + evidence refuses more unanswerable questions than the evidence
// alone within the same budget, with a positive weight; otherwise the pair's gate is the evidence-only one, which
// never asks the chat model. Decided on the calibration half only.
let evidenceOnly: { model: RelevanceGateModel; refused: number } | null = null;
for (const judge of [null, ...args.judge.map((s) => judgeEntry(s).name)]) {
  const variants = judge ? (["judge only", "judge + evidence"] as const) : (["evidence only"] as const);
  for (const variant of variants) {
    const model = fitGate(asRows(calibration, judge), { maxRefusedAnswerable: maxRefused, judgeOnly: variant === "judge only" });
    const held = gateRates(asRows(heldOut, judge), model);
    const cal = gateRates(asRows(calibration, judge), model);
    process.stdout.write(`| ${judge ? `${judge}: ${variant}` : variant} | ${pct(held.refusedUnanswerable)} | ${pct(held.refusedAnswerable)} | ${pct(held.byKind.near_miss ?? NaN)} | ${pct(held.byKind.off_topic ?? NaN)} | ${pct(cal.refusedUnanswerable)} / ${pct(cal.refusedAnswerable)} |\n`);
    if (variant === "judge only") continue;
    if (!judge) {
      evidenceOnly = { model, refused: cal.refusedUnanswerable };
      fitted[`${embedderPrint}|*`] = model;
      continue;
    }
    // …and only a judge whose "yes" counts for answering (a negative weight is a fit to noise).
    const judgeEarns = cal.refusedUnanswerable > evidenceOnly!.refused && (model.weights.judge ?? 0) > 0;
    fitted[`${embedderPrint}|${await fingerprint(judgeEntry(args.judge.find((s) => judgeEntry(s).name === judge)!).file)}`] = judgeEarns ? model : evidenceOnly!.model;
    process.stdout.write(`|   → built in for ${judge}: ${judgeEarns ? "judge + evidence" : "evidence only (the judge added nothing on the calibration half; it is not asked)"} | | | | | |\n`);
  }
}

// The gates fitted on the calibration half, keyed as `BUILT_IN_GATES` and `rag.relevanceGates` take them.
process.stdout.write(`\nFitted gates (calibration half):\n${JSON.stringify(fitted, null, 2)}\n`);

if (args.verify) {
  const { name, file } = judgeEntry(args.judge.find((spec) => judgeEntry(spec).name === args.verify) ?? args.verify);
  const gate = fitted[`${embedderPrint}|${await fingerprint(file)}`];
  const tally = await withCorpus({ bindings: { [name]: file }, config: { rag: { relevanceJudge: true, relevanceGates: { [`${EMBEDDER}|${name}`]: gate } } } }, async (t, corpusId) => {
    const out = { answerable: 0, answerableRefused: 0, unanswerable: 0, unanswerableRefused: 0, disagreements: 0 };
    for (const row of heldOut) {
      const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: row.question, top_k: 5, model: name, max_tokens: 1 });
      if (res.status !== 200) throw new Error(`query failed: ${JSON.stringify(res.json)}`);
      const refused = res.json.grounded === false;
      if (row.answerable) {
        out.answerable++;
        if (refused) out.answerableRefused++;
      } else {
        out.unanswerable++;
        if (refused) out.unanswerableRefused++;
      }
      if (res.json.relevance.judge !== null && Math.abs(res.json.relevance.judge - row.judge[name]!) > 0.02) out.disagreements++;
    }
    return out;
  });
  process.stdout.write(`\nThrough /query with the fitted ${name} gate (held-out half): unanswerable refused ${pct(tally.unanswerableRefused / tally.unanswerable)}, answerable refused ${pct(tally.answerableRefused / tally.answerable)}; judge probabilities differing from the offline run by more than 0.02: ${tally.disagreements}\n`);
}
