/**
 * `npm run bench`: Pustaka's API against node-llama-cpp in-process and against
 * llama.cpp's own servers (llama-server, llama-cpp-python), on the same GGUF and thread
 * count, in one run. Concurrent chat is measured on each chat model of `BENCH_MODELS` and
 * embeddings on each embedding model. Prints a Markdown report and writes JSON to
 * bench/results/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { llamaServerBinary } from "../test/helpers/llama-server.js";
import { testModel, type TestModelId } from "../test/helpers/models.js";
import { anonHugePagesMb, childPids, cpuDescription, decodeRate, loadedCpuVariant, median, percentile, rssMb, spawnUntil, startReference, streamChat, type StreamResult } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const MAX_TOKENS = 128;
const CONTEXT = 1024;
const KEY = "psk-benchmark-key-0000000000";
/** The chat models concurrency is measured on (`BENCH_MODELS=smollm2,gemma3,qwen2.5`, or some of them); the other sections use Gemma 3. */
const CHAT_MODELS: Record<string, { id: TestModelId; label: string }> = {
  smollm2: { id: "smollm2-135m-instruct", label: "SmolLM2-135M-Instruct Q4_1" },
  gemma3: { id: "gemma3-270m", label: "Gemma 3 270M Q4_K_M" },
  "qwen2.5": { id: "qwen2.5-coder-1.5b", label: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M" },
};
/** The embedding models measured against llama-server (`BENCH_EMBED_MODELS=minilm,e5`, or one). */
const EMBED_MODELS: Record<string, { id: TestModelId; label: string }> = {
  minilm: { id: "all-minilm-l6-v2", label: "all-MiniLM-L6-v2 F16" },
  e5: { id: "multilingual-e5-small", label: "multilingual-e5-small Q4_0" },
};
function chosen<T>(variable: string, table: Record<string, T>): [string, T][] {
  const names = (process.env[variable] ?? Object.keys(table).join(",")).split(",").map((m) => m.trim()).filter(Boolean);
  return names.map((name) => {
    const entry = table[name];
    if (!entry) throw new Error(`${variable}: unknown model '${name}' (one of ${Object.keys(table).join(", ")})`);
    return [name, entry];
  });
}
const BENCH_MODELS = chosen("BENCH_MODELS", CHAT_MODELS);
const BENCH_EMBED_MODELS = chosen("BENCH_EMBED_MODELS", EMBED_MODELS);
/** Goals against llama-server: one stream ahead by 5%, every other level at least level. */
const chatGoal = (streams: number) => (streams === 1 ? 1.05 : 1.0);
const CHAT_MODEL = testModel("gemma3-270m");
const EMBED_MODEL = testModel("all-minilm-l6-v2");
const BENCH_CACHE = process.env.PUSTAKA_BENCH_CACHE ?? path.join(os.homedir(), ".cache", "pustaka", "bench");
const PEER_PYTHON = path.join(BENCH_CACHE, "llama-server-venv", "bin", "python");
/**
 * llama.cpp's own `llama-server`, built by `npm run llama:server` from the llama.cpp release
 * Pustaka's engine is built from, with the install's own CPU backend variants beside it: both
 * servers load the same kernels for this CPU (the report names the variant each loaded), so
 * the ratio compares serving code, not compilers. `BENCH_LLAMA_SERVER` names another binary.
 */
const LLAMA_SERVER = process.env.BENCH_LLAMA_SERVER ?? llamaServerBinary();
/**
 * `BENCH_PEER_HUGE_PAGES=1`: llama-server reads its model into memory backed by huge pages as
 * Pustaka does (`--load-mode none`, no mmap, and glibc's hugetlb tunable) instead of mapping the file, its
 * default: what the lead owes to where the weights sit, and what to the serving code.
 */
const PEER_HUGE_PAGES = process.env.BENCH_PEER_HUGE_PAGES === "1";
/** Rounds of the embedding batches, and of eight concurrent streams (fewer streams get more rounds; who goes first rotates). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `BENCH_SECTIONS=concurrency,embeddings` runs only those (idle, single, concurrency, embeddings, threads). */
const SECTIONS = process.env.BENCH_SECTIONS ? new Set(process.env.BENCH_SECTIONS.split(",").map((s) => s.trim())) : null;
const want = (section: string) => !SECTIONS || SECTIONS.has(section);
const verdict = (ratio: number, goal: number) => (Number.isFinite(ratio) ? (ratio >= goal ? "PASS" : "short") : "n/a");

// Every prompt runs to the token limit on each chat model through either server's chat template
// (numbered "Story N." prompts made Qwen2.5-Coder refuse some, ending them early on one side only).
const NAMES = ["Ahmad", "Siti", "Rahman", "Aminah", "Hassan", "Fatimah", "Ismail", "Zainab"];
const prompt = (i: number) => `Write a long story about ${NAMES[i % NAMES.length]}, who fishes off the coast of Terengganu and finds a strange pearl, and what happens to the village.`;
const report: Record<string, unknown> = { date: new Date().toISOString(), cpu: cpuDescription(), llamaServer: LLAMA_SERVER, llamaServerHugePages: PEER_HUGE_PAGES, threads: THREADS, runs: RUNS, maxTokens: MAX_TOKENS, chatModel: CHAT_MODEL, embedModel: EMBED_MODEL, cpus: os.cpus().length };
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

async function startPustaka(parallel: number, chatModel = CHAT_MODEL, embedModel = EMBED_MODEL) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-"));
  // Throughput is measured without the default tier's 60 requests a minute (the limiter still runs).
  const config = path.join(dataDir, "bench-config.json");
  writeFileSync(config, JSON.stringify({ rateLimits: { defaultTier: "unlimited" } }));
  const server = await spawnUntil(
    process.execPath,
    [path.join(ROOT, "dist", "src-server", "cli.js"), "serve", "--port", "0", "--data-dir", dataDir, "--config", config, "--threads", String(THREADS), "--parallel", String(parallel), "--context-size", String(CONTEXT), "--log-level", "warn",
      "--model", `svc-merlion-13b=${chatModel}`, "--model", `minilm=${embedModel}`],
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
 * llama.cpp's own `llama-server` on a chat model with `chat` slots (continuous batching), or
 * on an embedding model (batched embeddings).
 */
async function startLlamaServer(mode: { chat: number; model: string } | { embed: number; model: string }) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const common = ["--host", "127.0.0.1", "--port", String(port), "-t", String(THREADS), "-tb", String(THREADS), "--api-key", KEY, "--no-webui"];
  const args =
    "chat" in mode
      ? ["-m", mode.model, "-a", "svc-merlion-13b", "-c", String(CONTEXT * mode.chat), "-np", String(mode.chat), ...common]
      : // A batch must hold whole inputs for a non-causal encoder: one ubatch of the whole context.
        ["-m", mode.model, "-a", "minilm", "--embedding", "--pooling", "mean", "-c", String(512 * mode.embed), "-np", String(mode.embed), "-b", String(512 * mode.embed), "-ub", String(512 * mode.embed), ...common];
  const hugePages = PEER_HUGE_PAGES ? { GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" } : {};
  const server = await spawnUntil(LLAMA_SERVER, [...args, ...(PEER_HUGE_PAGES ? ["--load-mode", "none"] : [])], /listening on http:\/\//, { LD_LIBRARY_PATH: path.dirname(LLAMA_SERVER), ...hugePages });
  return { ...server, url: `http://127.0.0.1:${port}` };
}

/** The CPU backend variant ggml loaded in Pustaka's server (the supervisor's child) and in the peer. */
function variants(pustakaSupervisor: number, peer: number) {
  const server = childPids(pustakaSupervisor)[0];
  return {
    pustaka: server === undefined ? null : loadedCpuVariant(server),
    llamaServer: loadedCpuVariant(peer),
    // how much of each server's memory is in transparent huge pages (MB): the weights, when Pustaka reads them into memory
    pustakaHugePagesMb: server === undefined ? null : anonHugePagesMb(server),
    llamaServerHugePagesMb: anonHugePagesMb(peer),
  };
}

/** `run`, and when it fails, the error with what the server said last (a crash names itself there). */
async function explained<T>(server: { output: () => string }, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new Error(`${String(error)}; the server's last output:\n${server.output().slice(-4000)}`, { cause: error });
  }
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
  const cpu = cpuDescription();
  log(`CPU: **${cpu.model}**, ${os.cpus().length} cores (${cpu.flags.join(" ")}); threads per context: ${THREADS}; temperature 0`);
  log(`llama-server: \`${LLAMA_SERVER}\`${PEER_HUGE_PAGES ? ", run with `--load-mode none` (no mmap) and `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` (BENCH_PEER_HUGE_PAGES)" : ", its defaults (the model file mapped)"}\n`);

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
  if (want("single")) {
    log(`## One stream (${path.basename(CHAT_MODEL)}, ${RUNS} runs of ${MAX_TOKENS} tokens)`);
    const pustaka = await startPustaka(8);
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
    await pustaka.stop();
  }

  // 3. Concurrency, on each chat model: against llama-server with as many slots as Pustaka has
  //    sequences (8). Each level gets the same number of tokens (ROUNDS × 8 streams' worth:
  //    8×ROUNDS rounds of one stream, ROUNDS rounds of eight), so the short levels are not
  //    judged on a handful of requests. In each round both servers run the level back to back,
  //    who goes first rotating; the ratio is the median of the rounds' ratios (each pair shares
  //    the machine's state at that moment), with the middle half of them as its spread.
  if (want("concurrency")) {
    const byModel: Record<string, unknown> = {};
    for (const [name, { id, label }] of BENCH_MODELS) {
      const model = testModel(id);
      const pustaka = await startPustaka(8, model);
      // The model loads on first use: not inside the first round.
      await streamChat(pustaka.url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: "warm up" }], max_tokens: 4 });
      const llamaServer = await startLlamaServer({ chat: 8, model });
      await streamChat(llamaServer.url, KEY, { model: "svc-merlion-13b", messages: [{ role: "user", content: "warm up" }], max_tokens: 4 });
      const variant = variants(pustaka.child.pid!, llamaServer.child.pid!);
      log(`\n## Concurrent streams: ${label} (64 tokens each, 8 sequences / slots)`);
      log(`\`${path.basename(model)}\`; CPU backend loaded: Pustaka \`${variant.pustaka ?? "?"}\`, llama-server \`${variant.llamaServer ?? "?"}\`; in transparent huge pages: Pustaka ${fmt(variant.pustakaHugePagesMb ?? NaN, 0)} MB, llama-server ${fmt(variant.llamaServerHugePagesMb ?? NaN, 0)} MB\n`);
      log("| streams | rounds | Pustaka tok/s | TTFT p50 / p95 (ms) | llama-server tok/s | TTFT p50 / p95 (ms) | tokens per reply (Pustaka / llama-server) | ratio, paired rounds (middle half) | goal | |");
      log("|---|---|---|---|---|---|---|---|---|---|");
      const sweep = [];
      for (const n of [1, 2, 4, 8]) {
        const ours: Awaited<ReturnType<typeof concurrent>>[] = [];
        const theirs: Awaited<ReturnType<typeof concurrent>>[] = [];
        const rounds = ROUNDS * Math.max(1, Math.round(8 / n));
        for (let round = 0; round < rounds; round++) {
          const turns = [async () => void ours.push(await explained(pustaka, () => concurrent(pustaka.url, n, true))), async () => void theirs.push(await explained(llamaServer, () => concurrent(llamaServer.url, n, true)))];
          for (let k = 0; k < turns.length; k++) await turns[(round + k) % turns.length]!();
        }
        const rate = (runs: typeof ours) => median(runs.map((r) => r.tokensPerSecond));
        const ttft = (runs: typeof ours) => `${fmt(percentile(runs.flatMap((r) => r.ttfts), 50))} / ${fmt(percentile(runs.flatMap((r) => r.ttfts), 95))}`;
        const perReply = (runs: typeof ours) => runs.reduce((t, r) => t + r.tokens, 0) / runs.reduce((t, r) => t + r.streams, 0);
        const pairedRatios = ours.map((r, i) => r.tokensPerSecond / theirs[i]!.tokensPerSecond);
        const ratio = median(pairedRatios);
        const spread = [percentile(pairedRatios, 25), percentile(pairedRatios, 75)];
        const goal = chatGoal(n);
        sweep.push({ streams: n, rounds, pustakaTokS: rate(ours), llamaServerTokS: rate(theirs), ratio, ratioIqr: spread, goal, pass: ratio >= goal, pairedRatios, pustakaTtftMs: ours.flatMap((r) => r.ttfts), llamaServerTtftMs: theirs.flatMap((r) => r.ttfts), tokensPerReply: { pustaka: perReply(ours), llamaServer: perReply(theirs) } });
        log(`| ${n} | ${rounds} | ${fmt(rate(ours))} | ${ttft(ours)} | ${fmt(rate(theirs))} | ${ttft(theirs)} | ${fmt(perReply(ours))} / ${fmt(perReply(theirs))} | **${fmt(ratio, 3)}** (${fmt(spread[0]!, 2)}–${fmt(spread[1]!, 2)}) | ≥ ${fmt(goal, 2)} | ${verdict(ratio, goal)} |`);
      }
      await llamaServer.stop();
      await pustaka.stop();
      byModel[name] = { model, label, cpuVariant: variant, sweep };
    }
    report.concurrency = byModel;
    // One line per model: the paired ratio at each level against its goal.
    log(`\n### Concurrent chat against llama-server, ${cpuDescription().model}: paired ratio (goal)`);
    log("| model | 1 stream (≥ 1.05) | 2 (≥ 1.0) | 4 (≥ 1.0) | 8 (≥ 1.0) |");
    log("|---|---|---|---|---|");
    for (const [name, { label }] of BENCH_MODELS) {
      const sweep = (byModel[name] as { sweep: { ratio: number; goal: number }[] }).sweep;
      log(`| ${label} | ${sweep.map((l) => `${fmt(l.ratio, 3)} ${verdict(l.ratio, l.goal)}`).join(" | ")} |`);
    }
  }

  // 4. Embeddings, on each embedding model: batches of 64 through the API, taking turns with the
  //    same batch in-process and through llama-server.
  if (want("embeddings")) {
    const byModel: Record<string, unknown> = {};
    const inputs = Array.from({ length: 256 }, (_, i) => `Sentence ${i}: the monsoon season brings heavy rain to the east coast of Peninsular Malaysia.`);
    for (const [name, { id, label }] of BENCH_EMBED_MODELS) {
      const model = testModel(id);
      const pustaka = await startPustaka(8, CHAT_MODEL, model);
      const embedReference = await startReference(ROOT, { model, threads: THREADS, contextSize: 512, embed: true });
      await embedReference.request({ op: "embed", inputs: ["warm up"] });
      const post = async (base: string, input: string[]) => {
        const res = await fetch(`${base}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "minilm", input }) });
        if (!res.ok) throw new Error(`${base} embeddings: ${res.status} ${await res.text()}`);
        await res.json();
      };
      await post(pustaka.url, ["warm up"]);
      const embedPeer = await startLlamaServer({ embed: 8, model });
      await post(embedPeer.url, ["warm up"]);
      const variant = variants(pustaka.child.pid!, embedPeer.child.pid!);
      let apiMs = 0;
      let refMs = 0;
      let peerMs = 0;
      // Each batch's API / llama-server rate, the two timed back to back: the spread of the ratio.
      const pairedRatios: number[] = [];
      const timed = async (send: () => Promise<unknown>) => {
        const started = performance.now();
        await send();
        return performance.now() - started;
      };
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < inputs.length; i += 64) {
          const batch = inputs.slice(i, i + 64);
          let apiBatchMs = 0;
          let peerBatchMs = 0;
          const turns = [
            async () => void (apiBatchMs = await timed(() => post(pustaka.url, batch))),
            async () => void (refMs += (await embedReference.request<{ ms: number }>({ op: "embed", inputs: batch })).ms),
            async () => void (peerBatchMs = await timed(() => post(embedPeer.url, batch))),
          ];
          for (let k = 0; k < turns.length; k++) await turns[(round + i / 64 + k) % turns.length]!();
          apiMs += apiBatchMs;
          peerMs += peerBatchMs;
          pairedRatios.push(peerBatchMs / apiBatchMs);
        }
      }
      await embedReference.stop();
      await embedPeer.stop();
      await pustaka.stop();
      const embedded = inputs.length * ROUNDS;
      const apiPerSecond = embedded / (apiMs / 1000);
      const refPerSecond = embedded / (refMs / 1000);
      const peerPerSecond = embedded / (peerMs / 1000);
      // As everywhere in this bench, the ratio is the median of paired ones (the two timed back
      // to back on the same batch), with its middle half: one stall on a shared machine moves
      // a ratio of totals, not the median.
      const paired = median(pairedRatios);
      const spread = [percentile(pairedRatios, 25), percentile(pairedRatios, 75)];
      byModel[name] = { model, label, cpuVariant: variant, inProcessPerSecond: refPerSecond, apiPerSecond, llamaServerPerSecond: peerPerSecond, pairedRatio: paired, pairedRatioIqr: spread, pass: paired >= 1, pairedRatios };
      log(`\n## Embeddings: ${label} (${inputs.length} inputs × ${ROUNDS} rounds, batches of 64, taking turns)`);
      log(`CPU backend loaded: Pustaka \`${variant.pustaka ?? "?"}\`, llama-server \`${variant.llamaServer ?? "?"}\``);
      log(`in-process ${fmt(refPerSecond)}/s, API ${fmt(apiPerSecond)}/s: **${fmt((apiPerSecond / refPerSecond) * 100)}%** of in-process (target ≥ 90%)`);
      log(`llama-server (8 slots, batched) ${fmt(peerPerSecond)}/s; over the whole run API / llama-server ${fmt(apiPerSecond / peerPerSecond, 3)}×`);
      log(`per batch of 64, API / llama-server timed back to back: median **${fmt(paired, 3)}×**, middle half ${fmt(spread[0]!, 3)}–${fmt(spread[1]!, 3)}× over ${pairedRatios.length} pairs ${verdict(paired, 1)} (goal ≥ 1.0)`);
    }
    report.embeddings = byModel;
  }

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
