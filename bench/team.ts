/**
 * A team server measured (`npm run bench:team`, also part of `npm run bench`), on whatever
 * machine runs it, with Debian's Postgres and HAProxy started on loopback:
 *
 * 1. One replica on Postgres against one on SQLite, in this process, the same models and
 *    threads, paired interleaved rounds: chat (1 stream, 48 tokens), embeddings (16 inputs a
 *    request), search (a 60-document corpus, hybrid), upload (8 documents, until indexed).
 *    Ratios Postgres / SQLite per round; the median and IQR.
 * 2. Three replicas against one (both on Postgres, separate processes behind HAProxy) on
 *    search-heavy load: 6 clients searching for 15 s; requests/s, p50 and p95 latency.
 * 3. From a document committed on one replica to it being found by another's search: the
 *    follower's lag (commit time in the change feed to the first search that finds it).
 * 4. Rate-limit exactness with three replicas (rounds of 200 parallel requests against 60),
 *    and the audit write rate with three writers on one Postgres (3 x 20,000 entries).
 *
 * BENCH_TEAM_ROUNDS (default 6) rounds for the paired comparison.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCluster, type Cluster } from "../test/helpers/cluster.js";
import { testModel } from "../test/helpers/models.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { openAudit } from "../src-server/server.js";
import { openSqlDatabase } from "../src-server/store/sql-database.js";
import { median, percentile, startInProcessServer, streamChat } from "./lib.js";

const ROUNDS = Number(process.env.BENCH_TEAM_ROUNDS ?? 6);
const KEY = "psk-benchmark-key-0000000000";
const THREADS = 1;
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
const models = { chat: testModel("gemma3-270m"), embed: testModel("all-minilm-l6-v2") };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const text = (i: number, topic: string) =>
  `Laporan ${topic} ${i}. Paras air di Sungai Kelantan meningkat selepas hujan lebat; ${"banjir ".repeat((i % 7) + 1)}menjejaskan ${i * 13} keluarga. The flood report ${i} notes road closures near Kota Bharu and relief centres in ${topic}.`;

/** The few fields of the API's answers this benchmark reads. */
interface ApiJson {
  id: string;
  secret: string;
  document_counts: { indexed: number; failed: number; total: number };
  data: { document_id: string }[];
}

async function call(base: string, method: string, route: string, body?: unknown, key = KEY): Promise<{ status: number; json: ApiJson }> {
  const res = await fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const raw = await res.text();
  return { status: res.status, json: (raw ? JSON.parse(raw) : {}) as ApiJson };
}

/** A call through the cluster's balancer (or to one replica), typed as above. */
async function via(c: Cluster, method: string, route: string, body?: unknown, options?: { key?: string | null; base?: string }): Promise<{ status: number; json: ApiJson }> {
  const res = await c.call(method, route, body, options);
  return { status: res.status, json: res.json as ApiJson };
}

async function upload(base: string, corpusId: string, docs: string[], key = KEY): Promise<string[]> {
  const form = new FormData();
  docs.forEach((d, i) => form.append("file", new Blob([d], { type: "text/plain" }), `doc-${i}-${Math.random().toString(36).slice(2)}.txt`));
  const res = await fetch(`${base}/v1/rag/corpora/${corpusId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  if (res.status !== 202) throw new Error(`upload ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { documents: { id: string }[] }).documents.map((d) => d.id);
}

async function waitIndexed(base: string, corpusId: string, total: number, key = KEY): Promise<void> {
  for (;;) {
    const got = await call(base, "GET", `/v1/rag/corpora/${corpusId}`, undefined, key);
    if (got.json.document_counts.indexed + got.json.document_counts.failed >= total) return;
    await sleep(50);
  }
}

// --- 1. one replica: Postgres against SQLite ------------------------------------------

