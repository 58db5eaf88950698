/**
 * Retrieval at scale, in its own process: N chunks (random unit vectors, text drawn
 * from an English/Malay vocabulary) sealed into a real encrypted store; then the time
 * and memory to open the corpus (decrypt + build the in-memory LanceDB table and
 * full-text index) and the latency of searches; with a rerank model, also of a hybrid
 * search whose best 30 candidates a cross-encoder rescores (node-llama-cpp ranking context,
 * 2 threads). Usage: rag-scale.ts N DIMENSIONS [RERANK_GGUF] → JSON.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { LlamaEngine } from "../src-server/engine/llama-engine.js";
import { newId } from "../src-server/ids.js";
import { readGgufSummary } from "../src-server/models/gguf-summary.js";
import type { ModelEntry } from "../src-server/models/model-registry.js";
import { sealContent, sealVector } from "../src-server/rag/chunk-codec.js";
import { CorpusIndexes } from "../src-server/rag/retrieval/corpus-indexes.js";
import type { SearchMode } from "../src-server/rag/retrieval/corpus-index.js";
import { CorpusKeyring } from "../src-server/security/corpus-keyring.js";
import { LocalKeyFileProvider } from "../src-server/security/local-key-file-provider.js";
import { ChunkStore, type SealedChunk } from "../src-server/store/chunk-store.js";
import { CorpusStore } from "../src-server/store/corpus-store.js";
import { openDatabase } from "../src-server/store/database.js";
import { DocumentStore } from "../src-server/store/document-store.js";
import { WorkspaceStore } from "../src-server/store/workspace-store.js";
import { percentile } from "./lib.js";

const N = Number(process.argv[2] ?? 10_000);
const DIM = Number(process.argv[3] ?? 1024);
const RERANKER = process.argv[4];
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
const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
function unitVector(): Float32Array {
  const v = new Float32Array(DIM);
  let norm = 0;
  for (let i = 0; i < DIM; i++) norm += (v[i] = random() - 0.5) ** 2;
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIM; i++) v[i]! /= norm;
  return v;
}

const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-scale-"));
const db = openDatabase(dir);
const corpora = new CorpusStore(db);
const documents = new DocumentStore(db);
const chunks = new ChunkStore(db);
new WorkspaceStore(db).insert({ id: "ws_default", name: "bench", createdAt: 0 });
const keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
const corpusId = newId("corp_");
corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "scale", chunking: "fixed", embeddingModel: "synthetic", dimensions: DIM, embeddingPrompts: { query: "", document: "" }, rerankModel: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
const cipher = await keyring.cipher(corpusId);

const perDocument = 1000;
const texts = new Map<string, string>();
const writeStarted = performance.now();
for (let d = 0; d < N / perDocument; d++) {
  const documentId = newId("doc_");
  documents.insert({ id: documentId, corpusId, filename: `doc-${d}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: documentId.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: d, updatedAt: d, indexedAt: null });
  const sealed: SealedChunk[] = [];
  for (let i = 0; i < perDocument; i++) {
    const id = newId("chk_");
    const text = `${sentence(12)}. ${sentence(20)}. ${sentence(15)}.`;
    if (RERANKER) texts.set(id, text);
    sealed.push({ id, corpusId, documentId, index: i, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 60, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, unitVector()) });
  }
  chunks.commitDocument(documentId, sealed, null, d);
}
const writeSeconds = (performance.now() - writeStarted) / 1000;

// A fresh keyring, as after a restart: the key is unwrapped from storage.
const indexes = new CorpusIndexes(chunks, new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora));
global.gc?.();
const rssBefore = process.memoryUsage().rss;
const openStarted = performance.now();
const index = await indexes.get(corpusId);
const openSeconds = (performance.now() - openStarted) / 1000;
global.gc?.();
const rssAfter = process.memoryUsage().rss;

const latency: Record<string, { p50: number; p95: number }> = {};
for (const mode of ["vector", "keyword", "hybrid"] as SearchMode[]) {
  const times: number[] = [];
  for (let q = 0; q < 100; q++) {
    const started = performance.now();
    await index.search({ mode, text: sentence(4), vector: unitVector(), topK: 5 });
    times.push(performance.now() - started);
  }
  latency[mode] = { p50: percentile(times, 50), p95: percentile(times, 95) };
}
if (RERANKER) {
  const engine = new LlamaEngine({ gpu: "cpu", threads: 2, idleUnloadSeconds: 0, chat: { contextSize: 512, sequences: 1, maxQueued: 1, promptCache: true }, embeddings: { contexts: 1 }, rerank: { contexts: 1 } }, pino({ level: "silent" }));
  const entry = { id: "reranker", type: "rerank", aliases: [], gguf: await readGgufSummary(RERANKER), catalog: null, origin: "binding" } as ModelEntry;
  const signal = new AbortController().signal;
  await engine.rerank(entry, "warm up", ["the model loads"], signal);
  const times: number[] = [];
  for (let q = 0; q < 20; q++) {
    const text = sentence(4);
    const started = performance.now();
    const hits = await index.search({ mode: "hybrid", text, vector: unitVector(), topK: RERANK_CANDIDATES });
    await engine.rerank(entry, text, hits.map((h) => texts.get(h.chunkId)!), signal);
    times.push(performance.now() - started);
  }
  latency["hybrid + rerank"] = { p50: percentile(times, 50), p95: percentile(times, 95) };
  await engine.close();
}
await indexes.close();
db.close();
process.stdout.write(JSON.stringify({ chunks: await Promise.resolve(N), dimensions: DIM, writeSeconds, openSeconds, memoryMb: (rssAfter - rssBefore) / 1048576, latency }));
