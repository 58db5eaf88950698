/**
 * What each client-facing translation costs (`npm run bench:endpoints`, also part of
 * `npm run bench`): the same prompt, streamed, through `/v1/chat/completions` (the
 * reference), `/v1/responses`, `/v1/messages` and `/v1/completions` (the prompt written in the
 * chat model's own template, so the model sees the same tokens), on one server, one model,
 * the same threads, greedy. The four take turns request by request, rotating who goes
 * first, for BENCH_ENDPOINT_ROUNDS (12) rounds; reported per endpoint: median decode
 * tokens/s and time to first token, the median of the paired decode ratios against chat
 * (with their IQR) and the median paired TTFT difference. Prompt and completion token
 * counts are printed too, to show each endpoint did the same work.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { testModel } from "../test/helpers/models.js";
import { median, percentile, startInProcessServer } from "./lib.js";

const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const ROUNDS = Number(process.env.BENCH_ENDPOINT_ROUNDS ?? 12);
const MAX_TOKENS = 64;
const KEY = "psk-benchmark-key-0000000000";
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};

interface Timed {
  ttftMs: number;
  decodeMs: number;
  /** Completion tokens as the endpoint's usage reported them. */
  tokens: number;
  promptTokens: number;
  text: string;
}

/** Pieces an endpoint's stream event carries: text, and the usage when it is there. */
interface Piece {
  text?: string;
  completionTokens?: number;
  promptTokens?: number;
}

/** The fields of the four endpoints' stream events that the benchmark reads. */
interface StreamEvent {
  choices?: { delta?: { content?: string | null }; text?: string }[];
  usage?: { completion_tokens?: number; prompt_tokens?: number; output_tokens?: number; input_tokens?: number } | null;
  delta?: string | { type?: string; text?: string };
  response?: { usage: { input_tokens: number; output_tokens: number } };
  message?: { usage: { input_tokens: number } };
}

interface Endpoint {
  name: string;
  path: string;
  body(question: string): Record<string, unknown>;
  read(event: string | undefined, data: StreamEvent): Piece;
}

/** Gemma 3's chat template for one user turn, as the chat endpoints render it. */
const gemmaPrompt = (question: string) => `<start_of_turn>user\n${question}<end_of_turn>\n<start_of_turn>model\n`;

const ENDPOINTS: Endpoint[] = [
  {
    name: "chat/completions",
    path: "/v1/chat/completions",
    body: (q) => ({ model: "chat", messages: [{ role: "user", content: q }], max_tokens: MAX_TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } }),
    read: (_e, d) => ({ text: d.choices?.[0]?.delta?.content ?? undefined, completionTokens: d.usage?.completion_tokens, promptTokens: d.usage?.prompt_tokens }),
  },
  {
    name: "responses",
    path: "/v1/responses",
    body: (q) => ({ model: "chat", input: q, max_output_tokens: MAX_TOKENS, temperature: 0, stream: true, store: false }),
    read: (e, d) =>
      e === "response.output_text.delta" && typeof d.delta === "string"
        ? { text: d.delta }
        : (e === "response.completed" || e === "response.incomplete") && d.response
          ? { completionTokens: d.response.usage.output_tokens, promptTokens: d.response.usage.input_tokens }
          : {},
  },
  {
    name: "messages (Anthropic)",
    path: "/v1/messages",
    body: (q) => ({ model: "chat", messages: [{ role: "user", content: q }], max_tokens: MAX_TOKENS, temperature: 0, stream: true }),
    read: (e, d) =>
      e === "content_block_delta" && typeof d.delta === "object" && d.delta.type === "text_delta"
        ? { text: d.delta.text }
        : e === "message_start" && d.message
          ? { promptTokens: d.message.usage.input_tokens }
          : e === "message_delta"
            ? { completionTokens: d.usage?.output_tokens }
            : {},
  },
  {
    name: "completions (template by hand)",
    path: "/v1/completions",
    body: (q) => ({ model: "chat", prompt: gemmaPrompt(q), max_tokens: MAX_TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } }),
    read: (_e, d) => ({ text: d.choices?.[0]?.text || undefined, completionTokens: d.usage?.completion_tokens, promptTokens: d.usage?.prompt_tokens }),
  },
];

