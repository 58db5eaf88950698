/**
 * What deleting a corpus costs (`node --import tsx bench/tombstones.ts`): moving N sealed
 * chunks (and one original per 20 chunks) to the cold store, wiping them from the primary
 * database with secure_delete, and giving the pages back (incremental vacuum + WAL
 * truncation); then the purge. The primary database also holds another corpus of the
 * same size, which stays. For comparison: a full VACUUM of the primary afterwards (the
 * alternative way to reclaim pages), which rewrites everything that stayed.
 * BENCH_TOMBSTONE_CHUNKS (default 2000,20000), BENCH_TOMBSTONE_DIMS (default 384).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { newId } from "../src-server/ids.js";
import { sealContent, sealVector } from "../src-server/rag/chunk-codec.js";
import { TombstoneService } from "../src-server/rag/tombstone-service.js";
import { CorpusKeyring } from "../src-server/security/corpus-keyring.js";
import { DataCipher, newDataKey } from "../src-server/security/data-cipher.js";
import { EncryptedBlobStore } from "../src-server/security/encrypted-blob-store.js";
import type { KeyProvider } from "../src-server/security/key-provider.js";
import { BlobStore } from "../src-server/store/blob-store.js";
import { ChunkStore, type SealedChunk } from "../src-server/store/chunk-store.js";
import { CorpusStore, type CorpusRecord } from "../src-server/store/corpus-store.js";
import { openSqlDatabase } from "../src-server/store/sql-database.js";
import { DocumentStore } from "../src-server/store/document-store.js";
import { SqliteColdStore } from "../src-server/store/sqlite-cold-store.js";
import { TombstoneCatalog } from "../src-server/store/tombstone-catalog.js";

const SIZES = (process.env.BENCH_TOMBSTONE_CHUNKS ?? "2000,20000").split(",").map(Number);
const DIMS = Number(process.env.BENCH_TOMBSTONE_DIMS ?? 384);
const CHUNKS_PER_DOC = 20;

class MemoryKeyProvider implements KeyProvider {
  readonly id = "memory:bench";
  private readonly kek = new DataCipher(newDataKey());
  wrapKey(k: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.seal(k, "kek"));
  }
  unwrapKey(w: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.open(w, "kek"));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const size = (file: string) => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

async function run(chunkCount: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-tomb-"));
  const store = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
  // The SQLite file itself, for its size, a checkpoint and the VACUUM compared against.
  const db = store.sqlite!;
  db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_b', 'b', 1)").run();
  const corpora = new CorpusStore(store);
  const documents = new DocumentStore(store);
  const chunks = new ChunkStore(store);
  const blobs = new BlobStore(path.join(dir, "blobs"));
  const keyring = new CorpusKeyring(new MemoryKeyProvider(), corpora);
  const sealedBlobs = new EncryptedBlobStore(blobs, keyring);
  const cold = new SqliteColdStore(path.join(dir, "cold"));
  let now = Date.now();
  const service = new TombstoneService({ catalog: new TombstoneCatalog(store), cold, corpora, documents, chunks, blobs, keyring, clock: { now: () => now } });

  async function fill(): Promise<CorpusRecord> {
    const corpus: CorpusRecord = { id: newId("corp_"), workspaceId: "ws_b", name: "bench", chunking: "fixed", embeddingModel: "m", dimensions: DIMS, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays: 1, metadata: {}, createdAt: 1, updatedAt: 1 };
    await corpora.insert(corpus, await keyring.create(corpus.id));
    const cipher = await keyring.cipher(corpus.id);
    for (let d = 0; d * CHUNKS_PER_DOC < chunkCount; d++) {
      const documentId = newId("doc_");
      const original = randomBytes(20_000);
      await sealedBlobs.write(corpus.id, documentId, Readable.from([original]));
      await documents.insert({ id: documentId, corpusId: corpus.id, filename: `${d}.txt`, contentType: "text/plain", format: "txt", bytes: original.length, sha256: randomBytes(32).toString("hex"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 1, updatedAt: 1, indexedAt: null });
      const sealed = Array.from({ length: Math.min(CHUNKS_PER_DOC, chunkCount - d * CHUNKS_PER_DOC) }, (_, index): SealedChunk => {
        const id = newId("chk_");
        const text = randomBytes(450).toString("base64"); // ~600 characters, a 120-token chunk
        return { id, corpusId: corpus.id, documentId, index, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 120, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, new Float32Array(DIMS).map(Math.random)) };
      });
      await chunks.commitDocument(documentId, sealed, null, 1);
    }
    return corpus;
  }

  await fill(); // stays
  const doomed = await fill();
  db.pragma("wal_checkpoint(TRUNCATE)");
  const primary = path.join(dir, "pustaka.db");
  const before = size(primary);

  let blocked = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const t = performance.now();
    blocked = Math.max(blocked, t - last - 5);
    last = t;
  }, 5);
  const started = performance.now();
  const tombstone = await service.buryCorpus(doomed);
  const buryMs = performance.now() - started;
  clearInterval(probe);
  const after = size(primary);
  const wal = size(`${primary}-wal`);

  now += 2 * 86_400_000;
  const purgeStart = performance.now();
  const purged = await service.purge();
  const purgeMs = performance.now() - purgeStart;
  const coldAfter = size(path.join(dir, "cold", "tombstones.db")) + size(path.join(dir, "cold", "tombstones.db-wal"));

  const vacuumStart = performance.now();
  db.exec("VACUUM");
  const vacuumMs = performance.now() - vacuumStart;

  console.log(
    `${chunkCount} chunks x ${DIMS} dims (${tombstone.documents} originals): delete+move ${buryMs.toFixed(0)} ms ` +
      `(${mb(tombstone.bytes)} MB to cold; longest event-loop stall ${blocked.toFixed(0)} ms), ` +
      `primary ${mb(before)} -> ${mb(after)} MB (reclaimed ${mb(before - after)} MB, WAL ${wal} B); ` +
      `purge ${purgeMs.toFixed(0)} ms (${purged.tombstones.length} tombstone, ${purged.keysDestroyed.length} key; cold files now ${mb(coldAfter)} MB); ` +
      `a full VACUUM instead would take ${vacuumMs.toFixed(0)} ms`,
  );
  await cold.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const n of SIZES) await run(n);
