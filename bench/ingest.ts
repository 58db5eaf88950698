/**
 * `node --import tsx bench/ingest.ts [--set scifact|vaswani|mbox] [--docs N] [--rounds N] [--model multilingual-e5-small|all-minilm-l6-v2]
 *   [--chunking semantic|paragraph|fixed] [--upload-batch N] [--paths reference,pipelined] [--config JSON]
 *   [--contexts N] [--skip-probe | --probe-only]`
 *
 * Many small documents (issue 34): SciFact's abstracts (../shared/evalsets/scifact, or `--set vaswani`: Vaswani's short ones, as
 * test/eval/beir.ts uploads them: title line, blank line, abstract, as `.txt`; or `--set mbox`:
 * one mailbox of `--docs` messages (default 5,000), Vaswani's abstracts as their bodies, each
 * message indexed as its own document) uploaded
 * through the HTTP API into a fresh server, indexed by today's one-document-at-a-time path
 * (`rag.indexing.batchDocuments: 1`, the reference) and by the pipelined one (the
 * defaults: parse ahead, embed several documents' passages in one batch, commit in
 * groups), in the same run. Each path runs in a server process of its own (a fresh data
 * folder, one llama.cpp thread as every benchmark), so its peak RSS (VmHWM) is its own;
 * with several rounds the order alternates (pairs). Prints a table and writes JSON and
 * Markdown to bench/results/ingest-<time>.{json,md}.
 *
 * `--contexts N` gives both paths N embedding contexts of one llama.cpp thread each (N
 * threads in all): what a second core does for each path.
 *
 * Then (unless `--skip-probe`) what one llama.cpp evaluation costs per passage with 1, 2,
 * 4, 8 and 16 passages in it (one thread, the set's passages cut to 128 and to 32 tokens,
 * best of five): how much embedding several documents' passages together can save at all.
 *
 * Time is from the first upload request to the corpus settling (every document indexed or
 * failed); uploads of `--upload-batch` files go in one after the other while indexing runs,
 * as a client would send them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT, testModel, type TestModelId } from "../test/helpers/models.js";
import { collectEvents } from "../test/helpers/rag.js";
import { median } from "./lib.js";

const { values: args } = parseArgs({
  options: {
    set: { type: "string", default: "scifact" },
    docs: { type: "string" },
    rounds: { type: "string", default: "1" },
    model: { type: "string", default: "multilingual-e5-small" },
    chunking: { type: "string", default: "semantic" },
    "upload-batch": { type: "string", default: "100" },
    paths: { type: "string", default: "reference,pipelined" },
    /** Extra `rag.indexing` settings of the pipelined path, as JSON (to measure depths and group sizes). */
    config: { type: "string", default: "{}" },
    contexts: { type: "string", default: "1" },
    "skip-probe": { type: "boolean", default: false },
    /** Only the probe (what one evaluation costs), no ingestion. */
    "probe-only": { type: "boolean", default: false },
  },
});

const KEY = "psk-bench-ingest-key-000000000";
/** SciFact's 5,183 abstracts (two or three passages each), or Vaswani's 11,429 short abstracts (one passage each: a mailbox's messages are as short). */
const SETS: Record<string, string> = {
  scifact: path.resolve(REPO_ROOT, "..", "shared", "evalsets", "scifact", "corpus.jsonl"),
  vaswani: path.resolve(REPO_ROOT, "..", "shared", "evalsets", "vaswani", "corpus.jsonl"),
};
const MBOX = args.set === "mbox";
const setFile = SETS[MBOX ? "vaswani" : args.set];
if (!setFile) throw new Error(`--set: scifact, vaswani or mbox, not '${args.set}'`);
const SET: string = setFile;
/** Embedding contexts, each with one llama.cpp thread. */
const CONTEXTS = Number(args.contexts);
const THREADS = CONTEXTS;

type PathName = "reference" | "pipelined";
const PATHS: Record<PathName, Record<string, unknown>> = {
  reference: { batchDocuments: 1 },
  pipelined: JSON.parse(args.config) as Record<string, unknown>,
};

interface Run {
  path: PathName;
  round: number;
  documents: number;
  indexed: number;
  failed: number;
  chunks: number;
  seconds: number;
  documentsPerSecond: number;
  chunksPerSecond: number;
  peakRssMb: number;
  /** Sums of the per-document timings the status events carry (ms; shared among a group's documents for embedding and storing). */
  split: { parse: number; chunk: number; embed: number; store: number };
  /** Tokens the embedding model evaluated (passages with their context line and prompt). */
  embedTokens: number;
}

function abstracts(limit: number | undefined): { name: string; text: string }[] {
  const docs = readFileSync(SET, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { _id: string; title?: string; text: string });
  return docs.slice(0, limit ?? docs.length).map((d) => ({ name: `${d._id}.txt`, text: d.title ? `${d.title}\n\n${d.text}` : d.text }));
}

