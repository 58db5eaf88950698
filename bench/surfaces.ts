/**
 * What each protocol surface costs over the native route it maps to (`npm run bench:surfaces`,
 * also part of `npm run bench`): one server in this process, the same models and threads,
 * paired interleaved rounds, ratios surface / native per round (median and IQR; 1.0 = no
 * overhead, below 1 = slower):
 *
 * - MCP `search_corpus` (a `tools/call` POSTed to `/mcp`, as a client sends it after its
 *   handshake) against `POST /v1/rag/corpora/{id}/search`, the same query and top_k;
 * - OpenAI vector-store search (`POST /v1/vector_stores/{id}/search`) against the native
 *   search of the corpus behind that store;
 * - Ollama `POST /api/chat` against `POST /v1/chat/completions`: 48 tokens at temperature 0,
 *   non-streamed, tokens a second.
 *
 * BENCH_SURFACE_ROUNDS (default 6).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { testModel } from "../test/helpers/models.js";
import { median, percentile, startInProcessServer } from "./lib.js";

const ROUNDS = Number(process.env.BENCH_SURFACE_ROUNDS ?? 6);
const SEARCHES = 20;
const KEY = "psk-benchmark-key-0000000000";
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
const fmt = (n: number, d = 3) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");

const text = (i: number) =>
  `Laporan banjir ${i}. Paras air di Sungai Kelantan meningkat selepas hujan lebat; ${"banjir ".repeat((i % 7) + 1)}menjejaskan ${i * 13} keluarga. The flood report ${i} notes road closures near Kota Bharu and relief centres in district ${i % 9}.`;

/** The few fields of the answers this benchmark reads. */
interface ApiJson {
  id: string;
  metadata?: Record<string, string> | null;
  document_counts: { indexed: number; failed: number };
  file_counts: { in_progress: number };
  usage: { completion_tokens: number };
  eval_count: number;
}

async function call(url: string, method: string, route: string, body?: unknown): Promise<ApiJson> {
  const res = await fetch(`${url}${route}`, { method, headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }), accept: "application/json, text/event-stream" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const raw = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${raw.slice(0, 300)}`);
  return (raw ? JSON.parse(raw) : {}) as ApiJson;
}

async function timed(n: number, one: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await one(i);
  return n / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const server = await startInProcessServer("surfaces", KEY, 1, { models: { bindings: { chat: testModel("gemma3-270m"), embed: testModel("all-minilm-l6-v2") } }, chat: { contextSize: 1024, sequences: 1 } });
  const url = server.url;
  try {
    // The same 60 documents: as a corpus (native and MCP), and as a vector store (its own corpus).
    const corpus = await call(url, "POST", "/v1/rag/corpora", { name: "bench", embedding_model: "embed" });
    const form = new FormData();
    for (let i = 0; i < 60; i++) form.append("file", new Blob([text(i)], { type: "text/plain" }), `report-${i}.txt`);
    const up = await fetch(`${url}/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form });
    if (up.status !== 202) throw new Error(`upload ${up.status}`);
    const fileIds: string[] = [];
    for (let i = 0; i < 60; i++) {
      const f = new FormData();
      f.append("purpose", "assistants");
      f.append("file", new Blob([text(i)], { type: "text/plain" }), `report-${i}.txt`);
      const res = await fetch(`${url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: f });
      if (res.status !== 200) throw new Error(`file upload ${res.status}: ${await res.text()}`);
      fileIds.push(((await res.json()) as { id: string }).id);
    }
    const store = await call(url, "POST", "/v1/vector_stores", { name: "bench store", file_ids: fileIds });
    for (;;) {
      const c = await call(url, "GET", `/v1/rag/corpora/${corpus.id}`);
      const s = await call(url, "GET", `/v1/vector_stores/${store.id}`);
      if (c.document_counts.indexed + c.document_counts.failed >= 60 && s.file_counts.in_progress === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // A vector store is a corpus: `vs_X` is `corp_X`.
    const storeCorpus = `corp_${store.id.slice("vs_".length)}`;

    const query = (i: number) => `banjir Kota Bharu keluarga ${i}`;
    const work: Record<string, [native: (round: number) => Promise<number>, surface: (round: number) => Promise<number>]> = {
      "MCP search_corpus / native search": [
        () => timed(SEARCHES, (i) => call(url, "POST", `/v1/rag/corpora/${corpus.id}/search`, { query: query(i), top_k: 8 })),
        () => timed(SEARCHES, (i) => call(url, "POST", "/mcp", { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "search_corpus", arguments: { corpus_id: corpus.id, query: query(i), top_k: 8 } } })),
      ],
      "vector-store search / native search": [
        () => timed(SEARCHES, (i) => call(url, "POST", `/v1/rag/corpora/${storeCorpus}/search`, { query: query(i), top_k: 8, search: "hybrid" })),
        () => timed(SEARCHES, (i) => call(url, "POST", `/v1/vector_stores/${store.id}/search`, { query: query(i), max_num_results: 8 })),
      ],
      "Ollama /api/chat / chat completions": [
        async (round) => {
          const t0 = performance.now();
          const r = await call(url, "POST", "/v1/chat/completions", { model: "chat", messages: [{ role: "user", content: `Story ${round}: a fisherman in Terengganu.` }], max_tokens: 48, temperature: 0 });
          return r.usage.completion_tokens / ((performance.now() - t0) / 1000);
        },
        async (round) => {
          const t0 = performance.now();
          const r = await call(url, "POST", "/api/chat", { model: "chat", messages: [{ role: "user", content: `Story ${round}: a fisherman in Terengganu.` }], stream: false, options: { num_predict: 48, temperature: 0 } });
          return r.eval_count / ((performance.now() - t0) / 1000);
        },
      ],
    };
    // Warm both paths once.
    for (const [native, surface] of Object.values(work)) {
      await native(-1);
      await surface(-1);
    }
    const ratios: Record<string, { native: number[]; surface: number[]; ratio: number[] }> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, [native, surface]] of Object.entries(work)) {
        const r = (ratios[name] ??= { native: [], surface: [], ratio: [] });
        // Alternate which goes first, so warm-up and drift favour neither.
        let a: number;
        let b: number;
        if (round % 2 === 0) {
          a = await native(round);
          b = await surface(round);
        } else {
          b = await surface(round);
          a = await native(round);
        }
        r.native.push(a);
        r.surface.push(b);
        r.ratio.push(b / a);
      }
    }
    log(`## Protocol surfaces against their native routes (${os.cpus()[0]?.model ?? "CPU"}, ${ROUNDS} paired rounds)\n`);
    log("| surface / native | native (median) | surface (median) | ratio (median, IQR) |");
    log("|---|---|---|---|");
    const out: Record<string, unknown> = {};
    for (const [name, r] of Object.entries(ratios)) {
      const unit = name.includes("chat") ? "tok/s" : "req/s";
      log(`| ${name} | ${fmt(median(r.native), 1)} ${unit} | ${fmt(median(r.surface), 1)} ${unit} | ${fmt(median(r.ratio))} (${fmt(percentile(r.ratio, 25))}–${fmt(percentile(r.ratio, 75))}) |`);
      out[name] = { ...r, median: median(r.ratio) };
    }
    const dir = path.join(import.meta.dirname, "results");
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    writeFileSync(path.join(dir, `surfaces-${stamp}.json`), JSON.stringify({ cpu: os.cpus()[0]?.model, rounds: ROUNDS, results: out }, null, 2));
    writeFileSync(path.join(dir, `surfaces-${stamp}.md`), `${lines.join("\n")}\n`);
  } finally {
    await server.stop();
  }
}

await main();
