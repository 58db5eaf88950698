/**
 * Remote models (`npm run bench:remote`, also part of `npm run bench`): what Pustaka costs
 * in front of llama.cpp's own llama-server, and what its routing buys, all in one run, on the
 * llama-server `npm run llama:server` built from the llama.cpp the install unpacked.
 *
 * 1. Proxy cost: Pustaka → llama-server against llama-server directly, the same server, the
 *    same model (Gemma 3 270M Q4_K_M), greedy, streamed, 64 tokens; rounds alternate who goes
 *    first. At 1 stream and at 8 streams: aggregate decode tokens/s per round, paired ratio;
 *    time to first token, the median paired difference. Embeddings (all-MiniLM-L6-v2, batches
 *    of 32 passages): inputs/s, paired ratio.
 * 2. Replicas: 8 streams on two llama-server replicas, each pinned to its own core
 *    (`taskset`), behind Pustaka, against one such replica behind Pustaka: aggregate tokens/s.
 * 3. Prefix affinity: 8 conversations of 6 turns over the two replicas, a long shared-nothing
 *    first message each (so a turn's prompt cache matters), with affinity on and off: time to
 *    first token of turns 2–6.
 *
 * BENCH_REMOTE_ROUNDS (default 8) rounds per comparison.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startLlamaServer, type LlamaServer } from "../test/helpers/llama-server.js";
import { testModel } from "../test/helpers/models.js";
import { median, percentile, startInProcessServer, streamChat, type StreamResult } from "./lib.js";

const ROUNDS = Number(process.env.BENCH_REMOTE_ROUNDS ?? 8);
/** Sections to run: proxy, replicas, affinity (default all). */
const SECTIONS = new Set((process.env.BENCH_REMOTE_SECTIONS ?? "proxy,replicas,affinity").split(","));
const KEY = "psk-benchmark-key-0000000000";
const MAX_TOKENS = 64;
const fmt = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
const iqr = (xs: number[]) => `${fmt(percentile(xs, 25))}–${fmt(percentile(xs, 75))}`;
const QUESTIONS = [
  "Write a short story about a river in Pahang.",
  "Explain how a bill becomes law in Malaysia.",
  "Describe the monsoon seasons of the peninsula.",
  "List the steps to brew teh tarik.",
  "Tell a story about a lighthouse keeper.",
  "Explain what a prompt cache does.",
  "Describe a market in Kuching at dawn.",
  "Write a poem about the Straits of Malacca.",
];

let serial = 0;

/**
 * One round of `streams` concurrent chats against `url` (a Pustaka or a llama-server, both
 * speak /v1/chat/completions). Each prompt starts with its own serial number, so no request
 * finds another's prompt in a server's cache: the sides compare decoding, not cache luck.
 */
async function round(url: string, model: string, streams: number, offset: number): Promise<{ tokensPerSecond: number; ttft: number[]; results: StreamResult[] }> {
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: streams }, (_, i) =>
      streamChat(url, KEY, { model, messages: [{ role: "user", content: `(${++serial}) ${QUESTIONS[(i + offset) % QUESTIONS.length]!}` }], max_tokens: MAX_TOKENS, temperature: 0, stream_options: { include_usage: true } }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  return { tokensPerSecond: results.reduce((n, r) => n + r.tokens, 0) / seconds, ttft: results.map((r) => r.ttftMs), results };
}