/** One streamed request, timed from sending to the first and last text. Events are parsed only when complete. */
async function timed(url: string, endpoint: Endpoint, question: string): Promise<Timed> {
  const started = performance.now();
  const response = await fetch(`${url}${endpoint.path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(endpoint.body(question)),
  });
  if (!response.ok || !response.body) throw new Error(`${endpoint.path}: HTTP ${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffer = "";
  let first = 0;
  let last = 0;
  let text = "";
  let tokens = NaN;
  let promptTokens = NaN;
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = raw.split("\n").find((l) => l.startsWith("event: "))?.slice(7);
      const data = raw.split("\n").find((l) => l.startsWith("data: "))?.slice(6);
      if (!data || data === "[DONE]") continue;
      const piece = endpoint.read(event, JSON.parse(data) as StreamEvent);
      if (piece.text) {
        const now = performance.now();
        if (!first) first = now;
        last = now;
        text += piece.text;
      }
      if (piece.completionTokens !== undefined) tokens = piece.completionTokens;
      if (piece.promptTokens !== undefined) promptTokens = piece.promptTokens;
    }
  }
  if (!Number.isFinite(tokens)) throw new Error(`${endpoint.path} reported no usage`);
  return { ttftMs: first - started, decodeMs: last - first, tokens, promptTokens, text };
}

const decodeRate = (r: Timed) => (r.tokens > 1 ? ((r.tokens - 1) / r.decodeMs) * 1000 : NaN);

const QUESTIONS = [
  "Tell a short story about a fisherman in Terengganu.",
  "Explain how a monsoon forms, in simple words.",
  "Write a short poem about the rain in Kuala Lumpur.",
  "Describe a day at a night market in Penang.",
];

async function main() {
  log(`# Endpoint overhead (${THREADS} thread${THREADS === 1 ? "" : "s"}, ${ROUNDS} rounds of ${MAX_TOKENS}-token streams, Gemma 3 270M, ${os.cpus().length} CPUs)`);
  const server = await startInProcessServer("endpoints", KEY, THREADS, {
    chat: { contextSize: 1024, sequences: 1 },
    models: { bindings: { chat: testModel("gemma3-270m") } },
  });
  try {
    for (const endpoint of ENDPOINTS) await timed(server.url, endpoint, QUESTIONS[0]!); // warm up
    const runs = new Map<string, Timed[]>(ENDPOINTS.map((e) => [e.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const question = QUESTIONS[round % QUESTIONS.length]!;
      const order = ENDPOINTS.map((_, i) => ENDPOINTS[(i + round) % ENDPOINTS.length]!);
      for (const endpoint of order) runs.get(endpoint.name)!.push(await timed(server.url, endpoint, question));
    }
    const reference = runs.get(ENDPOINTS[0]!.name)!;
    log("\n| endpoint | decode tok/s | TTFT ms | decode vs chat (paired, IQR) | TTFT − chat (paired median) | prompt / completion tokens | same text as chat |");
    log("|---|---|---|---|---|---|---|");
    const result: Record<string, unknown> = {};
    for (const endpoint of ENDPOINTS) {
      const r = runs.get(endpoint.name)!;
      const ratios = r.map((x, i) => decodeRate(x) / decodeRate(reference[i]!));
      const ttftDelta = r.map((x, i) => x.ttftMs - reference[i]!.ttftMs);
      const same = r.filter((x, i) => x.text === reference[i]!.text).length;
      log(
        `| ${endpoint.name} | ${fmt(median(r.map(decodeRate)))} | ${fmt(median(r.map((x) => x.ttftMs)))} | ${fmt(median(ratios), 3)} (${fmt(percentile(ratios, 25), 3)}–${fmt(percentile(ratios, 75), 3)}) | ${fmt(median(ttftDelta))} ms | ${fmt(median(r.map((x) => x.promptTokens)), 0)} / ${fmt(median(r.map((x) => x.tokens)), 0)} | ${same}/${r.length} |`,
      );
      result[endpoint.name] = { decodeTokS: median(r.map(decodeRate)), ttftMs: median(r.map((x) => x.ttftMs)), decodeRatio: median(ratios), ttftDeltaMs: median(ttftDelta), sameText: same, runs: r.length };
    }
    const dir = path.join(import.meta.dirname, "results");
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    writeFileSync(path.join(dir, `endpoints-${stamp}.json`), JSON.stringify({ threads: THREADS, rounds: ROUNDS, result }, null, 2));
    writeFileSync(path.join(dir, `endpoints-${stamp}.md`), `${lines.join("\n")}\n`);
  } finally {
    await server.stop();
  }
}

await main();
