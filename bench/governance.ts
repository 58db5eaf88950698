/**
 * What governance costs (`npm run bench:governance`, also part of `npm run bench`):
 * - overhead of the rate limiter and the audit trail on chat streams and embeddings, as
 *   throughput ratios against a reference server without them, in paired interleaved
 *   rounds on the same models and threads (three servers in this process: no limiter and
 *   no trail; limiter only, with limits too high to bite; limiter and trail, as shipped);
 * - the trail at scale: writing 1M entries, `verify` over 1M, export speed (entries/s),
 *   and the offline check of the exported file.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, createWriteStream } from "node:fs";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import { testModel } from "../test/helpers/models.js";
import { openAudit } from "../src-server/server.js";
import { openSqlDatabase } from "../src-server/store/sql-database.js";
import { verifyExportFile } from "../src-server/security/audit-export.js";
import type { Principal } from "../src-server/domain/scopes.js";
import { median, percentile, startInProcessServer, streamChat } from "./lib.js";

const THREADS = Number(process.env.BENCH_THREADS ?? 1);
/** 0 skips the overhead comparison (the trail at scale only). */
const ROUNDS = Number(process.env.BENCH_GOVERNANCE_ROUNDS ?? 12);
const ENTRIES = Number(process.env.BENCH_AUDIT_ENTRIES ?? 1_000_000);
const KEY = "psk-benchmark-key-0000000000";
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};

type Variant = "reference" | "limiter" | "limiter+audit";

async function start(variant: Variant) {
  const server = await startInProcessServer(`gov-${variant.replace("+", "-")}`, KEY, THREADS, {
    chat: { contextSize: 1024, sequences: 1 },
    models: { bindings: { chat: testModel("gemma3-270m"), embed: testModel("all-minilm-l6-v2") } },
    // Limits far above the load: the limiter does all its bookkeeping but never refuses.
    rateLimits: variant === "reference" ? { defaultTier: "unlimited" } : { defaultTier: "high", tiers: { high: { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000 } } },
  }, { withoutAuditTrail: variant !== "limiter+audit" });
  return { variant, server };
}

