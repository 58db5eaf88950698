/**
 * `npm run eval:gate [-- --judge gemma3-270m --judge qwen=/path/model.gguf --data DIR]`
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
 * instant). `--verify` afterwards asks `/query` itself with the fitted gate configured and
 * counts `grounded: false` on the held-out half (the path clients see).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import { LlamaEngine } from "../../src-server/engine/llama-engine.js";
import type { ModelEntry } from "../../src-server/models/model-registry.js";
import { readGgufSummary } from "../../src-server/models/gguf-summary.js";
import { modelFingerprint } from "../../src-server/rag/answer/relevance-gate.js";
import { judgeMessages, JUDGE_CHOICES } from "../../src-server/rag/answer/relevance-judge.js";
import { REPO_ROOT, testModel, type TestModelId } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer } from "../helpers/test-server.js";
import { fitGate, gateRates, inCalibrationHalf, type GateRow } from "./gate-fit.js";
import { loadEvalSet } from "./retrieval-eval.js";

const { values: args } = parseArgs({
  options: {
    judge: { type: "string", multiple: true, default: ["gemma3-270m", "smollm2-135m-instruct"] },
    data: { type: "string" },
    cache: { type: "string", default: path.join(REPO_ROOT, ".eval-cache", "gate.json") },
    threads: { type: "string", default: "2" },
    "max-refused": { type: "string", default: "0.05" },
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
  lang: string;
  answerable: boolean;
  kind: string | null;
  evidence: Record<string, number | null>;
  sources: Source[];
  /** Judge name → probability of "yes". */
  judge: Record<string, number>;
}

const EMBEDDER = "multilingual-e5-small";

