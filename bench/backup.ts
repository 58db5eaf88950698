/**
 * `node --import tsx bench/backup.ts [--docs N] [--model all-minilm-l6-v2|multilingual-e5-small] [--rounds N]`
 *
 * What a backup costs (docs/backup-restore.md), on a corpus of a few thousand passages
 * (SciFact's abstracts, `--docs` of them, default 1,000: about 2,800 passages) indexed by a
 * `pustaka serve` process (one llama.cpp thread, as every benchmark):
 *  - the time and size of `pustaka backup` (the CLI, a process of its own) against the data
 *    folder's size, and of `pustaka restore`;
 *  - the server's search latency (`POST /v1/rag/corpora/{id}/search`, one client sending one
 *    request after another) while a backup runs, against without one: first with the CLI's
 *    backups (`--rounds` of them), then with backups the server takes itself on a schedule
 *    (the same code inside the server's process; its database copy in a worker thread).
 * A request counts as "during a backup" when it overlaps the backup's own work (from the time
 * the backup reports, not the CLI's start-up). Prints a table and writes JSON and Markdown to
 * bench/results/backup-<time>.{json,md}.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT, testModel, type TestModelId } from "../test/helpers/models.js";
import { collectEvents } from "../test/helpers/rag.js";
import { percentile } from "./lib.js";

const { values: args } = parseArgs({
  options: {
    docs: { type: "string", default: "1000" },
    model: { type: "string", default: "all-minilm-l6-v2" },
    rounds: { type: "string", default: "5" },
  },
});

const KEY = "psk-bench-backup-key-0000000000";
const CLI = ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts")];
const SCIFACT = path.resolve(REPO_ROOT, "..", "shared", "evalsets", "scifact");
const MODEL = testModel(args.model as TestModelId);
const ROUNDS = Number(args.rounds);

const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { _id: string; title?: string; text: string });
const DOCS = lines(path.join(SCIFACT, "corpus.jsonl"))
  .slice(0, Number(args.docs))
  .map((d) => ({ name: `${d._id}.txt`, text: d.title ? `${d.title}\n\n${d.text}` : d.text }));
const QUERIES = lines(path.join(SCIFACT, "queries.jsonl")).map((q) => q.text);

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}

interface Server {
  child: ChildProcess;
  url: string;
  /** JSON log lines the server wrote so far. */
  logs: () => Record<string, unknown>[];
  stop: () => Promise<void>;
}

