/**
 * `npm run bench`: Pustaka's API against node-llama-cpp in-process and against
 * llama.cpp's own server (llama-cpp-python), on the same GGUF and thread count, in one
 * run. Prints a Markdown report and writes JSON to bench/results/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { testModel } from "../test/helpers/models.js";
import { decodeRate, median, percentile, rssMb, spawnUntil, streamChat, type StreamResult } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const MAX_TOKENS = 128;
const CONTEXT = 1024;
const KEY = "psk-benchmark-key-0000000000";
const CHAT_MODEL = testModel("gemma3-270m");
const EMBED_MODEL = testModel("all-minilm-l6-v2");
const PEER_PYTHON = path.join(process.env.PUSTAKA_BENCH_CACHE ?? path.join(os.homedir(), ".cache", "pustaka", "bench"), "llama-server-venv", "bin", "python");

const prompt = (i: number) => `Story ${i}. Write a long story about a fisherman in Terengganu who finds a strange pearl, and what happens to his village.`;
const report: Record<string, unknown> = { date: new Date().toISOString(), threads: THREADS, runs: RUNS, maxTokens: MAX_TOKENS, chatModel: CHAT_MODEL, embedModel: EMBED_MODEL, cpus: os.cpus().length };
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

interface InProcessChat {
  runs: { ttftMs: number; decodeMs: number; tokens: number }[];
}
interface InProcessEmbed {
  count: number;
  ms: number;
}

function inProcess<T>(options: Record<string, unknown>): T {
  const out = execFileSync(process.execPath, ["--import", "tsx", path.join(ROOT, "bench", "inprocess.ts"), JSON.stringify(options)], { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out) as T;
}

async function startPustaka(parallel: number) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-"));
  const server = await spawnUntil(
    process.execPath,
    [path.join(ROOT, "dist", "src-server", "cli.js"), "serve", "--port", "0", "--data-dir", dataDir, "--threads", String(THREADS), "--parallel", String(parallel), "--context-size", String(CONTEXT), "--log-level", "warn",
      "--model", `svc-merlion-13b=${CHAT_MODEL}`, "--model", `minilm=${EMBED_MODEL}`],
    /listening on (http:\/\/\S+)/,
    { PUSTAKA_API_KEY: KEY },
  );
  return { ...server, url: server.match[1]! };
}

let peerChecked: boolean | undefined;
function peerAvailable(): boolean {
  if (peerChecked === undefined) {
    try {
      peerChecked = existsSync(PEER_PYTHON) && (execFileSync(PEER_PYTHON, ["-c", "import llama_cpp.server"], { stdio: "ignore" }), true);
    } catch {
      peerChecked = false;
    }
  }
  return peerChecked;
}

async function startPeer(parallelSlots: number) {
  if (!peerAvailable()) return null;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const server = await spawnUntil(
    PEER_PYTHON,
    ["-m", "llama_cpp.server", "--model", CHAT_MODEL, "--model_alias", "svc-merlion-13b", "--host", "127.0.0.1", "--port", String(port), "--n_threads", String(THREADS), "--n_threads_batch", String(THREADS),
      "--n_ctx", String(CONTEXT * parallelSlots), "--chat_format", "gemma", "--api_key", KEY],
    /Uvicorn running on/,
  );
  return { ...server, url: `http://127.0.0.1:${port}` };
}

async function singleStream(url: string): Promise<StreamResult[]> {
  await streamChat(url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: "warm up" }], max_tokens: 4, temperature: 0 });
  const runs: StreamResult[] = [];
  for (let i = 0; i < RUNS; i++) {
    runs.push(await streamChat(url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: prompt(i) }], max_tokens: MAX_TOKENS, temperature: 0, stream_options: { include_usage: true } }));
  }
  return runs;
}

async function concurrent(url: string, streams: number, usage: boolean) {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: streams }, (_, i) =>
      streamChat(url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: prompt(100 + i) }], max_tokens: 64, temperature: 0, ...(usage ? { stream_options: { include_usage: true } } : {}) }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const tokens = results.reduce((s, r) => s + r.tokens, 0);
  return { streams, tokens, seconds, tokensPerSecond: tokens / seconds, ttftP50: median(results.map((r) => r.ttftMs)) };
}

function summarize(runs: { ttftMs: number; decodeMs: number; tokens: number }[]) {
  return {
    ttftP50: median(runs.map((r) => r.ttftMs)),
    ttftP95: percentile(runs.map((r) => r.ttftMs), 95),
    decodeTps: median(runs.map(decodeRate)),
    tokens: median(runs.map((r) => r.tokens)),
  };
}

async function main() {
  log(`# Pustaka benchmark (${String(report.date)})`);
  log(`CPU cores: ${os.cpus().length}; threads per context: ${THREADS}; chat model: ${path.basename(CHAT_MODEL)}; embeddings: ${path.basename(EMBED_MODEL)}; ${RUNS} runs of ${MAX_TOKENS} tokens, temperature 0\n`);

  // 1. Idle memory.
  const idle = await startPustaka(4);
  await new Promise((r) => setTimeout(r, 1500));
  const idleRss = rssMb(idle.child.pid!);
  await idle.stop();
  report.idleRssMb = idleRss;
  log(`## Idle memory\nRSS with no model loaded: **${fmt(idleRss)} MB** (target ≤ 150 MB)\n`);

  // 2. Single stream: in-process vs API vs llama.cpp server.
  const reference = summarize(inProcess<InProcessChat>({ mode: "chat", model: CHAT_MODEL, threads: THREADS, contextSize: CONTEXT, prompts: [prompt(-1), ...Array.from({ length: RUNS }, (_, i) => prompt(i))], maxTokens: MAX_TOKENS }).runs.slice(1));
  const pustaka = await startPustaka(8);
  const api = summarize(await singleStream(pustaka.url));
  const peer = await startPeer(1);
  const peerSingle = peer ? summarize(await singleStream(peer.url)) : null;
  await peer?.stop();
  report.single = { inProcess: reference, api, llamaCppServer: peerSingle };
  log("## One stream");
  log("| | TTFT p50 (ms) | TTFT p95 (ms) | decode (tok/s) | tokens |");
  log("|---|---|---|---|---|");
  for (const [name, s] of [["node-llama-cpp in-process", reference], ["Pustaka HTTP API", api], ["llama.cpp server (llama-cpp-python)", peerSingle]] as const) {
    if (s) log(`| ${name} | ${fmt(s.ttftP50)} | ${fmt(s.ttftP95)} | ${fmt(s.decodeTps)} | ${s.tokens} |`);
  }
  log(`\nAPI decode / in-process: **${fmt((api.decodeTps / reference.decodeTps) * 100)}%** (target ≥ 95%); added TTFT p50: **${fmt(api.ttftP50 - reference.ttftP50)} ms** (target ≤ 10 ms)`);
  if (peerSingle) log(`API / llama.cpp server: decode ${fmt(api.decodeTps / peerSingle.decodeTps, 2)}×, TTFT p50 ${fmt(api.ttftP50 / peerSingle.ttftP50, 2)}×`);
  else log("llama.cpp server peer not built: run `bench/peers/setup-llama-server.sh` first");

  // 3. Concurrency.
  log("\n## Concurrent streams (64 tokens each)");
  log("| streams | Pustaka tok/s | Pustaka TTFT p50 (ms) | llama.cpp server tok/s | ratio |");
  log("|---|---|---|---|---|");
  const sweep = [];
  const peerMany = await startPeer(1);
  for (const n of [1, 2, 4, 8]) {
    const ours = await concurrent(pustaka.url, n, true);
    const theirs = peerMany ? await concurrent(peerMany.url, n, false) : null;
    sweep.push({ streams: n, pustaka: ours, llamaCppServer: theirs });
    log(`| ${n} | ${fmt(ours.tokensPerSecond)} | ${fmt(ours.ttftP50)} | ${theirs ? fmt(theirs.tokensPerSecond) : "n/a"} | ${theirs ? fmt(ours.tokensPerSecond / theirs.tokensPerSecond, 2) : "n/a"} |`);
  }
  await peerMany?.stop();
  report.concurrency = sweep;

  // 4. Embeddings.
  const inputs = Array.from({ length: 256 }, (_, i) => `Sentence ${i}: the monsoon season brings heavy rain to the east coast of Peninsular Malaysia.`);
  const refEmbed = inProcess<InProcessEmbed>({ mode: "embed", model: EMBED_MODEL, threads: THREADS, contextSize: 512, prompts: [], maxTokens: 0, inputs });
  const warm = await fetch(`${pustaka.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "minilm", input: "warm up" }) });
  await warm.text();
  const started = performance.now();
  for (let i = 0; i < inputs.length; i += 64) {
    const res = await fetch(`${pustaka.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "minilm", input: inputs.slice(i, i + 64) }) });
    if (!res.ok) throw new Error(await res.text());
    await res.json();
  }
  const apiEmbedPerSecond = inputs.length / ((performance.now() - started) / 1000);
  const refEmbedPerSecond = refEmbed.count / (refEmbed.ms / 1000);
  report.embeddings = { inProcessPerSecond: refEmbedPerSecond, apiPerSecond: apiEmbedPerSecond };
  log(`\n## Embeddings (${inputs.length} inputs, batches of 64)\nin-process ${fmt(refEmbedPerSecond)}/s, API ${fmt(apiEmbedPerSecond)}/s: **${fmt((apiEmbedPerSecond / refEmbedPerSecond) * 100)}%** (target ≥ 90%)`);
  await pustaka.stop();

  // 5. Threads (informational): the same in-process decode at 1 and 2 threads.
  if (!process.env.BENCH_SKIP_THREADS) {
    const byThreads = [1, 2].map((threads) => ({ threads, ...summarize(inProcess<InProcessChat>({ mode: "chat", model: CHAT_MODEL, threads, contextSize: CONTEXT, prompts: [prompt(1), prompt(2), prompt(3)], maxTokens: 64 }).runs) }));
    report.threads = byThreads;
    log(`\n## Threads (in-process, informational)\n${byThreads.map((t) => `${t.threads} thread(s): decode ${fmt(t.decodeTps)} tok/s, TTFT p50 ${fmt(t.ttftP50)} ms`).join("; ")}`);
  }

  mkdirSync(path.join(ROOT, "bench", "results"), { recursive: true });
  const file = path.join(ROOT, "bench", "results", `${String(report.date).replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  writeFileSync(file.replace(/\.json$/, ".md"), `${lines.join("\n")}\n`);
  log(`\nwritten: ${path.relative(ROOT, file)}`);
}

await main();