async function searchAll(): Promise<Cached[]> {
  const { docs, questions, unanswerable } = loadEvalSet();
  const dataDir = args.data ? path.join(args.data, EMBEDDER) : undefined;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const t = await startTestServer({ bindings: { [EMBEDDER]: testModel(EMBEDDER) }, config: { engine: { threads: Number(args.threads) } }, ...(dataDir ? { dataDir } : {}) });
  try {
    // The same corpus the retrieval eval builds (and reuses with --data).
    const name = `eval ${EMBEDDER} semantic ${docs.length}`;
    const existing = ((await t.call("GET", "/v1/rag/corpora?limit=100")).json.data as { id: string; name: string; status: string }[]).find((c) => c.name === name && c.status === "ready");
    const corpus = existing ?? (await t.call("POST", "/v1/rag/corpora", { name, embedding_model: EMBEDDER, chunking: "semantic" })).json;
    if (!existing) await upload(t, corpus.id, docs.map(evalDoc));
    await waitForStatus(t, corpus.id, 600_000);
    const rows: Cached[] = [];
    for (const q of [...questions, ...unanswerable]) {
      const res = await t.call("POST", `/v1/rag/corpora/${corpus.id}/search`, { query: q.question, top_k: 5 });
      if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(res.json)}`);
      const hits = res.json.data as { filename: string; page_start: number | null; page_end: number | null; heading_path: string[]; text: string }[];
      rows.push({
        id: q.id,
        lang: q.lang,
        answerable: q.doc !== null,
        kind: "kind" in q ? (q.kind as string) : q.doc ? null : "original",
        evidence: res.json.evidence,
        sources: hits.map((h, i) => ({ index: i + 1, filename: h.filename, pageStart: h.page_start, pageEnd: h.page_end, headingPath: h.heading_path, text: h.text })),
        judge: {},
      });
      (rows.at(-1) as Cached & { question: string }).question = q.question;
    }
    return rows;
  } finally {
    await t.close();
  }
}

function judgeEntry(spec: string): { name: string; file: string; entry: ModelEntry } {
  const [name, file] = spec.includes("=") ? (spec.split("=", 2) as [string, string]) : [spec, testModel(spec as TestModelId)];
  if (!existsSync(file)) throw new Error(`judge model file not found: ${file}`);
  return { name, file, entry: { id: name, type: "chat", gguf: { path: file } } as unknown as ModelEntry };
}

async function judgeAll(rows: (Cached & { question?: string })[], specs: string[]): Promise<void> {
  const engine = new LlamaEngine({ gpu: "cpu", threads: Number(args.threads), idleUnloadSeconds: 0, chat: { contextSize: 4096, sequences: 1, maxQueued: 8 }, embeddings: { contexts: 1 }, rerank: { contexts: 1 } }, pino({ level: "silent" }));
  try {
    for (const spec of specs) {
      const { name, entry } = judgeEntry(spec);
      const todo = rows.filter((r) => r.judge[name] === undefined);
      const started = Date.now();
      let tokens = 0;
      for (const row of todo) {
        const scored = await engine.scoreChoices(entry, judgeMessages(row.question!, row.sources), [...JUDGE_CHOICES], new AbortController().signal);
        row.judge[name] = scored.probabilities[0]!;
        tokens += scored.promptTokens;
      }
      if (todo.length) process.stderr.write(`judge ${name}: ${todo.length} questions in ${((Date.now() - started) / 1000).toFixed(0)} s (${(tokens / todo.length).toFixed(0)} prompt tokens each)\n`);
    }
  } finally {
    await engine.close();
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

const cacheFile = args.cache!;
let rows: (Cached & { question?: string })[] = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : [];
if (rows.length === 0) rows = await searchAll();
mkdirSync(path.dirname(cacheFile), { recursive: true });
writeFileSync(cacheFile, JSON.stringify(rows));
await judgeAll(rows, args.judge!);
writeFileSync(cacheFile, JSON.stringify(rows));

const maxRefused = Number(args["max-refused"]);
const calibration = rows.filter((r) => inCalibrationHalf(r.id));
const heldOut = rows.filter((r) => !inCalibrationHalf(r.id));
const count = (xs: Cached[]) => `${xs.filter((r) => r.answerable).length} answerable + ${xs.filter((r) => !r.answerable).length} unanswerable`;
process.stdout.write(`calibration: ${count(calibration)}; held out: ${count(heldOut)}; answerable refused at most ${pct(maxRefused)} on calibration\n\n`);
process.stdout.write("| gate | held-out unanswerable refused | held-out answerable refused | near miss refused | off topic refused | calibration unanswerable / answerable refused |\n|---|---|---|---|---|---|\n");
const fingerprint = async (file: string) => modelFingerprint(await readGgufSummary(file));
const embedderPrint = await fingerprint(testModel(EMBEDDER));
const fitted: Record<string, unknown> = {};
const asRows = (xs: Cached[], judge: string | null): GateRow[] => xs.map((r) => ({ id: r.id, answerable: r.answerable, kind: r.kind, evidence: r.evidence, judge: judge ? r.judge[judge]! : null }));
for (const judge of [null, ...args.judge!.map((s) => judgeEntry(s).name)]) {
  const variants = judge ? (["judge only", "judge + evidence"] as const) : (["evidence only"] as const);
  for (const variant of variants) {
    const model = fitGate(asRows(calibration, judge), { maxRefusedAnswerable: maxRefused, judgeOnly: variant === "judge only" });
    const held = gateRates(asRows(heldOut, judge), model);
    const cal = gateRates(asRows(calibration, judge), model);
    process.stdout.write(`| ${judge ? `${judge}: ${variant}` : variant} | ${pct(held.refusedUnanswerable)} | ${pct(held.refusedAnswerable)} | ${pct(held.byKind.near_miss ?? NaN)} | ${pct(held.byKind.off_topic ?? NaN)} | ${pct(cal.refusedUnanswerable)} / ${pct(cal.refusedAnswerable)} |\n`);
    if (variant !== "judge only") fitted[`${embedderPrint}|${judge ? await fingerprint(judgeEntry(args.judge!.find((s) => judgeEntry(s).name === judge)!).file) : "*"}`] = model;
  }
}

// The gates fitted on the calibration half, keyed as `BUILT_IN_GATES` and `rag.relevanceGates` take them.
process.stdout.write(`\nFitted gates (calibration half):\n${JSON.stringify(fitted, null, 2)}\n`);
