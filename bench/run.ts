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
import { childPids, decodeRate, median, percentile, rssMb, spawnUntil, startReference, streamChat, type StreamResult } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const MAX_TOKENS = 128;
const CONTEXT = 1024;
const KEY = "psk-benchmark-key-0000000000";
const CHAT_MODEL = testModel("gemma3-270m");
const EMBED_MODEL = testModel("all-minilm-l6-v2");
const BENCH_CACHE = process.env.PUSTAKA_BENCH_CACHE ?? path.join(os.homedir(), ".cache", "pustaka", "bench");
const PEER_PYTHON = path.join(BENCH_CACHE, "llama-server-venv", "bin", "python");
/** llama.cpp's own `llama-server`, built by `npm run bench:setup`. */
const LLAMA_SERVER = path.join(BENCH_CACHE, "llama-server", "build", "bin", "llama-server");
/** Rounds of the embedding batches, and of eight concurrent streams (fewer streams get more rounds; who goes first rotates). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `BENCH_SECTIONS=concurrency,embeddings` runs only those (idle, single, concurrency, embeddings, threads). */
const SECTIONS = process.env.BENCH_SECTIONS ? new Set(process.env.BENCH_SECTIONS.split(",").map((s) => s.trim())) : null;
const want = (section: string) => !SECTIONS || SECTIONS.has(section);
const verdict = (ratio: number, goal: number) => (Number.isFinite(ratio) ? (ratio >= goal ? "PASS" : "short") : "n/a");

const prompt = (i: number) => `Story ${i}. Write a long story about a fisherman in Terengganu who finds a strange pearl, and what happens to his village.`;
const report: Record<string, unknown> = { date: new Date().toISOString(), threads: THREADS, runs: RUNS, maxTokens: MAX_TOKENS, chatModel: CHAT_MODEL, embedModel: EMBED_MODEL, cpus: os.cpus().length };
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

async function startPustaka(parallel: number) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-"));
  // Throughput is measured without the default tier's 60 requests a minute (the limiter still runs).
  const config = path.join(dataDir, "bench-config.json");
  writeFileSync(config, JSON.stringify({ rateLimits: { defaultTier: "unlimited" } }));
  const server = await spawnUntil(
    process.execPath,
    [path.join(ROOT, "dist", "src-server", "cli.js"), "serve", "--port", "0", "--data-dir", dataDir, "--config", config, "--threads", String(THREADS), "--parallel", String(parallel), "--context-size", String(CONTEXT), "--log-level", "warn",
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
      "--n_ctx", String(CONTEXT * parallelSlots), "--chat_format", "gemma", "--api_key", KEY,
      // Its default lets a new request interrupt the one streaming; queue them instead.
      "--interrupt_requests", "False"],
    /Uvicorn running on/,
  );
  return { ...server, url: `http://127.0.0.1:${port}` };
}

/**
 * llama.cpp's `llama-server` on a chat model with `parallel` slots (continuous batching), or
 * on an embedding model (batched embeddings); null when it has not been built.
 */