async function serve(dataDir: string, extra: Record<string, unknown> = {}): Promise<Server> {
  const config = path.join(os.tmpdir(), `pustaka-bench-backup-${process.pid}-${Date.now()}.json`);
  writeFileSync(config, JSON.stringify({ rateLimits: { defaultTier: "unlimited" }, rag: { maxFilesPerUpload: 1000, relevanceJudge: false }, ...extra }));
  const child = spawn(process.execPath, [...CLI, "serve", "--no-supervise", "--port", "0", "--threads", "1", "--log-level", "info", "--data-dir", dataDir, "--config", config, "--model", `embed=${MODEL}`], {
    cwd: REPO_ROOT,
    env: { ...process.env, PUSTAKA_API_KEY: KEY },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}${err}`)));
  });
  child.removeAllListeners("exit");
  return {
    child,
    url,
    logs: () =>
      err
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

async function call(server: Server, method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json: unknown = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

interface Sample {
  start: number;
  end: number;
}

/** One client searching, one request after another, until `stop()`. */
function searchLoop(server: Server, corpusId: string): { stop: () => Promise<Sample[]> } {
  const samples: Sample[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const start = performance.timeOrigin + performance.now();
      await call(server, "POST", `/v1/rag/corpora/${corpusId}/search`, { query: QUERIES[i % QUERIES.length], top_k: 5 });
      samples.push({ start, end: performance.timeOrigin + performance.now() });
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return samples;
    },
  };
}

const overlaps = (s: Sample, windows: Sample[]) => windows.some((w) => s.start < w.end && s.end > w.start);
const latency = (samples: Sample[]) => {
  const ms = samples.map((s) => s.end - s.start);
  return { n: ms.length, p50: percentile(ms, 50), p95: percentile(ms, 95) };
};

function cli(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...CLI, ...argv], { cwd: REPO_ROOT, env: { ...process.env, PUSTAKA_API_KEY: "" } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })));
}

const work = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-backup-"));
const dataDir = path.join(work, "data");
const backups = path.join(work, "backups");
try {
  // 1. The corpus.
  let server = await serve(dataDir);
  const corpus = (await call(server, "POST", "/v1/rag/corpora", { name: "scifact", embedding_model: "embed" })) as { id: string };
  const ready = collectEvents(`${server.url}/v1/rag/corpora/${corpus.id}/events?until=ready`, KEY, () => false);
  const indexStart = performance.now();
  for (let i = 0; i < DOCS.length; i += 100) {
    const form = new FormData();
    for (const d of DOCS.slice(i, i + 100)) form.append("file", new Blob([d.text]), d.name);
    const res = await fetch(`${server.url}/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form });
    if (res.status !== 202) throw new Error(`upload: ${res.status} ${await res.text()}`);
  }
  await ready;
  const indexSeconds = (performance.now() - indexStart) / 1000;
  const state = (await call(server, "GET", `/v1/rag/corpora/${corpus.id}`)) as { chunk_count: number; document_counts: { indexed: number } };
  process.stderr.write(`indexed ${state.document_counts.indexed} documents, ${state.chunk_count} passages in ${indexSeconds.toFixed(0)} s\n`);
  // Warm: the index is in memory, the model loaded.
  for (let i = 0; i < 20; i++) await call(server, "POST", `/v1/rag/corpora/${corpus.id}/search`, { query: QUERIES[i], top_k: 5 });
  const dataBytes = folderBytes(dataDir);

  // 2. Without a backup.
  const idle = searchLoop(server, corpus.id);
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  const baseline = latency(await idle.stop());

  // 3. The CLI's backups, while one client searches.
  const cliRuns: { ms: number; wallMs: number; bytes: number; files: number }[] = [];
  const windows: Sample[] = [];
  const during = searchLoop(server, corpus.id);
  for (let round = 0; round < ROUNDS; round++) {
    const run = await cli(["backup", backups, "--data-dir", dataDir, "--model", `embed=${MODEL}`, "--keep", "2", "--json"]);
    if (run.code !== 0) throw new Error(`backup failed: ${run.stderr}`);
    const end = performance.timeOrigin + performance.now();
    const result = JSON.parse(run.stdout) as { ms: number; bytes: number; files: number };
    windows.push({ start: end - result.ms, end });
    cliRuns.push({ ms: result.ms, wallMs: run.ms, bytes: result.bytes, files: result.files });
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const cliSamples = await during.stop();
  const duringCli = latency(cliSamples.filter((s) => overlaps(s, windows)));
  const betweenCli = latency(cliSamples.filter((s) => !overlaps(s, windows)));

  // 4. A restore of the newest.
  const newest = readdirSync(backups)
    .filter((n) => n.startsWith("pustaka-backup-"))
    .sort()
    .at(-1)!;
  const restored = await cli(["restore", path.join(backups, newest), "--data-dir", path.join(work, "restored"), "--kek-file", path.join(dataDir, "keys", "kek.bin"), "--json"]);
  if (restored.code !== 0) throw new Error(`restore failed: ${restored.stderr}`);
  const restoreMs = (JSON.parse(restored.stdout) as { ms: number }).ms;

  // 5. Backups the server takes itself, every 12 seconds, while one client searches.
  await server.stop();
  server = await serve(dataDir, { backup: { dir: path.join(work, "scheduled"), everyHours: 12 / 3600, keep: 2 } });
  for (let i = 0; i < 20; i++) await call(server, "POST", `/v1/rag/corpora/${corpus.id}/search`, { query: QUERIES[i], top_k: 5 });
  const scheduled = searchLoop(server, corpus.id);
  const deadline = Date.now() + 600_000;
  while (server.logs().filter((l) => l.msg === "backup complete").length < ROUNDS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
  const scheduledSamples = await scheduled.stop();
  const completed = server.logs().filter((l) => l.msg === "backup complete") as { time: number; ms: number; bytes: number }[];
  const inServer = completed.map((l) => ({ start: l.time - l.ms, end: l.time }));
  const duringServer = latency(scheduledSamples.filter((s) => overlaps(s, inServer)));
  const betweenServer = latency(scheduledSamples.filter((s) => !overlaps(s, inServer)));
  await server.stop();

  const median = (values: number[]) => percentile(values, 50);
  const result = {
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
    corpus: { documents: state.document_counts.indexed, passages: state.chunk_count, model: args.model, indexSeconds },
    dataFolderBytes: dataBytes,
    cliBackup: { rounds: cliRuns, medianMs: median(cliRuns.map((r) => r.ms)), medianWallMs: median(cliRuns.map((r) => r.wallMs)), bytes: cliRuns.at(-1)!.bytes, files: cliRuns.at(-1)!.files },
    serverBackup: { rounds: completed.map((l) => ({ ms: l.ms, bytes: l.bytes })), medianMs: median(completed.map((l) => l.ms)) },
    restoreMs,
    search: { withoutBackup: baseline, duringCliBackup: duringCli, betweenCliBackups: betweenCli, duringServerBackup: duringServer, betweenServerBackups: betweenServer },
  };
  const mb = (b: number) => (b / 1e6).toFixed(1);
  const row = (name: string, l: { n: number; p50: number; p95: number }) => `| ${name} | ${l.n} | ${l.p50.toFixed(1)} | ${l.p95.toFixed(1)} | ${(l.p50 / baseline.p50).toFixed(2)}× | ${(l.p95 / baseline.p95).toFixed(2)}× |`;
  const md = [
    `# Backup and restore (${result.at})`,
    "",
    `${result.corpus.documents} SciFact abstracts, ${result.corpus.passages} passages (${args.model}, one llama.cpp thread), ${os.cpus().length} cores. The data folder: ${mb(dataBytes)} MB (models bound from elsewhere, not in it).`,
    "",
    "| measure | value |",
    "|---|---|",
    `| backup by the CLI (median of ${cliRuns.length}) | ${(result.cliBackup.medianMs / 1000).toFixed(2)} s of backup work (${(result.cliBackup.medianWallMs / 1000).toFixed(2)} s with the command's start-up) |`,
    `| backup size | ${mb(result.cliBackup.bytes)} MB in ${result.cliBackup.files} files (${((result.cliBackup.bytes / dataBytes) * 100).toFixed(0)}% of the data folder) |`,
    `| backup by the server's schedule (median of ${completed.length}) | ${(result.serverBackup.medianMs / 1000).toFixed(2)} s |`,
    `| restore (checks every file, the keys and the audit trail) | ${(restoreMs / 1000).toFixed(2)} s |`,
    "",
    "Search latency (ms), one client, one request after another:",
    "",
    "| when | requests | p50 | p95 | p50 / without | p95 / without |",
    "|---|---|---|---|---|---|",
    row("without a backup", baseline),
    row("during a CLI backup", duringCli),
    row("between CLI backups", betweenCli),
    row("during a scheduled backup (in the server)", duringServer),
    row("between scheduled backups", betweenServer),
    "",
  ].join("\n");
  process.stdout.write(`${md}\n`);
  const stamp = result.at.replace(/[:.]/g, "-");
  mkdirSync(path.join(REPO_ROOT, "bench", "results"), { recursive: true });
  const base = path.join(REPO_ROOT, "bench", "results", `backup-${stamp}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${base}.md`, md);
  process.stderr.write(`wrote ${base}.{json,md}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