async function proxyCost(chatUp: LlamaServer, embedUp: LlamaServer, front: { url: string }): Promise<Record<string, unknown>> {
  const direct = chatUp.url.replace(/\/v1$/, "");
  const out: Record<string, unknown> = {};
  for (const streams of [1, 8]) {
    const ratios: number[] = [];
    const ttftDiff: number[] = [];
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let r = 0; r < ROUNDS + 1; r++) {
      const order = r % 2 === 0 ? ["pustaka", "direct"] : ["direct", "pustaka"];
      const got: Record<string, Awaited<ReturnType<typeof round>>> = {};
      for (const who of order) got[who] = await round(who === "pustaka" ? front.url : direct, who === "pustaka" ? "team" : "gemma", streams, r);
      if (r === 0) continue; // warm-up
      ratios.push(got.pustaka!.tokensPerSecond / got.direct!.tokensPerSecond);
      ttftDiff.push(median(got.pustaka!.ttft) - median(got.direct!.ttft));
      ours.push(got.pustaka!.tokensPerSecond);
      theirs.push(got.direct!.tokensPerSecond);
    }
    log(`| chat, ${streams} stream${streams > 1 ? "s" : ""} | ${fmt(median(ours), 1)} vs ${fmt(median(theirs), 1)} tok/s | **${fmt(median(ratios), 3)}×** (${iqr(ratios)}) | +${fmt(median(ttftDiff), 1)} ms | ${median(ratios) >= 0.97 ? "PASS" : "short"} |`);
    out[`chat${streams}`] = { pustaka: median(ours), direct: median(theirs), ratio: median(ratios), ratioIqr: [percentile(ratios, 25), percentile(ratios, 75)], addedTtftMs: median(ttftDiff) };
  }
  // Embeddings: the same batches through Pustaka and straight to llama-server.
  const passages = Array.from({ length: 32 }, (_, i) => `Passage ${i}: the Federal Court sits in Putrajaya and hears appeals from the Court of Appeal, number ${i}.`);
  const embed = async (url: string, model: string) => {
    const started = performance.now();
    const res = await fetch(`${url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model, input: passages }) });
    if (!res.ok) throw new Error(`embeddings: HTTP ${res.status} ${await res.text()}`);
    await res.json();
    return passages.length / ((performance.now() - started) / 1000);
  };
  const eRatios: number[] = [];
  const eOurs: number[] = [];
  const eTheirs: number[] = [];
  for (let r = 0; r < ROUNDS * 3 + 1; r++) {
    const first = r % 2 === 0;
    const a = first ? await embed(front.url, "team-embed") : await embed(embedUp.url.replace(/\/v1$/, ""), "minilm");
    const b = first ? await embed(embedUp.url.replace(/\/v1$/, ""), "minilm") : await embed(front.url, "team-embed");
    if (r === 0) continue;
    const ours = first ? a : b;
    const theirs = first ? b : a;
    eRatios.push(ours / theirs);
    eOurs.push(ours);
    eTheirs.push(theirs);
  }
  log(`| embeddings, 32 per request | ${fmt(median(eOurs), 0)} vs ${fmt(median(eTheirs), 0)} inputs/s | **${fmt(median(eRatios), 3)}×** (${iqr(eRatios)}) | | ${median(eRatios) >= 0.97 ? "PASS" : "short"} |`);
  out.embeddings = { pustaka: median(eOurs), direct: median(eTheirs), ratio: median(eRatios), ratioIqr: [percentile(eRatios, 25), percentile(eRatios, 75)] };
  return out;
}

async function replicas(model: string): Promise<Record<string, unknown>> {
  const [r1, r2] = await Promise.all([
    startLlamaServer({ model, alias: "gemma", parallel: 8, contextSize: 8 * 1024, threads: 1, cpus: "0" }),
    startLlamaServer({ model, alias: "gemma", parallel: 8, contextSize: 8 * 1024, threads: 1, cpus: "1" }),
  ]);
  const two = await startInProcessServer("remote-two", KEY, 1, { models: { remote: { team: { upstreams: [{ url: r1.url, model: "gemma" }, { url: r2.url, model: "gemma" }] } } }, upstreams: { healthIntervalSeconds: 0 } });
  const one = await startInProcessServer("remote-one", KEY, 1, { models: { remote: { team: { upstreams: [{ url: r1.url, model: "gemma" }] } } }, upstreams: { healthIntervalSeconds: 0 } });
  // The machine's own ceiling: the client splitting 4 + 4 straight to the two replicas (no Pustaka).
  const direct = async (r: number) => {
    const started = performance.now();
    const halves = await Promise.all([round(r1.url.replace(/\/v1$/, ""), "gemma", 4, r), round(r2.url.replace(/\/v1$/, ""), "gemma", 4, r + 4)]);
    return halves.reduce((n, h) => n + h.results.reduce((m, x) => m + x.tokens, 0), 0) / ((performance.now() - started) / 1000);
  };
  try {
    const ratios: number[] = [];
    const ceiling: number[] = [];
    const twoRates: number[] = [];
    const oneRates: number[] = [];
    for (let r = 0; r < ROUNDS + 1; r++) {
      const order = r % 2 === 0 ? [two, one] : [one, two];
      const rates = new Map<object, number>();
      for (const server of order) rates.set(server, (await round(server.url, "team", 8, r)).tokensPerSecond);
      const straight = await direct(r);
      if (r === 0) continue;
      ratios.push(rates.get(two)! / rates.get(one)!);
      ceiling.push(straight / rates.get(one)!);
      twoRates.push(rates.get(two)!);
      oneRates.push(rates.get(one)!);
    }
    log(`| 8 streams, two replicas (one core each) vs one | ${fmt(median(twoRates), 1)} vs ${fmt(median(oneRates), 1)} tok/s | **${fmt(median(ratios), 2)}×** (${iqr(ratios)}); the client straight to both: ${fmt(median(ceiling), 2)}× | | ${median(ratios) >= 1.7 ? "PASS" : "short"} |`);
    return { two: median(twoRates), one: median(oneRates), ratio: median(ratios), ratioIqr: [percentile(ratios, 25), percentile(ratios, 75)], directBothRatio: median(ceiling) };
  } finally {
    await Promise.all([two.stop(), one.stop()]);
    await Promise.all([r1.stop(), r2.stop()]);
  }
}

/** A fixed shuffle (a small linear congruential generator seeded by `seed`), the same in both arms. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed * 2654435761;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A long first message per conversation (about 700 tokens), distinct per conversation. */
function document(i: number): string {
  const sentences = Array.from({ length: 60 }, (_, s) => `Clause ${i}.${s}: the parties agree that item ${(i * 61 + s) % 997} is delivered to warehouse ${(s * 7 + i) % 13} before the monsoon.`);
  return `Read this agreement carefully.\n${sentences.join(" ")}\nAnswer questions about it briefly.`;
}

async function affinity(model: string): Promise<Record<string, unknown>> {
  const [r1, r2] = await Promise.all([
    startLlamaServer({ model, alias: "gemma", parallel: 4, contextSize: 4 * 4096, threads: 1, cpus: "0" }),
    startLlamaServer({ model, alias: "gemma", parallel: 4, contextSize: 4 * 4096, threads: 1, cpus: "1" }),
  ]);
  const out: Record<string, unknown> = {};
  try {
    for (const on of [true, false]) {
      const front = await startInProcessServer(`remote-affinity-${on}`, KEY, 1, { models: { remote: { team: { upstreams: [{ url: r1.url, model: "gemma" }, { url: r2.url, model: "gemma" }] } } }, upstreams: { healthIntervalSeconds: 0, prefixAffinity: on } });
      const ttft: number[] = [];
      try {
        const conversations = Array.from({ length: 8 }, (_, i) => [{ role: "user", content: document(i + (on ? 0 : 100)) }] as { role: string; content: string }[]);
        for (let turn = 1; turn <= 6; turn++) {
          // Turns arrive as people type: in a different order each time, a little apart.
          const order = shuffled(conversations.map((_, i) => i), turn);
          const results = await Promise.all(
            conversations.map(async (messages, i) => {
              await new Promise((resolve) => setTimeout(resolve, order.indexOf(i) * 40));
              const result = await streamChat(front.url, KEY, { model: "team", messages, max_tokens: 16, temperature: 0 });
              messages.push({ role: "assistant", content: result.text }, { role: "user", content: `Question ${turn} of conversation ${i}: which warehouse gets item ${(i * 61 + turn) % 997}?` });
              return result;
            }),
          );
          if (turn >= 2) ttft.push(...results.map((r) => r.ttftMs));
        }
      } finally {
        await front.stop();
      }
      out[on ? "on" : "off"] = { ttftP50: median(ttft), ttftP90: percentile(ttft, 90) };
    }
    const on = out.on as { ttftP50: number; ttftP90: number };
    const off = out.off as { ttftP50: number; ttftP90: number };
    log(`| prefix affinity, turns 2–6 TTFT p50 / p90 | on ${fmt(on.ttftP50, 0)} / ${fmt(on.ttftP90, 0)} ms · off ${fmt(off.ttftP50, 0)} / ${fmt(off.ttftP90, 0)} ms | **${fmt(off.ttftP50 / on.ttftP50, 2)}×** faster | | |`);
  } finally {
    await Promise.all([r1.stop(), r2.stop()]);
  }
  return out;
}

async function main(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  log(`# Remote models: Pustaka in front of llama-server (${os.cpus().length} cores, ${cpu}), ${ROUNDS} rounds`);
  log("");
  log("| what | Pustaka vs reference | paired ratio (IQR) | added TTFT p50 | goal |");
  log("|---|---|---|---|---|");
  const gemma = testModel("gemma3-270m");
  const results: Record<string, unknown> = { cpu, cores: os.cpus().length, rounds: ROUNDS };
  if (SECTIONS.has("proxy")) results.proxy = await proxySection(gemma);
  if (os.cpus().length < 2) log("| replicas and affinity | need two cores | | | |");
  else {
    if (SECTIONS.has("replicas")) results.replicas = await replicas(gemma);
    if (SECTIONS.has("affinity")) results.affinity = await affinity(gemma);
  }
  const dir = path.join(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  writeFileSync(path.join(dir, `remote-${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(dir, `remote-${stamp}.md`), `${lines.join("\n")}\n`);
}

async function proxySection(gemma: string): Promise<unknown> {
  const [chatUp, embedUp] = await Promise.all([
    startLlamaServer({ model: gemma, alias: "gemma", parallel: 8, contextSize: 8 * 1024, threads: 2 }),
    startLlamaServer({ model: testModel("all-minilm-l6-v2"), alias: "minilm", kind: "embedding", parallel: 4, contextSize: 4 * 512, threads: 2 }),
  ]);
  const front = await startInProcessServer("remote-front", KEY, 1, {
    models: { remote: { team: { upstreams: [{ url: chatUp.url, model: "gemma" }] }, "team-embed": { type: "embedding", upstreams: [{ url: embedUp.url, model: "minilm" }] } } },
    upstreams: { healthIntervalSeconds: 0 },
  });
  try {
    return await proxyCost(chatUp, embedUp, front);
  } finally {
    await front.stop();
    await Promise.all([chatUp.stop(), embedUp.stop()]);
  }
}

await main();