/**
 * One mailbox (mboxrd) holding `docs` as messages: sender, recipient, subject (the first
 * words), a date a minute apart, a message id; the body the abstract.
 */
function mailbox(docs: { name: string; text: string }[]): { name: string; text: string } {
  const start = Date.UTC(2024, 0, 2, 8, 0, 0);
  const messages = docs.map((d, i) => {
    const date = new Date(start + i * 60_000);
    const asctime = date.toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) (\S+) GMT$/, (_m, day: string, dd: string, mon: string, yyyy: string, time: string) => `${day} ${mon} ${dd.padStart(2, " ")} ${time} ${yyyy}`);
    const body = d.text.replace(/^(>*From )/gm, ">$1");
    const subject = d.text.split(/\s+/).slice(0, 8).join(" ");
    return `From analyst${i % 37}@example.org ${asctime}\nFrom: Analyst ${i % 37} <analyst${i % 37}@example.org>\nTo: desk@example.org\nSubject: ${subject}\nDate: ${date.toUTCString()}\nMessage-ID: <${i}.${d.name}@bench.example.org>\nContent-Type: text/plain; charset=utf-8\n\n${body}\n`;
  });
  return { name: "archive.mbox", text: messages.join("\n") };
}

/** Peak resident memory of a process so far (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

async function serve(dataDir: string, indexing: Record<string, unknown>): Promise<{ child: ChildProcess; url: string }> {
  const config = path.join(dataDir, "bench-config.json");
  writeFileSync(config, JSON.stringify({ rateLimits: { defaultTier: "unlimited" }, embeddings: { contexts: CONTEXTS }, rag: { maxFilesPerUpload: 1000, relevanceJudge: false, indexing } }));
  // The server itself, not a supervisor: its VmHWM is what indexing cost.
  const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts"), "serve", "--no-supervise", "--port", "0", "--threads", String(THREADS), "--log-level", "warn", "--data-dir", dataDir, "--config", config, "--model", `embed=${testModel(args.model as TestModelId)}`], {
    cwd: REPO_ROOT,
    env: { ...process.env, PUSTAKA_API_KEY: KEY },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  child.removeAllListeners("exit");
  return { child, url };
}

async function run(name: PathName, round: number, docs: { name: string; text: string }[]): Promise<Run> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `pustaka-bench-ingest-${name}-`));
  const server = await serve(dataDir, PATHS[name]);
  const call = async (method: string, route: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const json: unknown = await res.json();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const corpus = (await call("POST", "/v1/rag/corpora", { name: `ingest ${name}`, embedding_model: "embed", chunking: args.chunking })) as { id: string };
    // The model is loaded before the clock starts (both paths alike).
    await call("POST", "/v1/embeddings", { model: "embed", input: "warm up" });
    interface Event {
      object: string;
      status?: string;
      chunk_count?: number;
      timings?: { parse_ms: number; chunk_ms: number; embed_ms: number; embed_tokens: number; store_ms: number };
      corpus?: { status: string; document_counts: { total: number } };
    }
    // Settled once every document accepted is indexed or failed (exact duplicates are refused: Vaswani has some).
    let accepted = Number.POSITIVE_INFINITY;
    const settled = collectEvents(`${server.url}/v1/rag/corpora/${corpus.id}/events`, KEY, (e: Event) => e.object === "rag.corpus.snapshot" && e.corpus!.status !== "indexing" && e.corpus!.document_counts.total >= accepted);
    const started = performance.now();
    const batch = Number(args["upload-batch"]);
    let taken = 0;
    const files = MBOX ? [mailbox(docs)] : docs;
    for (let i = 0; i < files.length; i += batch) {
      const form = new FormData();
      for (const d of files.slice(i, i + batch)) form.append("file", new Blob([d.text]), d.name);
      const res = await fetch(`${server.url}/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form });
      const json = (await res.json()) as { documents?: unknown[]; rejected?: { filename: string; error: { code: string } }[] };
      if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
      for (const r of json.rejected ?? []) process.stderr.write(`  rejected ${r.filename}: ${r.error.code}\n`);
      taken += json.documents?.length ?? 0;
    }
    // Indexing the last upload's documents takes far longer than reading its answer: the
    // snapshot that settles it comes after this.
    // A mailbox's messages become documents of their own once it is parsed.
    accepted = MBOX ? taken + docs.length : taken;
    const events = (await settled) as Event[];
    const seconds = (performance.now() - started) / 1000;
    const peak = peakRssMb(server.child.pid!);
    const split = { parse: 0, chunk: 0, embed: 0, store: 0 };
    let indexed = 0;
    let failed = 0;
    let embedTokens = 0;
    for (const e of events) {
      if (e.object !== "rag.document.status") continue;
      if (e.status === "failed") failed++;
      if (e.status !== "indexed") continue;
      indexed++;
      if (!e.timings) continue;
      split.parse += e.timings.parse_ms;
      split.chunk += e.timings.chunk_ms;
      split.embed += e.timings.embed_ms;
      split.store += e.timings.store_ms;
      embedTokens += e.timings.embed_tokens;
    }
    const final = (await call("GET", `/v1/rag/corpora/${corpus.id}`)) as { chunk_count: number; document_counts: { indexed: number; failed: number; total: number } };
    // The split and the tokens are summed from the events: say so when some were missed.
    if (indexed !== final.document_counts.indexed || failed !== final.document_counts.failed) {
      process.stderr.write(`  the events stream told of ${indexed} indexed and ${failed} failed documents, the corpus counts ${final.document_counts.indexed} and ${final.document_counts.failed}: the split and the tokens cover only those told of\n`);
    }
    return {
      path: name,
      round,
      documents: final.document_counts.total,
      indexed: final.document_counts.indexed,
      failed: final.document_counts.failed,
      chunks: final.chunk_count,
      seconds,
      documentsPerSecond: final.document_counts.total / seconds,
      chunksPerSecond: final.chunk_count / seconds,
      peakRssMb: peak,
      split,
      embedTokens,
    };
  } finally {
    await new Promise<void>((resolve) => {
      if (server.child.exitCode !== null) return resolve();
      server.child.once("exit", () => resolve());
      server.child.kill("SIGTERM");
      setTimeout(() => server.child.kill("SIGKILL"), 10_000).unref();
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const docs = abstracts(args.docs ? Number(args.docs) : MBOX ? 5000 : undefined);
const paths = args.paths.split(",").map((p) => p.trim()) as PathName[];
for (const p of paths) if (!(p in PATHS)) throw new Error(`--paths: unknown path '${p}' (reference, pipelined)`);
const runs: Run[] = [];
const rounds = Number(args.rounds);
process.stderr.write(`ingest: ${docs.length} ${args.set} abstracts, ${args.model}, ${args.chunking} chunking, ${CONTEXTS} embedding context(s) of 1 llama.cpp thread, ${rounds} round(s), pipelined settings ${JSON.stringify(PATHS.pipelined)}\n`);
for (let round = 0; round < (args["probe-only"] ? 0 : rounds); round++) {
  const order = round % 2 === 0 ? paths : [...paths].reverse();
  for (const name of order) {
    const r = await run(name, round, docs);
    runs.push(r);
    process.stderr.write(`  round ${round} ${name}: ${r.indexed}/${r.documents} indexed (${r.failed} failed), ${r.chunks} chunks in ${r.seconds.toFixed(1)} s: ${r.documentsPerSecond.toFixed(2)} documents/s, ${r.chunksPerSecond.toFixed(1)} chunks/s, peak RSS ${r.peakRssMb.toFixed(0)} MB\n`);
  }
}

const of = (name: PathName) => runs.filter((r) => r.path === name);
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
log(`# Ingestion of many small documents (${new Date().toISOString()})\n`);
log(`${MBOX ? `One mailbox of ${docs.length} messages (Vaswani's abstracts as bodies), each indexed as a document, sent` : `${docs.length} ${args.set === "scifact" ? "SciFact" : "Vaswani"} abstracts as .txt`} through \`POST /v1/rag/corpora/{id}/documents\` (${args["upload-batch"]} a request), ${args.model}, ${args.chunking} chunking, ${CONTEXTS} embedding context(s) of 1 llama.cpp thread, ${os.cpus().length} cores; pipelined settings ${JSON.stringify(PATHS.pipelined)} (defaults where empty).\n`);
log("| path | round | documents (indexed / failed) | chunks | seconds | documents/s | chunks/s | peak RSS (MB) | parse / chunk / embed / store (s, summed per document) | tokens embedded | embedding tokens/s |");
log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of runs) {
  const s = (ms: number) => (ms / 1000).toFixed(0);
  log(`| ${r.path} | ${r.round} | ${r.documents} (${r.indexed} / ${r.failed}) | ${r.chunks} | ${r.seconds.toFixed(1)} | ${r.documentsPerSecond.toFixed(2)} | ${r.chunksPerSecond.toFixed(1)} | ${r.peakRssMb.toFixed(0)} | ${s(r.split.parse)} / ${s(r.split.chunk)} / ${s(r.split.embed)} / ${s(r.split.store)} | ${r.embedTokens.toLocaleString("en")} | ${(r.embedTokens / (r.split.embed / 1000)).toFixed(0)} |`);
}
let ratio: number | null = null;
if (of("reference").length > 0 && of("pipelined").length > 0) {
  // Paired: each round's pipelined rate over the same round's reference rate.
  const ratios = [...new Set(runs.map((r) => r.round))].map((round) => {
    const p = runs.find((r) => r.round === round && r.path === "pipelined")!;
    const ref = runs.find((r) => r.round === round && r.path === "reference")!;
    return p.documentsPerSecond / ref.documentsPerSecond;
  });
  ratio = median(ratios);
  log(`\nPipelined / reference documents per second: **${ratio.toFixed(2)}×** (median of ${ratios.length} pair(s): ${ratios.map((x) => x.toFixed(2)).join(", ")}; goal ≥ 3: ${ratio >= 3 ? "PASS" : "short"})`);
}
/** Milliseconds per passage of one evaluation holding `n` passages, by passage length (best of five, one thread). */
async function evaluationCost(): Promise<{ tokens: number; perPassageMs: Record<number, number> }[]> {
  const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
  const { installedLlamaOptions } = await import("../src-server/engine/llama-binary.js");
  const { LlamaEmbedWorker } = await import("../src-server/engine/llama-embed-worker.js");
  const llama = await getLlama({ ...installedLlamaOptions("cpu"), logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: testModel(args.model as TestModelId) });
  const worker = await LlamaEmbedWorker.create(model, { maxInputTokens: Math.min(model.trainContextSize, 512), sequences: 16, batchTokens: 16 * 128, threads: 1 });
  const out: { tokens: number; perPassageMs: Record<number, number> }[] = [];
  try {
    for (const tokens of [128, 32]) {
      // Sixteen inputs of exactly `tokens` tokens, cut from the set's text run together (short
      // abstracts would otherwise make a shorter input than the row says).
      const run = docs.slice(0, 400).map((d) => d.text).join("\n\n");
      const all = worker.tokenize(run);
      if (all.length < 16 * tokens) throw new Error(`the set's first documents hold ${all.length} tokens, fewer than 16 × ${tokens}`);
      const inputs = Array.from({ length: 16 }, (_, i) => all.slice(i * tokens, (i + 1) * tokens));
      const best: Record<number, number> = {};
      for (let round = 0; round < 5; round++) {
        for (const n of [1, 2, 4, 8, 16]) {
          const started = performance.now();
          await worker.evaluate(inputs.slice(0, n));
          best[n] = Math.min(best[n] ?? Number.POSITIVE_INFINITY, (performance.now() - started) / n);
        }
      }
      out.push({ tokens, perPassageMs: best });
    }
  } finally {
    await worker.dispose();
    await model.dispose();
    await llama.dispose();
  }
  return out;
}

