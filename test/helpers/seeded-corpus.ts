/**
 * A large corpus without indexing it, and server processes to export and import it: what
 * bench/bundles.ts measures and test/integration/bundle-memory.test.ts holds to its bounds.
 */
import { createHash } from "node:crypto";
import { createWriteStream, openAsBlob, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { pipeline } from "node:stream/promises";
import { loadConfig } from "../../src-server/config.js";
import { packageLayout } from "../../src-server/index.js";
import { newId } from "../../src-server/ids.js";
import { sealContent, sealTerms, sealVector } from "../../src-server/rag/chunk-codec.js";
import { analyzeChunk } from "../../src-server/rag/retrieval/keyword-analysis.js";
import { CorpusKeyring } from "../../src-server/security/corpus-keyring.js";
import { EncryptedBlobStore } from "../../src-server/security/encrypted-blob-store.js";
import { openKeyProvider } from "../../src-server/security/key-providers.js";
import { BlobStore } from "../../src-server/store/blob-store.js";
import { ChunkStore, type SealedChunk } from "../../src-server/store/chunk-store.js";
import { CorpusStore } from "../../src-server/store/corpus-store.js";
import { DocumentStore, type DocumentRecord } from "../../src-server/store/document-store.js";
import { databaseLocationOf, openSqlDatabase } from "../../src-server/store/sql-database.js";
import { spawnUntil, type Spawned } from "../../bench/lib.js";
import { REPO_ROOT, testModel } from "./models.js";

export const KEY = "psk-bench-bundles-key-0000000000";
export const PASSPHRASE = "bench-bundle-passphrase-tujuh-pulau";
const MODEL = testModel("multilingual-e5-small");
const DIMS = 384;
export const ABSTRACTS = readFileSync(path.join(REPO_ROOT, "..", "shared", "evalsets", "scifact", "corpus.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });

/** A server in a process of its own (its peak memory is its own). */
export interface ServerProcess {
  url: string;
  pid: number;
  spawned: Spawned;
}

export async function serveProcess(dataDir: string): Promise<ServerProcess> {
  const spawned = await spawnUntil(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts"), "serve", "--no-supervise", "--port", "0", "--threads", "1", "--log-level", "warn", "--data-dir", dataDir, "--model", `embed=${MODEL}`], /listening on (http:\/\/\S+)/, { PUSTAKA_API_KEY: KEY }, 300_000);
  return { url: spawned.match[1]!, pid: spawned.child.pid!, spawned };
}

/** A process's resident memory now and at its peak (VmRSS, VmHWM), in MB. */
export const processMemory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const read = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: read("VmRSS"), peak: read("VmHWM") };
};

export interface CorpusReply {
  id: string;
  status: string;
  chunk_count: number;
  document_counts: { total: number };
}

export async function call<T = CorpusReply>(server: ServerProcess, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json: unknown = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}

export interface SeedSize {
  chunks: number;
  documents: number;
  originalBytes: number;
}

/**
 * Writes `documents` documents with `chunks` passages (random unit vectors, SciFact's text) and
 * `originalBytes` of originals into a corpus of a stopped server's data folder, sealed as
 * indexing seals them: a large corpus without the hours embedding it would take.
 */
export async function seedCorpus(dataDir: string, corpusId: string, size: SeedSize, onProgress?: (documents: number, passages: number) => void): Promise<void> {
  const { chunks: CHUNKS, documents: DOCUMENTS, originalBytes: ORIGINAL_BYTES } = size;
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
      if (d % 200 === 0) onProgress?.(d, written);
    }
  } finally {
    await provider.close();
    await store.close();
  }
}

/** Exports a corpus with the passphrase to `file`, timed. */
export async function exportTo(server: ServerProcess, corpusId: string, file: string): Promise<{ seconds: number; bytes: number }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/v1/rag/corpora/${corpusId}/export`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ passphrase: PASSPHRASE }) });
  if (!res.ok || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
  await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), createWriteStream(file));
  return { seconds: (performance.now() - started) / 1000, bytes: statSync(file).size };
}

/** Imports `file` (made with the passphrase), verified then committed with its signer, timed. */
export async function importFrom(server: ServerProcess, file: string): Promise<{ stageSeconds: number; commitSeconds: number; corpus: CorpusReply }> {
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