async function single(databaseUrl: string): Promise<Record<string, unknown>> {
  const servers = {
    sqlite: await startInProcessServer("team-sqlite", KEY, THREADS, { models: { bindings: models }, chat: { contextSize: 1024, sequences: 1 } }),
    postgres: await startInProcessServer("team-pg", KEY, THREADS, { database: { url: databaseUrl }, replicaId: "bench", models: { bindings: models }, chat: { contextSize: 1024, sequences: 1 } }),
  };
  const kinds = ["sqlite", "postgres"] as const;
  try {
    const corpora: Record<string, string> = {};
    for (const kind of kinds) {
      const url = servers[kind].url;
      const corpus = await call(url, "POST", "/v1/rag/corpora", { name: "bench", embedding_model: "embed" });
      corpora[kind] = corpus.json.id;
      await upload(url, corpus.json.id, Array.from({ length: 60 }, (_, i) => text(i, "Kelantan")));
      await waitIndexed(url, corpus.json.id, 60);
      await streamChat(url, KEY, { model: "chat", messages: [{ role: "user", content: "Hi" }], max_tokens: 4 });
    }
    const work = {
      chat: async (url: string, round: number) => {
        const r = await streamChat(url, KEY, { model: "chat", messages: [{ role: "user", content: `Story ${round}. Tell a short story about a fisherman in Terengganu.` }], max_tokens: 48, temperature: 0 });
        return r.tokens / ((r.ttftMs + r.decodeMs) / 1000);
      },
      embeddings: async (url: string) => {
        const input = Array.from({ length: 16 }, (_, i) => text(i, "Pahang"));
        const t0 = performance.now();
        const res = await call(url, "POST", "/v1/embeddings", { model: "embed", input });
        if (res.status !== 200) throw new Error(`embeddings ${res.status}`);
        return input.length / ((performance.now() - t0) / 1000);
      },
      search: async (url: string, _round: number, corpusId: string) => {
        const t0 = performance.now();
        for (let i = 0; i < 10; i++) {
          const res = await call(url, "POST", `/v1/rag/corpora/${corpusId}/search`, { query: `banjir Kota Bharu keluarga ${i}`, top_k: 8 });
          if (res.status !== 200) throw new Error(`search ${res.status}`);
        }
        return 10 / ((performance.now() - t0) / 1000);
      },
      upload: async (url: string, round: number, corpusId: string) => {
        const before = (await call(url, "GET", `/v1/rag/corpora/${corpusId}`)).json.document_counts.total;
        const t0 = performance.now();
        await upload(url, corpusId, Array.from({ length: 8 }, (_, i) => text(1000 + round * 8 + i, "Terengganu")));
        await waitIndexed(url, corpusId, before + 8);
        return 8 / ((performance.now() - t0) / 1000);
      },
    };
    const rates: Record<keyof typeof work, Record<(typeof kinds)[number], number[]>> = {
      chat: { sqlite: [], postgres: [] },
      embeddings: { sqlite: [], postgres: [] },
      search: { sqlite: [], postgres: [] },
      upload: { sqlite: [], postgres: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? kinds : ([...kinds].reverse() as unknown as typeof kinds);
      for (const name of Object.keys(work) as (keyof typeof work)[]) {
        for (const kind of order) rates[name][kind].push(await work[name](servers[kind].url, round, corpora[kind]!));
      }
    }
    log("## One replica on Postgres against one on SQLite (same process, models, threads)\n");
    log("| workload | SQLite | Postgres | ratio (median, IQR) |");
    log("|---|---|---|---|");
    const out: Record<string, unknown> = {};
    const unit = { chat: "tok/s", embeddings: "inputs/s", search: "searches/s", upload: "documents/s" } as const;
    for (const name of Object.keys(work) as (keyof typeof work)[]) {
      const paired = rates[name].postgres.map((x, i) => x / rates[name].sqlite[i]!);
      log(`| ${name} | ${fmt(median(rates[name].sqlite))} ${unit[name]} | ${fmt(median(rates[name].postgres))} | ${fmt(median(paired), 3)} (${fmt(percentile(paired, 25), 3)}–${fmt(percentile(paired, 75), 3)}) |`);
      out[name] = { sqlite: median(rates[name].sqlite), postgres: median(rates[name].postgres), ratio: median(paired) };
    }
    return out;
  } finally {
    await servers.sqlite.stop();
    await servers.postgres.stop();
  }
}

// --- 2 and 3. three replicas against one ----------------------------------------------

async function searchLoad(c: Cluster, corpusId: string, seconds: number, clients: number): Promise<{ rps: number; p50: number; p95: number }> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, k) => {
      for (let i = 0; performance.now() < until; i++) {
        const t0 = performance.now();
        const res = await via(c, "POST", `/v1/rag/corpora/${corpusId}/search`, { query: `banjir keluarga ${k} ${i}`, top_k: 8 });
        if (res.status !== 200) throw new Error(`search ${res.status}: ${JSON.stringify(res.json)}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { rps: latencies.length / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95) };
}

async function cluster(replicas: number): Promise<Cluster> {
  return startCluster({ replicas, bindings: models, config: { rateLimits: { defaultTier: "open", tiers: { open: { requestsPerMinute: 0, tokensPerMinute: 0 }, tight: { requestsPerMinute: 60, tokensPerMinute: 0 } } }, oauth: { issuer: "http://pustaka.bench" } } });
}

async function scaleOut(): Promise<Record<string, unknown>> {
  const results: Record<string, { rps: number; p50: number; p95: number }> = {};
  let lag: number[] = [];
  let exact: number[] = [];
  for (const n of [1, 3]) {
    const c = await cluster(n);
    try {
      const corpus = await via(c, "POST", "/v1/rag/corpora", { name: "load", embedding_model: "embed" });
      const id = corpus.json.id;
      await upload(c.url, id, Array.from({ length: 60 }, (_, i) => text(i, "Sabah")), c.key);
      await waitIndexed(c.url, id, 60, c.key);
      // Every replica has the corpus loaded before the clock starts.
      for (const r of c.replicas) await via(c, "POST", `/v1/rag/corpora/${id}/search`, { query: "banjir", top_k: 8 }, { base: r.url });
      results[`${n}`] = await searchLoad(c, id, 15, 6);
      if (n === 3) {
        lag = await followerLag(c, id);
        exact = await rateExactness(c);
      }
    } finally {
      await c.close();
    }
  }
  log("\n## Three replicas against one, search-heavy (6 clients, 15 s, through HAProxy)\n");
  log("| replicas | searches/s | p50 | p95 |");
  log("|---|---|---|---|");
  for (const [n, r] of Object.entries(results)) log(`| ${n} | ${fmt(r.rps)} | ${fmt(r.p50)} ms | ${fmt(r.p95)} ms |`);
  log(`\nScale-out: ${fmt(results["3"]!.rps / results["1"]!.rps, 2)}x the searches/s of one replica on ${os.cpus().length} CPUs.`);
  log(`\nA document committed on one replica is found by another's search after: median ${fmt(median(lag))} ms, p95 ${fmt(percentile(lag, 95))} ms (${lag.length} documents).`);
  log(`\nRate limit 60/min, 200 parallel requests over three replicas: admitted ${exact.join(", ")} in ${exact.length} rounds.`);
  return { search: results, followerLagMs: { median: median(lag), p95: percentile(lag, 95), samples: lag }, rateLimitAdmitted: exact };
}

/** Commit on r1, then how long until r2's search finds the document (its change-feed time is the commit). */
async function followerLag(c: Cluster, corpusId: string): Promise<number[]> {
  const [r1, r2] = c.replicas;
  const lags: number[] = [];
  for (let i = 0; i < 8; i++) {
    const marker = `penandaunik${i}x${Date.now()}`;
    const [documentId] = await upload(r1!.url, corpusId, [`${marker} ${text(500 + i, "Melaka")}`], c.key);
    let committedAt = 0;
    while (!committedAt) {
      committedAt = Number(c.postgres.psql(c.databaseUrl, `SELECT at_ms FROM corpus_changes WHERE document_id = '${documentId}' AND change = 'indexed'`).trim() || 0);
      if (!committedAt) await sleep(5);
    }
    for (;;) {
      const res = await via(c, "POST", `/v1/rag/corpora/${corpusId}/search`, { query: marker, top_k: 3, search: "keyword" }, { base: r2!.url });
      if (res.json.data.some((d) => d.document_id === documentId)) break;
      await sleep(5);
    }
    lags.push(Date.now() - committedAt);
  }
  return lags;
}

async function rateExactness(c: Cluster): Promise<number[]> {
  const admitted: number[] = [];
  for (let round = 0; round < 3; round++) {
    const key = await via(c, "POST", "/v1/admin/workspaces/ws_default/api_keys", { name: `tight-${round}`, scopes: ["inference"] });
    await via(c, "PATCH", `/v1/admin/workspaces/ws_default/api_keys/${key.json.id}`, { rate_limit_tier: "tight" });
    const results = await Promise.all(Array.from({ length: 200 }, () => via(c, "POST", "/v1/embeddings", { model: "embed", input: "x" }, { key: key.json.secret })));
    admitted.push(results.filter((r) => r.status === 200).length);
  }
  return admitted;
}

// --- 4. audit write rate with three writers -------------------------------------------

async function auditWriters(databaseUrl: string): Promise<Record<string, unknown>> {
  const PER = 20_000;
  const dirs = [0, 1, 2].map(() => mkdtempSync(path.join(os.tmpdir(), "pustaka-team-audit-")));
  const stores = await Promise.all(dirs.map(() => openSqlDatabase({ kind: "postgres", url: databaseUrl })));
  try {
    const trails = await Promise.all(stores.map((s, i) => openAudit(s, dirs[i]!)));
    const t0 = performance.now();
    await Promise.all(
      trails.map(async (trail, w) => {
        for (let i = 0; i < PER; i++) trail.record({ type: "chat.completion", workspaceId: "ws_default", actor: `api_key:key_w${w}`, outcome: "success", requestId: `req_${w}_${i}`, data: { prompt_sha256: "9f".repeat(32), prompt_tokens: 512 } });
        await trail.flush();
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const verified = await trails[0]!.verify({ workspaceId: "ws_default", keyId: "key_bench", keyName: "bench", scopes: new Set(["audit.read"]) });
    for (const trail of trails) await trail.close();
    log(`\n## Audit trail, three writers on one Postgres\n\n3 x ${PER.toLocaleString("en")} entries into one chain: ${fmt((3 * PER) / seconds / 1000)}k entries/s; the chain verifies: ${verified.valid} (${verified.checked_entries} entries).`);
    return { entries: 3 * PER, seconds, rate: (3 * PER) / seconds, valid: verified.valid };
  } finally {
    for (const s of stores) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

const postgres = await startPostgres();
try {
  log(`# Team server benchmark (${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "unknown CPU"}, ${ROUNDS} rounds)\n`);
  const result = {
    single: await single(await postgres.createDatabase()),
    scaleOut: await scaleOut(),
    audit: await auditWriters(await postgres.createDatabase()),
  };
  const dir = path.join(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  writeFileSync(path.join(dir, `team-${stamp}.json`), JSON.stringify(result, null, 2));
  writeFileSync(path.join(dir, `team-${stamp}.md`), `${lines.join("\n")}\n`);
} finally {
  await postgres.close();
}
