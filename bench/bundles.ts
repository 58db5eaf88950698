/**
 * `node --import tsx bench/bundles.ts [--chunks 100000] [--documents 2000] [--original-mb 1024] [--reindex-docs 300]`
 *
 * Corpus bundles (issue 35), measured:
 * 1. A corpus of `--chunks` passages (384-dimension vectors) in `--documents` documents whose
 *    originals add up to `--original-mb`, written into a data folder with the server's own
 *    stores (sealed as indexing seals them; the vectors are random, the text SciFact's), then
 *    exported by one server process and imported by another, each in a process of its own so
 *    its peak memory (VmHWM) is its own: MB/s each way and peak memory against the process's
 *    memory before.
 * 2. Import against indexing: `--reindex-docs` SciFact abstracts uploaded and indexed from
 *    scratch (multilingual-e5-small, one llama.cpp thread) against the same corpus imported
 *    from its bundle, in the same run.
 * Prints a table and writes bench/results/bundles-<time>.{json,md}.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT } from "../test/helpers/models.js";
import { ABSTRACTS, KEY, call, exportTo, importFrom, processMemory, seedCorpus, serveProcess, type ServerProcess } from "../test/helpers/seeded-corpus.js";

const { values: args } = parseArgs({
  options: {
    chunks: { type: "string", default: "100000" },
    documents: { type: "string", default: "2000" },
    "original-mb": { type: "string", default: "1024" },
    "reindex-docs": { type: "string", default: "300" },
  },
});
const CHUNKS = Number(args.chunks);
const DOCUMENTS = Number(args.documents);
const ORIGINAL_BYTES = Number(args["original-mb"]) * 1024 * 1024;
const REINDEX_DOCS = Number(args["reindex-docs"]);
async function waitReady(server: ServerProcess, corpusId: string): Promise<void> {
  for (;;) {
    const c = await call(server, "GET", `/v1/rag/corpora/${corpusId}`);
    if (c.status === "ready" && c.document_counts.total > 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-bundles-"));
const dirs = { source: path.join(root, "source"), target: path.join(root, "target") };
const file = path.join(root, "corpus.pustaka");
const results: Record<string, unknown> = {};
const lines: string[] = [];
const log = (s: string) => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};
let source: ServerProcess | null = null;
let target: ServerProcess | null = null;
try {
  mkdirSync(dirs.source);
  mkdirSync(dirs.target);
  process.stderr.write(`bundles: ${CHUNKS} passages in ${DOCUMENTS} documents, ${args["original-mb"]} MB of originals\n`);
  // The workspace, its key and the corpus are made by the server; then it stops and the corpus is filled.
  source = await serveProcess(dirs.source);
  const big = (await call(source, "POST", "/v1/rag/corpora", { name: "Seeded corpus", embedding_model: "embed" })).id;
  await source.spawned.stop();
  let started = performance.now();
  await seedCorpus(dirs.source, big, { chunks: CHUNKS, documents: DOCUMENTS, originalBytes: ORIGINAL_BYTES }, (d, n) => process.stderr.write(`  seeded ${d}/${DOCUMENTS} documents, ${n} passages\n`));
  const seedSeconds = (performance.now() - started) / 1000;
  source = await serveProcess(dirs.source);
  const exportBefore = processMemory(source.pid);
  const exported = await exportTo(source, big, file);
  const exportAfter = processMemory(source.pid);
  target = await serveProcess(dirs.target);
  const importBefore = processMemory(target.pid);
  const imported = await importFrom(target, file);
  const importAfter = processMemory(target.pid);
  if (imported.corpus.chunk_count !== CHUNKS) throw new Error(`imported ${imported.corpus.chunk_count} passages, not ${CHUNKS}`);
  const mb = exported.bytes / 1024 / 1024;
  const large = { chunks: CHUNKS, documents: DOCUMENTS, originalMb: Number(args["original-mb"]), seedSeconds, bundleMb: mb, export: { ...exported, mbPerSecond: mb / exported.seconds, rssBeforeMb: exportBefore.rss, peakMb: exportAfter.peak }, import: { ...imported, corpus: undefined, mbPerSecond: mb / (imported.stageSeconds + imported.commitSeconds), rssBeforeMb: importBefore.rss, peakMb: importAfter.peak } };
  results.large = large;
  process.stderr.write(`  ${JSON.stringify(large)}\n`);

  // Indexing from scratch against importing the same corpus.
  const small = (await call(source, "POST", "/v1/rag/corpora", { name: "SciFact sample", embedding_model: "embed" })).id;
  started = performance.now();
  // 100 files a request, the server's limit.
  for (let i = 0; i < REINDEX_DOCS; i += 100) {
    const form = new FormData();
    for (const a of ABSTRACTS.slice(i, Math.min(REINDEX_DOCS, i + 100))) form.append("file", new Blob([`${a.title}\n\n${a.text}`]), `${a._id}.txt`);
    const up = await fetch(`${source.url}/v1/rag/corpora/${small}/documents`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form });
    if (up.status !== 202) throw new Error(`upload: ${up.status} ${await up.text()}`);
  }
  await waitReady(source, small);
  const indexSeconds = (performance.now() - started) / 1000;
  const smallFile = path.join(root, "sample.pustaka");
  const smallExport = await exportTo(source, small, smallFile);
  const smallImport = await importFrom(target, smallFile);
  const importSeconds = smallImport.stageSeconds + smallImport.commitSeconds;
  const reindex = { documents: REINDEX_DOCS, passages: smallImport.corpus.chunk_count, indexSeconds, exportSeconds: smallExport.seconds, importSeconds, ratio: indexSeconds / importSeconds };
  results.reindex = reindex;

  const r = large;
  const x = reindex;
  log(`# Corpus bundles (${new Date().toISOString()}, ${os.cpus()[0]?.model ?? "CPU"}, ${os.cpus().length} cores)\n`);
  log(`A corpus of ${CHUNKS.toLocaleString("en")} passages (384 dimensions) in ${DOCUMENTS.toLocaleString("en")} documents with ${args["original-mb"]} MB of originals (seeded in ${seedSeconds.toFixed(0)} s); the bundle: ${mb.toFixed(0)} MB, passphrase (scrypt 2^18).\n`);
  log("| direction | seconds | MB/s | server RSS before (MB) | server peak (MB) |");
  log("|---|---|---|---|---|");
  log(`| export | ${r.export.seconds.toFixed(1)} | ${r.export.mbPerSecond.toFixed(1)} | ${r.export.rssBeforeMb.toFixed(0)} | ${r.export.peakMb.toFixed(0)} |`);
  log(`| import (verify ${r.import.stageSeconds.toFixed(1)} s + write ${r.import.commitSeconds.toFixed(1)} s) | ${(r.import.stageSeconds + r.import.commitSeconds).toFixed(1)} | ${r.import.mbPerSecond.toFixed(1)} | ${r.import.rssBeforeMb.toFixed(0)} | ${r.import.peakMb.toFixed(0)} |`);
  log(`\nIndexing ${REINDEX_DOCS} SciFact abstracts from scratch (${x.passages} passages, multilingual-e5-small, 1 thread): ${x.indexSeconds.toFixed(1)} s; importing the same corpus from its bundle: ${x.importSeconds.toFixed(1)} s: **${x.ratio.toFixed(0)}×** faster.`);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  mkdirSync(path.join(REPO_ROOT, "bench", "results"), { recursive: true });
  const base = path.join(REPO_ROOT, "bench", "results", `bundles-${stamp}`);
  writeFileSync(`${base}.json`, `${JSON.stringify({ at: new Date().toISOString(), cpu: os.cpus()[0]?.model, cores: os.cpus().length, ...results }, null, 2)}\n`);
  writeFileSync(`${base}.md`, `${lines.join("\n")}\n`);
  process.stderr.write(`written ${base}.json and .md\n`);
} finally {
  await source?.spawned.stop();
  await target?.spawned.stop();
  rmSync(root, { recursive: true, force: true });
}
