/**
 * Prompt caching (`npm run bench:cache`, also part of `npm run bench`): time to first token
 * on multi-turn conversations with the cache on and off. Two servers on the same model and
 * threads, each with two sequences; on each, two conversations (different system prompts)
 * take turns for BENCH_CACHE_TURNS (6) turns each, streamed, greedy, 32 tokens a reply. The
 * two servers take turns request by request (rotating who goes first), so drift on a shared
 * machine falls on both alike. Reported per turn: median TTFT with and without the cache,
 * their ratio, the prompt's length and the tokens reused.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { testModel } from "../test/helpers/models.js";
import { median, startInProcessServer } from "./lib.js";

const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const TURNS = Number(process.env.BENCH_CACHE_TURNS ?? 6);
const KEY = "psk-benchmark-key-0000000000";
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};

const SYSTEMS = [
  "You are an analyst at a Malaysian disaster-relief agency. You read flood reports from Kelantan, Terengganu, Pahang and Johor, and you answer questions about water levels, evacuations, relief centres, damaged roads and bridges, and the cost of repairs. Answer briefly and say which state and which week you mean. If a report does not say, answer that it does not say.",
  "Anda pembantu penyelidik di sebuah agensi bantuan bencana di Malaysia. Anda membaca laporan banjir dari Kelantan, Terengganu, Pahang dan Johor, dan menjawab soalan tentang paras air, pemindahan mangsa, pusat pemindahan, jalan dan jambatan yang rosak, serta kos pembaikan. Jawab dengan ringkas dan sebut negeri serta minggu yang dimaksudkan.",
];
const QUESTIONS = [
  "What happened in Kelantan in the first week?",
  "Which rivers rose above the danger level?",
  "How many families moved to relief centres?",
  "Which roads were closed, and for how long?",
  "What did the repairs cost?",
  "What should be done before the next monsoon?",
  "Summarise the situation in two sentences.",
  "Which district was hit hardest?",
];

interface Turn {
  ttftMs: number;
  promptTokens: number;
  cachedTokens: number;
  text: string;
}

async function streamTurn(url: string, messages: { role: string; content: string }[]): Promise<Turn> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "chat", messages, max_tokens: 32, temperature: 0, stream: true, stream_options: { include_usage: true } }),
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffer = "";
  let first = 0;
  let text = "";
  let usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } } | undefined;
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const data = buffer.slice(0, end).replace(/^data: /, "");
      buffer = buffer.slice(end + 2);
      if (!data || data === "[DONE]") continue;
      const parsed = JSON.parse(data) as { choices: { delta?: { content?: string } }[]; usage?: typeof usage | null };
      const content = parsed.choices[0]?.delta?.content;
      if (content) {
        first ||= performance.now();
        text += content;
      }
      if (parsed.usage) usage = parsed.usage;
    }
  }
  if (!usage) throw new Error("no usage in the stream");
  return { ttftMs: (first || performance.now()) - started, promptTokens: usage.prompt_tokens, cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0, text };
}

async function start(promptCache: boolean) {
  const server = await startInProcessServer(`cache-${promptCache ? "on" : "off"}`, KEY, THREADS, {
    chat: { contextSize: 2048, sequences: 2, promptCache },
    models: { bindings: { chat: testModel("gemma3-270m") } },
  });
  return { promptCache, server };
}

async function main() {
  log(`# Prompt caching (${THREADS} thread${THREADS === 1 ? "" : "s"}, Gemma 3 270M, 2 sequences, 2 conversations × ${TURNS} turns, ${os.cpus().length} CPUs)`);
  const servers = [await start(true), await start(false)];
  try {
    for (const s of servers) await streamTurn(s.server.url, [{ role: "user", content: "Hello" }]); // load the model
    // Each server has its own copy of the two conversations (their replies are the same tokens).
    const conversations = servers.map(() => SYSTEMS.map((content) => [{ role: "system", content }]));
    const results = servers.map(() => Array.from({ length: TURNS }, () => [] as Turn[]));
    let order = 0;
    for (let turn = 0; turn < TURNS; turn++) {
      for (let c = 0; c < SYSTEMS.length; c++) {
        const question = QUESTIONS[turn % QUESTIONS.length]!;
        const pair = order++ % 2 === 0 ? [0, 1] : [1, 0];
        for (const s of pair) {
          const messages = [...conversations[s]![c]!, { role: "user", content: question }];
          const result = await streamTurn(servers[s]!.server.url, messages);
          conversations[s]![c] = [...messages, { role: "assistant", content: result.text }];
          results[s]![turn]!.push(result);
        }
      }
    }
    log("\n| turn | prompt tokens | reused (cache on) | TTFT cache on, ms | TTFT cache off, ms | on / off |");
    log("|---|---|---|---|---|---|");
    const perTurn = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const on = results[0]![turn]!;
      const off = results[1]![turn]!;
      const row = {
        turn: turn + 1,
        promptTokens: median(on.map((r) => r.promptTokens)),
        cachedTokens: median(on.map((r) => r.cachedTokens)),
        ttftOnMs: median(on.map((r) => r.ttftMs)),
        ttftOffMs: median(off.map((r) => r.ttftMs)),
      };
      perTurn.push(row);
      log(`| ${row.turn} | ${fmt(row.promptTokens, 0)} | ${fmt(row.cachedTokens, 0)} | ${fmt(row.ttftOnMs)} | ${fmt(row.ttftOffMs)} | ${fmt(row.ttftOnMs / row.ttftOffMs, 3)} |`);
    }
    const later = (s: number) => results[s]!.slice(1).flat().map((r) => r.ttftMs);
    const ratio = median(later(0)) / median(later(1));
    log(`\nTurns 2–${TURNS}: median TTFT ${fmt(median(later(0)))} ms with the cache, ${fmt(median(later(1)))} ms without (${fmt(ratio, 3)}×).`);
    const dir = path.join(import.meta.dirname, "results");
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    writeFileSync(path.join(dir, `prompt-cache-${stamp}.json`), JSON.stringify({ threads: THREADS, turns: TURNS, perTurn, laterTurnsRatio: ratio }, null, 2));
    writeFileSync(path.join(dir, `prompt-cache-${stamp}.md`), `${lines.join("\n")}\n`);
  } finally {
    for (const s of servers) {
      await s.server.stop();
    }
  }
}

await main();