async function embedOnce(url: string): Promise<number> {
  const input = Array.from({ length: 16 }, (_, i) => `Laporan banjir ${i}: paras air di Sungai Kelantan meningkat selepas hujan lebat berterusan.`);
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "embed", input }) });
  if (res.status !== 200) throw new Error(`embeddings ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
  return input.length / ((performance.now() - t0) / 1000);
}

async function chatOnce(url: string, i: number): Promise<number> {
  const r = await streamChat(url, KEY, { model: "chat", messages: [{ role: "user", content: `Story ${i}. Tell a short story about a fisherman in Terengganu.` }], max_tokens: 48, temperature: 0 });
  return r.tokens / ((r.ttftMs + r.decodeMs) / 1000);
}

async function overhead(): Promise<Record<string, unknown>> {
  const servers = [await start("reference"), await start("limiter"), await start("limiter+audit")];
  try {
    // Warm up: load both models in each server.
    for (const s of servers) {
      await chatOnce(s.server.url, 0);
      await embedOnce(s.server.url);
    }
    const rates: Record<"chat" | "embeddings", Record<Variant, number[]>> = {
      chat: { reference: [], limiter: [], "limiter+audit": [] },
      embeddings: { reference: [], limiter: [], "limiter+audit": [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate who goes first, so drift on a shared machine falls on every variant alike.
      const order = servers.map((_, i) => servers[(i + round) % servers.length]!);
      for (const s of order) rates.chat[s.variant].push(await chatOnce(s.server.url, round));
      for (const s of order) rates.embeddings[s.variant].push(await embedOnce(s.server.url));
    }
    const result: Record<string, unknown> = {};
    log("\n## Governance overhead (throughput relative to a server without limiter and trail)\n");
    log("| workload | reference | limiter | ratio | limiter + audit | ratio |");
    log("|---|---|---|---|---|---|");
    for (const workload of ["chat", "embeddings"] as const) {
      const r = rates[workload];
      const ratio = (v: Variant) => median(r[v].map((x, i) => x / r.reference[i]!));
      const iqr = (v: Variant) => {
        const paired = r[v].map((x, i) => x / r.reference[i]!);
        return `${fmt(percentile(paired, 25), 3)}–${fmt(percentile(paired, 75), 3)}`;
      };
      const unit = workload === "chat" ? "tok/s" : "inputs/s";
      log(`| ${workload} (${workload === "chat" ? "1 stream, 48 tokens" : "16 inputs a request"}) | ${fmt(median(r.reference))} ${unit} | ${fmt(median(r.limiter))} | ${fmt(ratio("limiter"), 3)} (IQR ${iqr("limiter")}) | ${fmt(median(r["limiter+audit"]))} | ${fmt(ratio("limiter+audit"), 3)} (IQR ${iqr("limiter+audit")}) |`);
      result[workload] = { reference: median(r.reference), limiter: median(r.limiter), limiterAudit: median(r["limiter+audit"]), ratioLimiter: ratio("limiter"), ratioLimiterAudit: ratio("limiter+audit") };
    }
    return result;
  } finally {
    for (const s of servers) {
      await s.server.stop();
    }
  }
}

async function atScale(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-gov-audit-"));
  try {
    const db = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
    const audit = await openAudit(db, dir);
    const principal: Principal = { workspaceId: "ws_default", keyId: "key_bench", keyName: "bench", scopes: new Set(["audit.read"]) };
    const t0 = performance.now();
    for (let i = 0; i < ENTRIES; i++) {
      audit.record({
        type: "chat.completion",
        workspaceId: "ws_default",
        actor: "api_key:key_bench",
        outcome: "success",
        requestId: `req_bench${i}`,
        data: { model: "svc-merlion-13b", prompt_sha256: "9f".repeat(32), prompt_tokens: 512, completion_tokens: 128, status: 200, latency_ms: 900 },
      });
    }
    await audit.flush();
    const writeS = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const verified = await audit.verify(principal);
    const verifyS = (performance.now() - t1) / 1000;
    if (!verified.valid || verified.checked_entries !== ENTRIES) throw new Error(`verify failed: ${JSON.stringify(verified.problems.slice(0, 3))}`);
    const file = path.join(dir, "export.jsonl");
    const out = createWriteStream(file);
    const t2 = performance.now();
    for await (const chunk of audit.export(principal, { format: "jsonl" })) if (!out.write(chunk)) await once(out, "drain");
    out.end();
    await once(out, "finish");
    const exportS = (performance.now() - t2) / 1000;
    const t3 = performance.now();
    const offline = await verifyExportFile(file);
    const offlineS = (performance.now() - t3) / 1000;
    if (!offline.valid) throw new Error(`offline verify failed: ${JSON.stringify(offline.problems.slice(0, 3))}`);
    const dbBytes = statSync(path.join(dir, "pustaka.db")).size + (statSync(path.join(dir, "pustaka.db-wal"), { throwIfNoEntry: false })?.size ?? 0);
    await audit.close();
    await db.close();
    log(`\n## Audit trail at ${ENTRIES.toLocaleString("en")} entries\n`);
    log("| step | time | rate |");
    log("|---|---|---|");
    log(`| write (record, batched) | ${fmt(writeS, 2)} s | ${fmt(ENTRIES / writeS / 1000, 1)}k entries/s |`);
    log(`| verify (GET /v1/audit/verify) | ${fmt(verifyS, 2)} s | ${fmt(ENTRIES / verifyS / 1000, 1)}k entries/s |`);
    log(`| export JSONL (${fmt(statSync(file).size / 1e6, 0)} MB) | ${fmt(exportS, 2)} s | ${fmt(ENTRIES / exportS / 1000, 1)}k entries/s |`);
    log(`| offline verify of the export (pustaka audit verify) | ${fmt(offlineS, 2)} s | ${fmt(ENTRIES / offlineS / 1000, 1)}k entries/s |`);
    log(`| database size | ${fmt(dbBytes / 1e6, 0)} MB | ${fmt(dbBytes / ENTRIES, 0)} bytes/entry |`);
    return { entries: ENTRIES, writeS, verifyS, exportS, offlineS, dbBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  log(`# Governance benchmark (${THREADS} thread${THREADS === 1 ? "" : "s"}, ${ROUNDS} rounds, ${os.cpus().length} CPUs)`);
  const report = { date: new Date().toISOString(), threads: THREADS, rounds: ROUNDS, overhead: ROUNDS > 0 ? await overhead() : null, audit: await atScale() };
  const dir = path.join(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const stamp = report.date.replace(/[:.]/g, "-");
  writeFileSync(path.join(dir, `governance-${stamp}.json`), JSON.stringify(report, null, 2));
  writeFileSync(path.join(dir, `governance-${stamp}.md`), `${lines.join("\n")}\n`);
}

await main();
