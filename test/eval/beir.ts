/**
 * `npm run eval:beir -- [--set scifact|vaswani] [--model multilingual-e5-small|all-minilm-l6-v2]
 *   [--chunking paragraph] [--docs N] [--queries N] [--threads N]`
 *
 * A public retrieval benchmark through the real path: a fresh server (in this process,
 * real models, threads set), the set's documents uploaded as text files through the
 * multipart upload route and indexed by the real indexer, then every query through
 * `/search` in each mode. Documents are ranked by their best chunk. Prints nDCG@10 and
 * recall@100 per mode next to the published figures (from the set's SOURCE.md), and the
 * ingestion time; writes JSON to bench/results/. `--docs` keeps every judged document of
 * the kept queries plus others up to N (a quick check; the published figures need all).
 * `--data DIR` keeps the server's data directory: a later run with the same set, model,
 * chunking and prompts reuses the indexed corpus (the search indexes are rebuilt from its
 * chunks, so retrieval changes are measured without re-embedding). `--prompts none`
 * indexes and queries without the model's prompts (e.g. multilingual-e5's `query: ` /
 * `passage: `), to measure what they are worth. `--tune` tunes the corpus's search
 * (`POST …/search/tune`, applied) on the even-numbered queries and measures the odd ones
 * under the tuned settings beside the server's defaults and the single modes.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import { loadConfig, packageLayout, startServer } from "../../src-server/index.js";
import { REPO_ROOT, testModel, type TestModelId } from "../helpers/models.js";
import { ndcgAt, recallAt } from "../../src-server/rag/retrieval/ir-metrics.js";

const { values: args } = parseArgs({
  options: {
    set: { type: "string", default: "scifact" },
    model: { type: "string", default: "multilingual-e5-small" },
    chunking: { type: "string", default: "paragraph" },
    docs: { type: "string" },
    queries: { type: "string" },
    threads: { type: "string", default: "2" },
    batch: { type: "string", default: "100" },
    data: { type: "string" },
    fusion: { type: "string", default: "" },
    "only-fusion": { type: "boolean", default: false },
    tune: { type: "boolean", default: false },
    prompts: { type: "string", default: "model" },
  },
});

const SETS = path.resolve(REPO_ROOT, "..", "shared", "evalsets");
const PUBLISHED: Record<string, Record<string, string>> = {
  scifact: { keyword: "BM25 0.665 (BEIR) – 0.679 (Anserini, stemmed)", "vector:multilingual-e5-small": "0.676", "vector:all-minilm-l6-v2": "≈0.645" },
  vaswani: { keyword: "stemmed BM25 0.439 (local run)" },
};
const MODES = ["keyword", "vector", "hybrid"] as const;
const TOP_K = 100;

interface Doc {
  _id: string;
  title?: string;
  text: string;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function readQrels(file: string): Map<string, Set<string>> {
  const qrels = new Map<string, Set<string>>();
  for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
    const [q, d, score] = line.trim().split(/\s+/);
    if (!q || !d || Number(score) <= 0) continue;
    if (!qrels.has(q)) qrels.set(q, new Set());
    qrels.get(q)!.add(d);
  }
  return qrels;
}

async function main(): Promise<void> {
  const setDir = path.join(SETS, args.set);
  const corpus = readJsonl<Doc>(path.join(setDir, "corpus.jsonl"));
  const qrels = readQrels(path.join(setDir, "qrels.tsv"));
  let queries = readJsonl<{ _id: string; text: string }>(path.join(setDir, "queries.jsonl")).filter((q) => qrels.has(q._id));
  if (args.queries) queries = queries.slice(0, Number(args.queries));
  let docs = corpus;
  if (args.docs) {
    const judged = new Set(queries.flatMap((q) => [...qrels.get(q._id)!]));
    const rest = corpus.filter((d) => !judged.has(d._id));
    docs = [...corpus.filter((d) => judged.has(d._id)), ...rest.slice(0, Math.max(0, Number(args.docs) - judged.size))];
  }

  if (args.prompts !== "model" && args.prompts !== "none") throw new Error("--prompts is 'model' (what the model wants) or 'none'");
  const dataDir = args.data ? path.resolve(args.data) : mkdtempSync(path.join(os.tmpdir(), "pustaka-beir-"));
  mkdirSync(dataDir, { recursive: true });
  const key = "psk-beir-eval-key-000000000000";
  const layout = packageLayout();
  const config = loadConfig({
    env: {},
    defaults: { catalogPath: layout.catalogPath },
    overrides: {
      port: 0,
      dataDir,
      apiKey: key,
      logLevel: "silent",
      engine: { threads: Number(args.threads), gpu: "cpu", idleUnloadSeconds: 0 },
      models: { bindings: { embed: testModel(args.model as TestModelId) } },
      rateLimits: { defaultTier: "unlimited" },
      rag: { maxFilesPerUpload: 1000 },
    },
  });
  // Server errors (a 500 while querying) go to stderr with their stack.
  const server = await startServer(config, { version: layout.version, logger: pino({ level: process.env.PUSTAKA_EVAL_LOG ?? "error" }, process.stderr) });
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const name = `BEIR ${args.set} ${args.model} ${args.chunking} prompts:${args.prompts} docs:${docs.length}`;
    const existing = ((await call("GET", "/v1/rag/corpora?limit=100")).data as { id: string; name: string; status: string }[]).find((c) => c.name === name && (c.status === "ready" || c.status === "indexing"));
    // An interrupted ingestion resumes (the server requeues its documents at start); its time is then not reported.
    const resumed = existing?.status === "indexing";
    const corpusId = existing?.id ?? ((await call("POST", "/v1/rag/corpora", { name, embedding_model: "embed", chunking: args.chunking, ...(args.prompts === "none" ? { embedding_prompts: { query: "", document: "" } } : {}) })).id as string);
    const docOf = new Map<string, string>();
    if (existing) {
      process.stderr.write(`${resumed ? "resuming the indexing of" : "reusing the indexed"} corpus ${existing.id} in ${dataDir}\n`);
      for (let after: string | null = null; ; ) {
        const page = await call("GET", `/v1/rag/corpora/${corpusId}/documents?limit=100&order=asc${after ? `&after=${after}` : ""}`);
        for (const d of page.data) docOf.set(d.id, String(d.filename).replace(/\.txt$/, ""));
        if (!page.has_more) break;
        after = page.last_id;
      }
    }
    // A corpus holds one copy of identical content (Vaswani has 16 exact duplicates, refused
    // as duplicate_document); a retrieval run over the raw collection ranks every copy
    // together, so the copy that was kept stands for its twins in the ranking.
    const twins = new Map<string, string[]>();
    {
      const byText = new Map<string, string[]>();
      for (const d of docs) {
        const key = d.title ? `${d.title}\n\n${d.text}` : d.text;
        byText.set(key, [...(byText.get(key) ?? []), d._id]);
      }
      for (const ids of byText.values()) if (ids.length > 1) for (const id of ids) twins.set(id, ids.filter((other) => other !== id));
    }
    const started = performance.now();
    const batch = Number(args.batch);
    for (let i = 0; i < (existing ? 0 : docs.length); i += batch) {
      const form = new FormData();
      for (const d of docs.slice(i, i + batch)) form.append("file", new Blob([d.title ? `${d.title}\n\n${d.text}` : d.text]), `${d._id}.txt`);
      const res = await fetch(`${server.url}/v1/rag/corpora/${corpusId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
      const json = (await res.json()) as any;
      for (const d of json.documents ?? []) docOf.set(d.id, String(d.filename).replace(/\.txt$/, ""));
      for (const r of json.rejected ?? []) process.stderr.write(`rejected ${r.filename}: ${r.error.code}\n`);
    }
    for (;;) {
      const c = await call("GET", `/v1/rag/corpora/${corpusId}`);
      if (c.status !== "indexing") break;
      process.stderr.write(`  indexing ${c.document_counts.indexed}/${c.document_counts.total}\n`);
      await new Promise((r) => setTimeout(r, 28_000));
      await new Promise((r) => setTimeout(r, 2000));
    }
    const ingestS = existing ? Number.NaN : (performance.now() - started) / 1000;
    const chunks = (await call("GET", `/v1/rag/corpora/${corpusId}`)).chunk_count as number | undefined;
    process.stderr.write("\n");

    // Each run: a label and what it sends to /search. `--fusion convex:0.5,rrf:0.5,…` adds
    // hybrid runs with other fusions; "hybrid, top_k 10" is what a client asking for ten gets.
    const runs: { label: string; body: Record<string, unknown>; published?: string; via?: "vector_store" }[] = MODES.map((mode) => ({ label: mode, body: { search: mode } }));
    for (const spec of args.fusion.split(",").filter(Boolean)) {
      const [method, weight, trust] = spec.split(":");
      runs.push({ label: `hybrid ${method} w=${weight || "default"}${trust ? ` trust=${trust}` : ""}`, body: { search: "hybrid", fusion: { method, ...(weight ? { vector_weight: Number(weight) } : {}), ...(trust ? { keyword_trust: trust } : {}) } } });
    }
    runs.push({ label: "hybrid, top_k 10", body: { search: "hybrid", top_k: 10 } });
    // The same corpus as an OpenAI vector store (its id is the corpus's with `vs_`): its search
    // must rank as /search does. OpenAI caps max_num_results at 50, so both at 50.
    runs.push({ label: "hybrid, top_k 50", body: { search: "hybrid", top_k: 50 } });
    runs.push({ label: "vector_stores.search, 50", body: {}, via: "vector_store" });

    if (args.tune) {
      await call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: null });
      const keptOf = new Map<string, string>();
      for (const id of docOf.values()) for (const each of [id, ...(twins.get(id) ?? [])]) keptOf.set(each, id);
      const fit = queries.filter((_, i) => i % 2 === 0);
      const test = queries.filter((_, i) => i % 2 === 1);
      const t0 = performance.now();
      const tuned = await call("POST", `/v1/rag/corpora/${corpusId}/search/tune`, {
        questions: fit.map((q) => ({ question: q.text, relevant: [...new Set([...qrels.get(q._id)!].map((id) => keptOf.get(id)).filter((id) => id !== undefined))].map((id) => `${id}.txt`) })).filter((q) => q.relevant.length > 0),
        apply: true,
      });
      process.stderr.write(`tuned on ${tuned.questions} queries in ${((performance.now() - t0) / 1000).toFixed(1)} s: best ${JSON.stringify(tuned.best)}; current ${tuned.current.ndcg_at_10}; held out (within the fit half) ${JSON.stringify(tuned.held_out)}; applied ${tuned.applied} ${tuned.not_applied_reason ?? ""}\n`);
      const measure = async (body: Record<string, unknown>) => {
        let ndcg = 0;
        for (const q of test) {
          const found = await call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: q.text, top_k: TOP_K, ...body });
          const ranked: string[] = [];
          for (const hit of found.data as { document_id: string }[]) {
            const id = docOf.get(hit.document_id);
            for (const each of id ? [id, ...(twins.get(id) ?? [])] : []) if (!ranked.includes(each)) ranked.push(each);
          }
          ndcg += ndcgAt(ranked, qrels.get(q._id)!, 10);
        }
        return ndcg / test.length;
      };
      const rows = [
        ["keyword", { search: "keyword" }],
        ["vector", { search: "vector" }],
        ["hybrid, the server's defaults", { search: "hybrid", fusion: { method: "convex", vector_weight: 0.5, keyword_trust: "auto" } }],
        ["tuned (the corpus's settings)", {}],
      ] as const;
      const lines = [`# ${args.set}: tuned on ${fit.length} queries (even), measured on ${test.length} (odd)`, "", `tuned setting: ${JSON.stringify(tuned.search_defaults)}`, "", "| mode | nDCG@10 (held-out queries) |", "|---|---|"];
      for (const [label, body] of rows) lines.push(`| ${label} | ${(await measure(body)).toFixed(3)} |`);
      process.stdout.write(`${lines.join("\n")}\n`);
      await call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: null });
      return;
    }

    const results: Record<string, { ndcg10: number; recall100: number; msPerQuery: number }> = {};
    // `--only-fusion` measures the --fusion runs alone (the three modes were measured before).
    for (const run of args["only-fusion"] ? runs.filter((r) => r.label.startsWith("hybrid ") && !r.label.includes("top_k")) : runs) {
      let ndcg = 0;
      let recall = 0;
      const t0 = performance.now();
      for (const q of queries) {
        const found =
          run.via === "vector_store"
            ? await call("POST", `/v1/vector_stores/vs_${corpusId.slice("corp_".length)}/search`, { query: q.text, max_num_results: 50 })
            : await call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: q.text, top_k: TOP_K, ...run.body });
        const ranked: string[] = [];
        // A vector store's hit names its file; a document uploaded straight to the corpus is its own file.
        for (const hit of found.data as { document_id?: string; file_id?: string }[]) {
          const id = docOf.get(hit.document_id ?? hit.file_id ?? "");
          for (const each of id ? [id, ...(twins.get(id) ?? [])] : []) if (!ranked.includes(each)) ranked.push(each);
        }
        ndcg += ndcgAt(ranked, qrels.get(q._id)!, 10);
        recall += recallAt(ranked, qrels.get(q._id)!, 100);
      }
      results[run.label] = { ndcg10: ndcg / queries.length, recall100: recall / queries.length, msPerQuery: (performance.now() - t0) / queries.length };
      process.stderr.write(`${run.label}: nDCG@10 ${results[run.label]!.ndcg10.toFixed(3)}\n`);
    }

    const lines = [
      `# ${args.set} through /search — ${args.model}, ${args.chunking} chunking, ${args.prompts === "none" ? "no prompts" : "the model's prompts"}`,
      "",
      `${docs.length} documents${docs.length < corpus.length ? ` of ${corpus.length} (subset: every judged document of the kept queries plus others)` : ""}, ${queries.length} queries; ${existing ? `reused an indexed corpus (${chunks} chunks)` : `ingestion ${ingestS.toFixed(0)} s (${(docs.length / ingestS).toFixed(2)} documents/s${chunks ? `, ${chunks} chunks, ${(chunks / ingestS).toFixed(1)} chunks/s` : ""})`}.`,
      "",
      "| mode | nDCG@10 | recall@100 | ms/query | published |",
      "|---|---|---|---|---|",
      ...runs.filter(({ label: m }) => results[m]).map(({ label: m }) => `| ${m} | ${results[m]!.ndcg10.toFixed(3)} | ${m.includes("top_k 10") || m.includes("50") ? "–" : results[m]!.recall100.toFixed(3)} | ${results[m]!.msPerQuery.toFixed(0)} | ${PUBLISHED[args.set]?.[m] ?? PUBLISHED[args.set]?.[`${m}:${args.model}`] ?? ""} |`),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    const out = path.join(REPO_ROOT, "bench", "results");
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, `beir-${args.set}-${args.model}-${Date.now()}.json`), JSON.stringify({ set: args.set, model: args.model, chunking: args.chunking, prompts: args.prompts, documents: docs.length, queries: queries.length, ingestS, results }, null, 2));
  } finally {
    await server.close();
    if (!args.data) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
