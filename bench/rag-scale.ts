/**
 * Retrieval at scale: N chunks sealed into a real encrypted store as the indexer stores
 * them (content, vector, keyword analysis). Then, in this process, the time and memory to
 * build the corpus's index from its chunks (decrypt + build the in-memory LanceDB table and
 * full-text index) and to write its sealed snapshot; and in a fresh process (`--open`), as
 * after a restart, the time and memory to open it from the snapshot, the time until its
 * vector index is built in the background, the latency of searches after that, and their
 * recall@10 against exact search; with a rerank model, also of a hybrid search whose best
 * 30 candidates a cross-encoder rescores (node-llama-cpp ranking context, 2 threads); and
 * the open after a 1,000-chunk document was indexed while the index was not in memory.
 * Usage: rag-scale.ts N DIMENSIONS [RERANK_GGUF] → JSON.
 *
 * The data imitates a corpus rather than noise: chunks come in topics of 50 (a chunk's
 * vector is its topic's direction plus isotropic noise of the same norm, so chunks of a
 * topic have cosine ≈ 0.5 and the 10 nearest are near-ties among 50), words follow Zipf's
 * law over a 20k-word vocabulary, and a question is near a topic and uses words of one of
 * its chunks. Uniform random vectors have no nearest neighbours worth the name: no vector
 * index holds recall on them, and no embedding model produces them.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { LlamaEngine } from "../src-server/engine/llama-engine.js";
import { newId } from "../src-server/ids.js";
import { readGgufSummary } from "../src-server/models/gguf-summary.js";
import type { ModelEntry } from "../src-server/models/model-registry.js";
import { openContent, sealContent, sealTerms, sealVector } from "../src-server/rag/chunk-codec.js";
import { analyzeChunk } from "../src-server/rag/retrieval/keyword-analysis.js";
import { CorpusIndexes, type CorpusIndexEvent } from "../src-server/rag/retrieval/corpus-indexes.js";
import type { SearchMode } from "../src-server/rag/retrieval/corpus-index.js";
import { CorpusKeyring } from "../src-server/security/corpus-keyring.js";
import { LocalKeyFileProvider } from "../src-server/security/local-key-file-provider.js";
import { ChunkStore, type SealedChunk } from "../src-server/store/chunk-store.js";
import { CorpusStore } from "../src-server/store/corpus-store.js";
import { openSqlDatabase } from "../src-server/store/sql-database.js";
import { DocumentStore } from "../src-server/store/document-store.js";
import { SnapshotFiles } from "../src-server/store/snapshot-files.js";
import { percentile } from "./lib.js";

const OPEN = process.argv[2] === "--open";
const [DIR, CORPUS] = OPEN ? [process.argv[3]!, process.argv[4]!] : [undefined, undefined];
const args = process.argv.slice(OPEN ? 5 : 2);
const N = Number(args[0] ?? 10_000);
const DIM = Number(args[1] ?? 1024);
const RERANKER = args[2];
/** Fused candidates the reranker reads (the query pipeline's default). */
const RERANK_CANDIDATES = 30;
const WORDS = (
  "banjir hujan sungai kampung mangsa bantuan pusat pemindahan daerah negeri kerajaan laporan jalan jambatan " +
  "flood rain river village relief centre district state government report road bridge ridership station line " +
  "padi beras subsidi petani harga baja musim tuaian clinic patient waiting doctor nurse vaccine budget audit " +
  "bekalan air paip tekanan gangguan loji rawatan syarikat pelanggan tourism hotel visitor broadband tower school"
).split(" ");