let probe: Awaited<ReturnType<typeof evaluationCost>> | null = null;
if (!args["skip-probe"]) {
  probe = await evaluationCost();
  log(`
One evaluation's cost per passage (${args.model}, one llama.cpp thread, best of five), by passages in the evaluation:
`);
  log("| passage | 1 | 2 | 4 | 8 | 16 |");
  log("|---|---|---|---|---|---|");
  for (const row of probe) log(`| ${row.tokens} tokens | ${[1, 2, 4, 8, 16].map((n) => `${row.perPassageMs[n]!.toFixed(1)} ms`).join(" | ")} |`);
  // The ceiling: every token the reference embedded, evaluated at the best rate measured, and
  // nothing else (parsing, storing, waiting) taking any time.
  const bestRate = Math.max(...probe.flatMap((row) => Object.values(row.perPassageMs).map((ms) => (row.tokens / ms) * 1000)));
  const refs = of("reference");
  if (refs.length > 0) {
    const ref = refs[0]!;
    const rate = ref.embedTokens / (ref.split.embed / 1000);
    log(`\nBest evaluation rate measured: ${bestRate.toFixed(0)} tokens/s. The reference embedded at ${rate.toFixed(0)} tokens/s (${((100 * rate) / bestRate).toFixed(0)}% of it); its ${ref.embedTokens.toLocaleString("en")} tokens at the best rate with nothing else taking time would be ${(ref.embedTokens / bestRate).toFixed(0)} s: a ceiling of **${(ref.seconds / (ref.embedTokens / bestRate)).toFixed(2)}×** the reference for any path that embeds the same tokens on the same thread.`);
  }
}

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
mkdirSync(path.join(REPO_ROOT, "bench", "results"), { recursive: true });
const base = path.join(REPO_ROOT, "bench", "results", `ingest-${stamp}`);
writeFileSync(`${base}.json`, `${JSON.stringify({ at: new Date().toISOString(), set: args.set, documents: docs.length, model: args.model, chunking: args.chunking, threads: THREADS, embeddingContexts: CONTEXTS, cores: os.cpus().length, uploadBatch: Number(args["upload-batch"]), pipelinedSettings: PATHS.pipelined, runs, ratio, evaluationCost: probe }, null, 2)}\n`);
writeFileSync(`${base}.md`, `${lines.join("\n")}\n`);
process.stderr.write(`written ${base}.json and .md\n`);
