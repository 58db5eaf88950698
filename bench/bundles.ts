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
import { createWriteStream, mkdirSync, mkdtempSync, openAsBlob, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { loadConfig } from "../src-server/config.js";
import { packageLayout } from "../src-server/index.js";
import { newId } from "../src-server/ids.js";
import { sealContent, sealTerms, sealVector } from "../src-server/rag/chunk-codec.js";
import { analyzeChunk } from "../src-server/rag/retrieval/keyword-analysis.js";
import { CorpusKeyring } from "../src-server/security/corpus-keyring.js";
import { EncryptedBlobStore } from "../src-server/security/encrypted-blob-store.js";
import { openKeyProvider } from "../src-server/security/key-providers.js";
import { BlobStore } from "../src-server/store/blob-store.js";
import { ChunkStore, type SealedChunk } from "../src-server/store/chunk-store.js";
import { CorpusStore } from "../src-server/store/corpus-store.js";
import { DocumentStore, type DocumentRecord } from "../src-server/store/document-store.js";
import { databaseLocationOf, openSqlDatabase } from "../src-server/store/sql-database.js";
import { REPO_ROOT, testModel } from "../test/helpers/models.js";
import { spawnUntil, type Spawned } from "./lib.js";
import { createHash } from "node:crypto";

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
const KEY = "psk-bench-bundles-key-0000000000";
const PASSPHRASE = "bench-bundle-passphrase-tujuh-pulau";
const MODEL = testModel("multilingual-e5-small");
const DIMS = 384;
const ABSTRACTS = readFileSync(path.join(REPO_ROOT, "..", "shared", "evalsets", "scifact", "corpus.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });

interface Server {
  url: string;
  pid: number;
  spawned: Spawned;
}

async function serve(dataDir: string): Promise<Server> {
  const spawned = await spawnUntil(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts"), "serve", "--no-supervise", "--port", "0", "--threads", "1", "--log-level", "warn", "--data-dir", dataDir, "--model", `embed=${MODEL}`], /listening on (http:\/\/\S+)/, { PUSTAKA_API_KEY: KEY }, 300_000);
  return { url: spawned.match[1]!, pid: spawned.child.pid!, spawned };
}

const memory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const read = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: read("VmRSS"), peak: read("VmHWM") };
};

interface CorpusReply {
  id: string;
  status: string;
  chunk_count: number;
  document_counts: { total: number };
}

async function call<T = CorpusReply>(server: Server, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json: unknown = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}

/** Writes `documents` documents with `chunks` passages and `bytes` of originals into the corpus, as indexing stores them. */
async function seed(dataDir: string, corpusId: string): Promise<void> {
  const config = loadConfig({ env: {}, defaults: { catalogPath: packageLayout().catalogPath }, overrides: { dataDir, modelsDir: path.join(dataDir, "models") } });
  const store = await openSqlDatabase(databaseLocationOf(config));
  const provider = await openKeyProvider(config.security, { dataDir });
  try {
    const corpora = new CorpusStore(store);
    const keyring = new CorpusKeyring(provider, corpora);
    const documents = new DocumentStore(store);
    const chunks = new ChunkStore(store);
    const blobs = new EncryptedBlobStore(new BlobStore(path.join(dataDir, "blobs")), keyring);
    const cipher = await keyring.cipher(corpusId);
    const perDocument = Math.ceil(CHUNKS / DOCUMENTS);
    const originalBytes = Math.floor(ORIGINAL_BYTES / DOCUMENTS);
    let written = 0;
    for (let d = 0; d < DOCUMENTS; d++) {
      const n = Math.min(perDocument, CHUNKS - written);
      if (n <= 0) break;
      // An original of the size asked, made of abstracts (text compresses nothing in the bundle: it is encrypted).
      const parts: string[] = [];
      let size = 0;
      for (let i = d; size < originalBytes; i++) {
        const a = ABSTRACTS[i % ABSTRACTS.length]!;
        const piece = `${a.title}\n\n${a.text}\n\n`;
        parts.push(piece);
        size += Buffer.byteLength(piece);
      }
      const original = Buffer.from(parts.join("")).subarray(0, originalBytes);
      const id = newId("doc_");
      const record: DocumentRecord = {
        id,
        corpusId,
        filename: `seeded-${String(d).padStart(5, "0")}.txt`,
        contentType: "text/plain",
        format: "txt",
        bytes: original.length,
        sha256: createHash("sha256").update(original).digest("hex"),
        status: "indexed",
        error: null,
        pageCount: null,
        chunkCount: n,
        metadata: {},
        attempts: 1,
        createdAt: 1_800_000_000,
        updatedAt: 1_800_000_000,
        indexedAt: 1_800_000_000,
      };
      await documents.insert(record);
      await blobs.write(corpusId, id, Readable.from([original]));
      const sealed: SealedChunk[] = [];
      for (let i = 0; i < n; i++) {
        const a = ABSTRACTS[(d * perDocument + i) % ABSTRACTS.length]!;
        const text = a.text.slice(0, 700);
        const chunkId = newId("chk_");
        const vector = new Float32Array(DIMS);
        let norm = 0;
        for (let k = 0; k < DIMS; k++) {
          vector[k] = Math.sin(d * 7919 + i * 104729 + k * 31);
          norm += vector[k]! * vector[k]!;
        }
        for (let k = 0; k < DIMS; k++) vector[k]! /= Math.sqrt(norm);
        sealed.push({
          id: chunkId,
          corpusId,
          documentId: id,
          index: i,
          start: i * 700,
          end: i * 700 + text.length,
          pageStart: null,
          pageEnd: null,
          tokenCount: Math.ceil(text.length / 4),
          content: sealContent(cipher, chunkId, { text, headingPath: [], context: a.title }),
          vector: sealVector(cipher, chunkId, vector),
          terms: sealTerms(cipher, chunkId, analyzeChunk(`${a.title}\n${text}`)),
        });
      }
      await chunks.commitDocuments([{ documentId: id, corpusId, chunks: sealed, pageCount: null }], 1_800_000_000);
      written += n;
      if (d % 200 === 0) process.stderr.write(`  seeded ${d}/${DOCUMENTS} documents, ${written} passages\n`);
    }
  } finally {
    await provider.close();
    await store.close();
  }
}

async function exportTo(server: Server, corpusId: string, file: string): Promise<{ seconds: number; bytes: number }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/v1/rag/corpora/${corpusId}/export`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ passphrase: PASSPHRASE }) });
  if (!res.ok || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
  await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), createWriteStream(file));
  return { seconds: (performance.now() - started) / 1000, bytes: statSync(file).size };
}

async function importFrom(server: Server, file: string): Promise<{ stageSeconds: number; commitSeconds: number; corpus: CorpusReply }> {
  let started = performance.now();
  const form = new FormData();
  form.append("passphrase", PASSPHRASE);
  form.append("file", await openAsBlob(file), "bundle.pustaka");
  const res = await fetch(`${server.url}/v1/rag/bundles/imports`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: form });
  const preview = (await res.json()) as { id: string; signer: { key_id: string } };
  if (res.status !== 201) throw new Error(`stage: ${res.status} ${JSON.stringify(preview)}`);
  const stageSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const corpus = await call(server, "POST", `/v1/rag/bundles/imports/${preview.id}/commit`, { passphrase: PASSPHRASE, expected_signer: preview.signer.key_id });
  return { stageSeconds, commitSeconds: (performance.now() - started) / 1000, corpus };
}

async function waitReady(server: Server, corpusId: string): Promise<void> {
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
let source: Server | null = null;
let target: Server | null = null;
try {
  mkdirSync(dirs.source);
  mkdirSync(dirs.target);
  process.stderr.write(`bundles: ${CHUNKS} passages in ${DOCUMENTS} documents, ${args["original-mb"]} MB of originals\n`);
  // The workspace, its key and the corpus are made by the server; then it stops and the corpus is filled.
  source = await serve(dirs.source);
  const big = (await call(source, "POST", "/v1/rag/corpora", { name: "Seeded corpus", embedding_model: "embed" })).id;
  await source.spawned.stop();
  let started = performance.now();
  await seed(dirs.source, big);
  const seedSeconds = (performance.now() - started) / 1000;
  source = await serve(dirs.source);
  const exportBefore = memory(source.pid);
  const exported = await exportTo(source, big, file);
  const exportAfter = memory(source.pid);
  target = await serve(dirs.target);
  const importBefore = memory(target.pid);
  const imported = await importFrom(target, file);
  const importAfter = memory(target.pid);
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
  log(`A corpus of ${CHUNKS.toLocaleString("en")} passages (${DIMS} dimensions) in ${DOCUMENTS.toLocaleString("en")} documents with ${args["original-mb"]} MB of originals (seeded in ${seedSeconds.toFixed(0)} s); the bundle: ${mb.toFixed(0)} MB, passphrase (scrypt 2^18).\n`);
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