let seed = 12345;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const gaussian = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
/** The vocabulary: the real words first (the commonest), then made-up ones. */
const VOCABULARY = [...WORDS, ...Array.from({ length: 20_000 - WORDS.length }, (_, i) => `kata${i.toString(36)}`)];
const zipf = new Float64Array(VOCABULARY.length);
zipf.reduce((sum, _, i) => (zipf[i] = sum + 1 / (i + 1)), 0);
function word(): string {
  const x = random() * zipf.at(-1)!;
  let lo = 0;
  let hi = zipf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (zipf[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
}
const sentence = (n: number) => Array.from({ length: n }, word).join(" ");
const CHUNKS_PER_TOPIC = 50;
const topics = Array.from({ length: Math.max(1, Math.round(N / CHUNKS_PER_TOPIC)) }, () => Float32Array.from({ length: DIM }, gaussian));
/** A unit vector near `topic`'s direction: direction and noise of equal norm. */
function near(topic: Float32Array): Float32Array {
  const v = new Float32Array(DIM);
  let norm = 0;
  for (let i = 0; i < DIM; i++) norm += (v[i] = topic[i]! + gaussian()) ** 2;
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIM; i++) v[i]! /= norm;
  return v;
}

interface Questions {
  questions: { text: string; vector: number[] }[];
  filterDocuments: string[];
}

async function openStores(dir: string) {
  const store = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
  // Stores not yet on the asynchronous store read SQLite directly.
  const db = store.sqlite!;
  const corpora = new CorpusStore(store);
  const chunks = new ChunkStore(store);
  // A keyring of its own, as after a restart: the key is unwrapped from storage.
  const keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
  const events: CorpusIndexEvent[] = [];
  const indexes = new CorpusIndexes(chunks, keyring, { snapshots: new SnapshotFiles(path.join(dir, "index-snapshots")), snapshotDelayMs: 3_600_000, onEvent: (e) => events.push(e) });
  return { store, db, corpora, chunks, keyring, indexes, events };
}

if (!OPEN) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-scale-"));
  const { store, db, corpora, chunks, keyring, indexes, events } = await openStores(dir);
  const documents = new DocumentStore(store);
  db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)").run("ws_default", "bench", 0);
  const corpusId = newId("corp_");
  await corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "scale", chunking: "fixed", embeddingModel: "synthetic", dimensions: DIM, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
  const cipher = await keyring.cipher(corpusId);

  const perDocument = Math.min(1000, N / 50);
  /** Chunks questions are asked about: their topic and text. */
  const samples: { topic: number; text: string }[] = [];
  /** The documents a restricted search asks for. */
  const filterDocuments: string[] = [];
  const writeStarted = performance.now();
  for (let d = 0; d < N / perDocument; d++) {
    const documentId = newId("doc_");
    if (filterDocuments.length < 2) filterDocuments.push(documentId);
    await documents.insert({ id: documentId, corpusId, filename: `doc-${d}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: documentId.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: d, updatedAt: d, indexedAt: null });
    const sealed: SealedChunk[] = [];
    for (let i = 0; i < perDocument; i++) {
      const id = newId("chk_");
      const text = `${sentence(12)}. ${sentence(20)}. ${sentence(15)}.`;
      const topic = Math.floor((d * perDocument + i) / CHUNKS_PER_TOPIC) % topics.length;
      if (random() < 0.002 && samples.length < 100) samples.push({ topic, text });
      sealed.push({ id, corpusId, documentId, index: i, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 60, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, near(topics[topic]!)), terms: sealTerms(cipher, id, analyzeChunk(text)) });
    }
    await chunks.commitDocument(documentId, sealed, null, d);
  }
  const writeSeconds = (performance.now() - writeStarted) / 1000;

  // Built from the chunks (the first open, or after the corpus changed), then its snapshot written.
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const buildStarted = performance.now();
  const index = await indexes.get(corpusId);
  const buildSeconds = (performance.now() - buildStarted) / 1000;
  global.gc?.();
  const buildMemoryMb = (process.memoryUsage().rss - rssBefore) / 1048576;
  await index.vectorIndexBuilt();
  const snapshotStarted = performance.now();
  await indexes.flushSnapshots();
  const snapshotWriteSeconds = (performance.now() - snapshotStarted) / 1000;
  const written = events.find((e) => e.type === "snapshot.written");
  if (!written) throw new Error(`no snapshot written: ${JSON.stringify(events)}`);
  await indexes.close();
  await store.close();

  /** Questions: near a sampled chunk's topic, in three of its words. */
  const questions: Questions = {
    filterDocuments,
    questions: Array.from({ length: 100 }, (_, q) => {
      const sample = samples[q % samples.length]!;
      const words = sample.text.replace(/\./g, "").split(" ");
      const start = Math.floor(random() * (words.length - 3));
      return { text: words.slice(start, start + 3).join(" "), vector: [...near(topics[sample.topic]!)] };
    }),
  };
  writeFileSync(path.join(dir, "questions.json"), JSON.stringify(questions));
  const opened = JSON.parse(execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), "--open", dir, corpusId, ...process.argv.slice(2)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 24 })) as Record<string, unknown>;
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ chunks: N, dimensions: DIM, writeSeconds, buildSeconds, buildMemoryMb, snapshotWriteSeconds, snapshotMb: written.type === "snapshot.written" ? written.bytes / 1048576 : null, ...opened }));
} else {
  const { store, chunks, keyring, indexes, events } = await openStores(DIR!);
  const corpusId = CORPUS!;
  const { questions, filterDocuments } = JSON.parse(readFileSync(path.join(DIR!, "questions.json"), "utf8")) as Questions;
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const openStarted = performance.now();
  const index = await indexes.get(corpusId);
  const openSeconds = (performance.now() - openStarted) / 1000;
  const openedFrom = events.find((e) => e.type === "opened");
  global.gc?.();
  const openMemoryMb = (process.memoryUsage().rss - rssBefore) / 1048576;
  await index.vectorIndexBuilt();
  const vectorIndexSeconds = (performance.now() - openStarted) / 1000 - openSeconds;
  global.gc?.();
  const memoryMb = (process.memoryUsage().rss - rssBefore) / 1048576;

  const asked = questions.map((q) => ({ text: q.text, vector: Float32Array.from(q.vector) }));
  const latency: Record<string, { p50: number; p95: number }> = {};
  const recallAt10: Record<string, number> = {};
  for (const mode of ["vector", "keyword", "hybrid"] as SearchMode[]) {
    const times: number[] = [];
    let found = 0;
    for (const question of asked) {
      const started = performance.now();
      const hits = await index.search({ mode, ...question, topK: 10 });
      times.push(performance.now() - started);
      if (mode !== "keyword") {
        const exact = new Set((await index.search({ mode, ...question, topK: 10, exact: true })).map((h) => h.chunkId));
        found += hits.filter((h) => exact.has(h.chunkId)).length / Math.max(1, exact.size);
      }
    }
    latency[mode] = { p50: percentile(times, 50), p95: percentile(times, 95) };
    if (mode !== "keyword") recallAt10[mode] = found / asked.length;
  }
  {
    // Restricted to two documents (2% of the corpus): exact over theirs.
    const times: number[] = [];
    for (const question of asked.slice(0, 50)) {
      const started = performance.now();
      await index.search({ mode: "hybrid", ...question, topK: 10, documentIds: filterDocuments });
      times.push(performance.now() - started);
    }
    latency["hybrid, 2 documents"] = { p50: percentile(times, 50), p95: percentile(times, 95) };
  }
  if (RERANKER) {
    const engine = new LlamaEngine({ gpu: "cpu", threads: 2, idleUnloadSeconds: 0, chat: { contextSize: 512, sequences: 1, maxQueued: 1, promptCache: true }, embeddings: { contexts: 1 }, rerank: { contexts: 1 } }, pino({ level: "silent" }));
    const entry = { id: "reranker", type: "rerank", aliases: [], gguf: await readGgufSummary(RERANKER), remote: null, catalog: null, origin: "binding" } as ModelEntry;
    const signal = new AbortController().signal;
    const cipher = await keyring.cipher(corpusId);
    await engine.rerank(entry, "warm up", ["the model loads"], signal);
    const times: number[] = [];
    for (let q = 0; q < 20; q++) {
      const { text, vector } = asked[q]!;
      const started = performance.now();
      const hits = await index.search({ mode: "hybrid", text, vector, topK: RERANK_CANDIDATES });
      // The candidates' texts decrypted from the store, as the query service does.
      const byId = new Map((await chunks.byIds(hits.map((h) => h.chunkId))).map((c) => [c.id, openContent(cipher, c.id, c.content).text]));
      await engine.rerank(entry, text, hits.map((h) => byId.get(h.chunkId)!), signal);
      times.push(performance.now() - started);
    }
    latency["hybrid + rerank"] = { p50: percentile(times, 50), p95: percentile(times, 95) };
    await engine.close();
  }
  await indexes.close();

  // A 1,000-chunk document indexed while the index is not in memory: the next open brings the
  // snapshot up to date (decrypts and adds the new chunks) instead of rebuilding.
  const cipher = await keyring.cipher(corpusId);
  const documentId = newId("doc_");
  await new DocumentStore(store).insert({ id: documentId, corpusId, filename: "late.md", contentType: "text/markdown", format: "md", bytes: 1, sha256: documentId.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 0, updatedAt: 0, indexedAt: null });
  const late: SealedChunk[] = Array.from({ length: 1000 }, (_, i) => {
    const id = newId("chk_");
    const text = `${sentence(12)}. ${sentence(20)}. ${sentence(15)}.`;
    return { id, corpusId, documentId, index: i, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 60, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, near(topics[i % topics.length]!)), terms: sealTerms(cipher, id, analyzeChunk(text)) };
  });
  await chunks.commitDocument(documentId, late, null, 0);
  const behind = await openStores(DIR!);
  const behindStarted = performance.now();
  await behind.indexes.get(corpusId);
  const openBehindSeconds = (performance.now() - behindStarted) / 1000;
  const behindEvent = behind.events.find((e) => e.type === "opened");
  if (behindEvent?.type !== "opened" || behindEvent.from !== "snapshot" || behindEvent.added !== 1000) throw new Error(`not brought up to date: ${JSON.stringify(behindEvent)}`);
  await behind.indexes.close();
  await behind.store.close();
  await store.close();
  process.stdout.write(JSON.stringify({ openedFrom: openedFrom?.type === "opened" ? openedFrom.from : null, openSeconds, openMemoryMb, vectorIndexSeconds, approximate: index.approximate, memoryMb, latency, recallAt10, openBehindSeconds }));
}