async function startLlamaServer(mode: { chat: number } | { embed: number }) {
  if (!existsSync(LLAMA_SERVER)) return null;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const common = ["--host", "127.0.0.1", "--port", String(port), "-t", String(THREADS), "-tb", String(THREADS), "--api-key", KEY, "--no-webui"];
  const args =
    "chat" in mode
      ? ["-m", CHAT_MODEL, "-a", "svc-merlion-13b", "-c", String(CONTEXT * mode.chat), "-np", String(mode.chat), ...common]
      : // A batch must hold whole inputs for a non-causal encoder: one ubatch of the whole context.
        ["-m", EMBED_MODEL, "-a", "minilm", "--embedding", "--pooling", "mean", "-c", String(512 * mode.embed), "-np", String(mode.embed), "-b", String(512 * mode.embed), "-ub", String(512 * mode.embed), ...common];
  const server = await spawnUntil(LLAMA_SERVER, args, /listening on http:\/\//, { LD_LIBRARY_PATH: path.dirname(LLAMA_SERVER) });
  return { ...server, url: `http://127.0.0.1:${port}` };
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
  return { streams, tokens, seconds, tokensPerSecond: tokens / seconds, ttfts: results.map((r) => r.ttftMs) };
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
  if (want("idle")) {
    const idle = await startPustaka(4);
    await new Promise((r) => setTimeout(r, 1500));
    // `pustaka serve` is a small supervisor and the server it watches: the target is the server's.
    const server = childPids(idle.child.pid!)[0];
    const idleRss = server === undefined ? NaN : rssMb(server);
    const supervisorRss = rssMb(idle.child.pid!);
    await idle.stop();
    report.idleRssMb = idleRss;
    report.supervisorRssMb = supervisorRss;
    log(`## Idle memory\nRSS of the server with no model loaded: **${fmt(idleRss)} MB** (target ≤ 150 MB); its supervisor (\`pustaka serve\`'s parent process, which restarts it after a crash): ${fmt(supervisorRss)} MB\n`);
  }

  // 2. One stream: reference, API and peer take turns on each prompt (order rotated),
  //    so the machine's drift (large on shared VMs) hits all three alike.
  const pustaka = await startPustaka(8);
  if (want("single")) {
    const reference = await startReference(ROOT, { model: CHAT_MODEL, threads: THREADS, contextSize: CONTEXT });
    const peer = await startPeer(1);
    // Both evaluate every prompt whole: the prompts share their first tokens, which the reference's one
    // sequence would reuse every run and the API's prompt cache only once a sequence held them
    // (the prompt cache is measured on its own, in bench/prompt-cache.ts). Same work, so the
    // difference in TTFT is what the API adds.
    const chatBody = (i: number) => ({ model: "svc-merlion-13b", messages: [{ role: "user", content: prompt(i) }], max_tokens: MAX_TOKENS, temperature: 0, cache_prompt: false, stream_options: { include_usage: true } });
    await reference.request({ op: "chat", prompt: "warm up", maxTokens: 4 });
    await streamChat(pustaka.url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: "warm up" }], max_tokens: 4 });
    if (peer) await streamChat(peer.url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: "warm up" }], max_tokens: 4 });
    const samples = { reference: [] as StreamResult[], api: [] as StreamResult[], peer: [] as StreamResult[] };
    for (let i = 0; i < RUNS; i++) {
      const turns: (() => Promise<void>)[] = [
        async () => void samples.reference.push({ ...(await reference.request<StreamResult>({ op: "chat", prompt: prompt(i), maxTokens: MAX_TOKENS, fresh: true })), text: "" }),
        async () => void samples.api.push(await streamChat(pustaka.url, KEY, chatBody(i))),
        ...(peer ? [async () => void samples.peer.push(await streamChat(peer.url, KEY, { ...chatBody(i), stream_options: undefined, cache_prompt: undefined }))] : []),
      ];
      for (let k = 0; k < turns.length; k++) await turns[(i + k) % turns.length]!();
    }
    const ref = summarize(samples.reference);
    const api = summarize(samples.api);
    const peerSingle = peer ? summarize(samples.peer) : null;
    // Paired ratios: each API run against the reference run on the same prompt.
    const decodeRatios = samples.api.map((a, i) => decodeRate(a) / decodeRate(samples.reference[i]!));
    const pairedDecode = median(decodeRatios);
    const spread = [percentile(decodeRatios, 25), percentile(decodeRatios, 75)];
    const pairedTtft = median(samples.api.map((a, i) => a.ttftMs - samples.reference[i]!.ttftMs));
    report.single = { inProcess: ref, api, llamaCppServer: peerSingle, pairedDecodeRatio: pairedDecode, pairedDecodeRatioIqr: spread, pairedAddedTtftMs: pairedTtft };
    log("## One stream");
    log("| | TTFT p50 (ms) | TTFT p95 (ms) | decode (tok/s) | tokens |");
    log("|---|---|---|---|---|");
    for (const [name, sm] of [["node-llama-cpp in-process", ref], ["Pustaka HTTP API", api], ["llama.cpp server (llama-cpp-python)", peerSingle]] as const) {
      if (sm) log(`| ${name} | ${fmt(sm.ttftP50)} | ${fmt(sm.ttftP95)} | ${fmt(sm.decodeTps)} | ${sm.tokens} |`);
    }
    log(`\nAPI decode / in-process (median of paired runs): **${fmt(pairedDecode * 100)}%** (interquartile range ${fmt(spread[0]! * 100)}–${fmt(spread[1]! * 100)}%; target ≥ 95%); added TTFT (median of paired differences): **${fmt(pairedTtft)} ms** (target ≤ 10 ms)`);
    if (peerSingle) log(`API / llama.cpp server: decode ${fmt(api.decodeTps / peerSingle.decodeTps, 2)}×, TTFT p50 ${fmt(api.ttftP50 / peerSingle.ttftP50, 2)}×`);
    else log("llama.cpp server peer not built: run `npm run bench:setup` first");
    await peer?.stop();
    await reference.stop();
  }

  // 3. Concurrency: against llama-server with as many slots as Pustaka has sequences (8). Each
  //    level gets the same number of tokens (ROUNDS × 8 streams' worth: 8×ROUNDS rounds of one
  //    stream, ROUNDS rounds of eight), so the short levels are not judged on a handful of
  //    requests. In each round both servers run the level back to back, who goes first
  //    rotating; the ratio is the median of the rounds' ratios (each pair shares the machine's
  //    state at that moment), with the middle half of them as its spread.
  if (want("concurrency")) {
    log("\n## Concurrent streams (64 tokens each, 8 sequences / slots)");
    log("| streams | rounds | Pustaka tok/s | TTFT p50 / p95 (ms) | llama-server tok/s | TTFT p50 / p95 (ms) | ratio, paired rounds (middle half) | goal ≥ 0.95 |");
    log("|---|---|---|---|---|---|---|---|");
    const sweep = [];
    // The model loads on first use: not inside the first round.
    await streamChat(pustaka.url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: "warm up" }], max_tokens: 4 });
    const llamaServer = await startLlamaServer({ chat: 8 });
    if (!llamaServer) log("(llama-server not built: run `npm run bench:setup` first)");
    for (const n of [1, 2, 4, 8]) {
      const ours: Awaited<ReturnType<typeof concurrent>>[] = [];
      const theirs: Awaited<ReturnType<typeof concurrent>>[] = [];
      const rounds = ROUNDS * Math.max(1, Math.round(8 / n));
      for (let round = 0; round < rounds; round++) {
        const turns = [async () => void ours.push(await concurrent(pustaka.url, n, true)), ...(llamaServer ? [async () => void theirs.push(await concurrent(llamaServer.url, n, true))] : [])];
        for (let k = 0; k < turns.length; k++) await turns[(round + k) % turns.length]!();
      }
      const rate = (runs: typeof ours) => median(runs.map((r) => r.tokensPerSecond));
      const ttft = (runs: typeof ours) => `${fmt(percentile(runs.flatMap((r) => r.ttfts), 50))} / ${fmt(percentile(runs.flatMap((r) => r.ttfts), 95))}`;
      const pairedRatios = theirs.length ? ours.map((r, i) => r.tokensPerSecond / theirs[i]!.tokensPerSecond) : [];
      const ratio = pairedRatios.length ? median(pairedRatios) : NaN;
      const spread = pairedRatios.length ? `${fmt(percentile(pairedRatios, 25), 2)}–${fmt(percentile(pairedRatios, 75), 2)}` : "";
      sweep.push({ streams: n, rounds, pustakaTokS: rate(ours), llamaServerTokS: theirs.length ? rate(theirs) : null, ratio, pairedRatios, pustakaTtftMs: ours.flatMap((r) => r.ttfts), llamaServerTtftMs: theirs.flatMap((r) => r.ttfts) });
      log(`| ${n} | ${rounds} | ${fmt(rate(ours))} | ${ttft(ours)} | ${theirs.length ? fmt(rate(theirs)) : "n/a"} | ${theirs.length ? ttft(theirs) : "n/a"} | ${fmt(ratio, 2)} (${spread}) | ${verdict(ratio, 0.95)} |`);
    }
    await llamaServer?.stop();
    report.concurrency = sweep;
  }

  // 4. Embeddings: batches of 64 through the API, alternating with the same batch in-process.
  if (want("embeddings")) {
    const inputs = Array.from({ length: 256 }, (_, i) => `Sentence ${i}: the monsoon season brings heavy rain to the east coast of Peninsular Malaysia.`);
    const embedReference = await startReference(ROOT, { model: EMBED_MODEL, threads: THREADS, contextSize: 512, embed: true });
    await embedReference.request({ op: "embed", inputs: ["warm up"] });
    const post = async (input: string[]) => {
      const res = await fetch(`${pustaka.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "minilm", input }) });
      if (!res.ok) throw new Error(await res.text());
      await res.json();
    };
    await post(["warm up"]);
    const embedPeer = await startLlamaServer({ embed: 8 });
    const postPeer = async (input: string[]) => {
      const res = await fetch(`${embedPeer!.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "minilm", input }) });
      if (!res.ok) throw new Error(`llama-server embeddings: ${res.status} ${await res.text()}`);
      await res.json();
    };
    if (embedPeer) await postPeer(["warm up"]);
    let apiMs = 0;
    let refMs = 0;
    let peerMs = 0;
    // Each batch's API / llama-server rate, the two timed back to back: the spread of the ratio.
    const pairedRatios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < inputs.length; i += 64) {
        const batch = inputs.slice(i, i + 64);
        const timed = async (send: () => Promise<unknown>) => {
          const started = performance.now();
          await send();
          return performance.now() - started;
        };
        let apiBatchMs = 0;
        let peerBatchMs = 0;
        const turns = [
          async () => void (apiBatchMs = await timed(() => post(batch))),
          async () => void (refMs += (await embedReference.request<{ ms: number }>({ op: "embed", inputs: batch })).ms),
          ...(embedPeer ? [async () => void (peerBatchMs = await timed(() => postPeer(batch)))] : []),
        ];
        for (let k = 0; k < turns.length; k++) await turns[(round + i / 64 + k) % turns.length]!();
        apiMs += apiBatchMs;
        peerMs += peerBatchMs;
        if (embedPeer) pairedRatios.push(peerBatchMs / apiBatchMs);
      }
    }
    await embedReference.stop();
    await embedPeer?.stop();
    const embedded = inputs.length * ROUNDS;
    const apiEmbedPerSecond = embedded / (apiMs / 1000);
    const refEmbedPerSecond = embedded / (refMs / 1000);
    const peerEmbedPerSecond = embedPeer ? embedded / (peerMs / 1000) : NaN;
    report.embeddings = { inProcessPerSecond: refEmbedPerSecond, apiPerSecond: apiEmbedPerSecond, llamaServerPerSecond: embedPeer ? peerEmbedPerSecond : null, pairedRatios };
    log(`\n## Embeddings (${inputs.length} inputs × ${ROUNDS} rounds, batches of 64, taking turns)`);
    log(`in-process ${fmt(refEmbedPerSecond)}/s, API ${fmt(apiEmbedPerSecond)}/s: **${fmt((apiEmbedPerSecond / refEmbedPerSecond) * 100)}%** of in-process (target ≥ 90%)`);
    if (embedPeer) {
      // As everywhere in this bench, the ratio is the median of paired ones (the two timed back
      // to back on the same batch), with its middle half: one stall on a shared machine moves
      // a ratio of totals, not the median.
      const paired = median(pairedRatios);
      log(`llama-server (8 slots, batched) ${fmt(peerEmbedPerSecond)}/s; over the whole run API / llama-server ${fmt(apiEmbedPerSecond / peerEmbedPerSecond, 3)}×`);
      log(`per batch of 64, API / llama-server timed back to back: median **${fmt(paired, 3)}×**, middle half ${fmt(percentile(pairedRatios, 25), 3)}–${fmt(percentile(pairedRatios, 75), 3)}× over ${pairedRatios.length} pairs ${verdict(paired, 1)} (goal ≥ 1.0)`);
    }
    else log("(llama-server not built: run `npm run bench:setup` first)");
  }
  await pustaka.stop();

  // 5. Threads (informational): the same in-process decode at 1 and 2 threads.
  if (want("threads") && !process.env.BENCH_SKIP_THREADS) {
    const byThreads = [];
    for (const threads of [1, 2]) {
      const worker = await startReference(ROOT, { model: CHAT_MODEL, threads, contextSize: CONTEXT });
      const runs = [];
      for (const i of [1, 2, 3, 4]) runs.push(await worker.request<StreamResult>({ op: "chat", prompt: prompt(i), maxTokens: 64 }));
      await worker.stop();
      byThreads.push({ threads, ...summarize(runs) });
    }
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
