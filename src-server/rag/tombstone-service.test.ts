/**
 * Deletion into tombstones, retention and the purge, on real stores in a temp folder
 * (SQLite primary and cold store, blob files, a real keyring) with a clock the tests
 * advance. No model: chunks are sealed here as the indexer seals them.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import type { Clock } from "../domain/clock.js";
import type { Principal, Scope } from "../domain/scopes.js";
import { newId } from "../ids.js";
import { CorpusKeyring } from "../security/corpus-keyring.js";
import { DataCipher, newDataKey } from "../security/data-cipher.js";
import { DataKeyGoneError } from "../security/data-keyring.js";
import { EncryptedBlobStore } from "../security/encrypted-blob-store.js";
import type { KeyProvider } from "../security/key-provider.js";
import { BlobStore } from "../store/blob-store.js";
import { ChunkStore, type SealedChunk } from "../store/chunk-store.js";
import type { ColdStore } from "../store/cold-store.js";
import { CorpusStore, type CorpusRecord } from "../store/corpus-store.js";
import type { Database } from "../store/database.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";
import { DocumentStore } from "../store/document-store.js";
import { SqliteColdStore } from "../store/sqlite-cold-store.js";
import { TombstoneCatalog, type CopiedRows, type TombstoneCounts } from "../store/tombstone-catalog.js";
import { openContent, sealContent, sealVector } from "./chunk-codec.js";
import { TombstoneService } from "./tombstone-service.js";

const DAY_MS = 86_400_000;
const parent = mkdtempSync(path.join(os.tmpdir(), "pustaka-tomb-"));
after(() => rmSync(parent, { recursive: true, force: true }));

/** A KEK in memory: the tests are about data keys, not where the KEK lives. */
class MemoryKeyProvider implements KeyProvider {
  readonly id = "memory:test";
  private readonly kek = new DataCipher(newDataKey());
  wrapKey(dataKey: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.seal(dataKey, "kek"));
  }
  unwrapKey(wrapped: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.open(wrapped, "kek"));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

class TestClock implements Clock {
  constructor(public ms = Date.UTC(2025, 0, 1)) {}
  now(): number {
    return this.ms;
  }
  advanceDays(days: number): void {
    this.ms += days * DAY_MS;
  }
}

const principal = (workspaceId: string, scopes: Scope[]): Principal => ({ workspaceId, keyId: "key_test", keyName: "test", scopes: new Set(scopes) });

interface Fixture {
  dir: string;
  store: SqlDatabase;
  /** The same SQLite database, for reading its files' state directly. */
  db: Database;
  clock: TestClock;
  corpora: CorpusStore;
  documents: DocumentStore;
  chunks: ChunkStore;
  catalog: TombstoneCatalog;
  cold: SqliteColdStore;
  blobs: BlobStore;
  keyring: CorpusKeyring;
  service: TombstoneService;
  /** A service as after a restart, optionally over other parts (to inject failures). */
  restart(parts?: { catalog?: TombstoneCatalog; cold?: ColdStore }): TombstoneService;
  corpus(retentionDays?: number, workspaceId?: string): Promise<CorpusRecord>;
  document(corpus: CorpusRecord, chunkCount: number): Promise<{ id: string; chunks: SealedChunk[]; original: Buffer }>;
  /** Raw bytes of the primary database files (after what the service reclaimed). */
  primaryHas(needle: Buffer): boolean;
  coldHas(needle: Buffer): boolean;
}

async function fixture(name: string): Promise<Fixture> {
  const dir = path.join(parent, name);
  const store = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
  const db = store.sqlite!;
  for (const ws of ["ws_a", "ws_b"]) db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, 1)").run(ws, ws);
  const clock = new TestClock();
  const corpora = new CorpusStore(store);
  const documents = new DocumentStore(store);
  const chunks = new ChunkStore(store);
  const catalog = new TombstoneCatalog(store);
  const cold = new SqliteColdStore(path.join(dir, "cold"));
  const blobs = new BlobStore(path.join(dir, "blobs"));
  const keyring = new CorpusKeyring(new MemoryKeyProvider(), corpora);
  const sealedBlobs = new EncryptedBlobStore(blobs, keyring);
  const make = (parts: { catalog?: TombstoneCatalog; cold?: ColdStore } = {}) =>
    new TombstoneService({ catalog: parts.catalog ?? catalog, cold: parts.cold ?? cold, corpora, documents, chunks, blobs, keyring, clock });
  const has = (files: string[], needle: Buffer) => files.some((f) => existsSync(f) && readFileSync(f).includes(needle));
  after(async () => {
    await cold.close();
    await store.close();
  });
  return {
    dir,
    store,
    db,
    clock,
    corpora,
    documents,
    chunks,
    catalog,
    cold,
    blobs,
    keyring,
    service: make(),
    restart: make,
    async corpus(retentionDays = 30, workspaceId = "ws_a") {
      const record: CorpusRecord = { id: newId("corp_"), workspaceId, name: "Secret plans", chunking: "fixed", embeddingModel: "m", dimensions: 4, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays, metadata: {}, createdAt: 1, updatedAt: 1 };
      await corpora.insert(record, await keyring.create(record.id));
      return record;
    },
    async document(corpus, chunkCount) {
      const id = newId("doc_");
      const original = randomBytes(3000);
      await sealedBlobs.write(corpus.id, id, Readable.from([original]));
      await documents.insert({
        id,
        corpusId: corpus.id,
        filename: "plans.txt",
        contentType: "text/plain",
        format: "txt",
        bytes: original.length,
        sha256: randomBytes(32).toString("hex"),
        status: "processing",
        error: null,
        pageCount: null,
        chunkCount: 0,
        metadata: { team: "red" },
        attempts: 1,
        createdAt: 1,
        updatedAt: 1,
        indexedAt: null,
      });
      const cipher = await keyring.cipher(corpus.id);
      const sealed = Array.from({ length: chunkCount }, (_, index): SealedChunk => {
        const chunkId = newId("chk_");
        const vector = new Float32Array(384).map(() => Math.random());
        return { id: chunkId, corpusId: corpus.id, documentId: id, index, start: 0, end: 1, pageStart: null, pageEnd: null, tokenCount: 1, content: sealContent(cipher, chunkId, { text: `secret ${index}`, headingPath: [] }), vector: sealVector(cipher, chunkId, vector) };
      });
      await chunks.commitDocument(id, sealed, null, 1);
      return { id, chunks: sealed, original };
    },
    primaryHas: (needle) => has(["pustaka.db", "pustaka.db-wal"].map((f) => path.join(dir, f)), needle),
    coldHas: (needle) => has(["tombstones.db", "tombstones.db-wal"].map((f) => path.join(dir, "cold", f)), needle),
  };
}

const count = (db: Database, table: string, corpusId: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE corpus_id = ?`).get(corpusId) as { n: number }).n;

describe("TombstoneService", () => {
  it("moves a deleted corpus to cold storage and wipes it from the primary files", async () => {
    const f = await fixture("bury");
    const corpus = await f.corpus(30);
    const a = await f.document(corpus, 40);
    const b = await f.document(corpus, 25);
    const marker = a.chunks[17]!.content.subarray(0, 40);
    const vectorMarker = b.chunks[3]!.vector.subarray(10, 58);
    f.db.pragma("wal_checkpoint(TRUNCATE)");
    assert.ok(f.primaryHas(marker), "the chunk ciphertext is in the primary file before");

    const tombstone = await f.service.buryCorpus(corpus);
    const deletedAt = Math.floor(f.clock.ms / 1000);
    assert.equal(tombstone.status, "retained");
    assert.equal(tombstone.kind, "corpus");
    assert.equal(tombstone.deletedAt, deletedAt);
    assert.equal(tombstone.expiresAt, deletedAt + 30 * 86400);
    assert.equal(tombstone.documents, 2);
    assert.equal(tombstone.chunks, 65);
    assert.ok(tombstone.bytes > a.original.length + b.original.length + 65 * 1536);

    for (const table of ["documents", "chunks"]) assert.equal(count(f.db, table, corpus.id), 0, table);
    assert.equal(await f.corpora.getAny(corpus.id), undefined);
    assert.equal(existsSync(path.join(f.dir, "blobs", corpus.id)), false, "originals left primary storage");
    assert.equal(f.primaryHas(marker), false, "no chunk ciphertext left in pustaka.db or its WAL");
    assert.equal(f.primaryHas(vectorMarker), false, "no encrypted vector left in pustaka.db or its WAL");
    assert.equal(f.primaryHas(Buffer.from("plans.txt")), false, "no document record left either");
    assert.equal((await f.corpora.wrappedKey(corpus.id))?.destroyAfter, tombstone.expiresAt, "the key waits out the retention window");

    // The tombstone really holds the corpus: sealed as stored, openable until the purge.
    assert.ok(f.coldHas(marker) && f.coldHas(vectorMarker));
    assert.deepEqual(await f.cold.stat(corpus.id), { chunks: 65, blobs: 2, bytes: tombstone.bytes });
    const cipher = await f.keyring.cipher(corpus.id);
    const [first] = await f.cold.readChunks(corpus.id, { limit: 1 });
    assert.match(openContent(cipher, first!.id, first!.content).text, /^secret \d+$/);
    const manifest = JSON.parse(cipher.open((await f.cold.readManifest(corpus.id))!, `tombstone:${corpus.id}`).toString()) as { documents: { filename: string }[] };
    assert.deepEqual(
      manifest.documents.map((d) => d.filename),
      ["plans.txt", "plans.txt"],
    );
    assert.equal(f.coldHas(Buffer.from("plans.txt")), false, "record names go cold sealed");

    assert.equal((await f.service.buryCorpus(corpus)).status, "retained", "burying again is harmless");
  });

  it("purges nothing before expiry; after it, the cold rows, files and the wrapped key are gone for good", async () => {
    const f = await fixture("purge");
    const corpus = await f.corpus(30);
    const doc = await f.document(corpus, 30);
    const marker = doc.chunks[5]!.content.subarray(0, 40);
    await f.service.buryCorpus(corpus);

    f.clock.advanceDays(29);
    const early = await f.service.purge();
    assert.deepEqual(early.tombstones, []);
    assert.deepEqual(early.keysDestroyed, []);
    assert.equal((await f.cold.stat(corpus.id)).chunks, 30);
    assert.ok(await f.corpora.wrappedKey(corpus.id));

    f.clock.advanceDays(1);
    const purged = await f.service.purge();
    assert.deepEqual(
      purged.tombstones.map((t) => [t.id, t.chunks]),
      [[corpus.id, 30]],
    );
    assert.deepEqual(purged.keysDestroyed, [corpus.id]);
    assert.equal(purged.purgedAt, Math.floor(f.clock.ms / 1000));
    assert.deepEqual(await f.cold.stat(corpus.id), { chunks: 0, blobs: 0, bytes: 0 });
    assert.equal(existsSync(path.join(f.dir, "cold", "blobs", corpus.id)), false);
    assert.equal(f.coldHas(marker), false, "no ciphertext in the cold files");
    assert.equal(f.primaryHas(marker), false);
    assert.equal(await f.catalog.get(corpus.id), undefined);
    assert.equal(await f.corpora.wrappedKey(corpus.id), undefined, "the wrapped data key is destroyed");
    await assert.rejects(f.keyring.cipher(corpus.id), (error: unknown) => error instanceof DataKeyGoneError && /data key of corp_\w+ is gone/.test(error.message));
    assert.deepEqual((await f.service.purge()).tombstones, [], "a second purge finds nothing");
  });

  it("tombstones a deleted document; its corpus keeps its key and the rest of its data", async () => {
    const f = await fixture("document");
    const corpus = await f.corpus(7);
    const gone = await f.document(corpus, 12);
    const kept = await f.document(corpus, 8);
    const marker = gone.chunks[0]!.vector.subarray(0, 48);
    const tombstone = await f.service.buryDocument(corpus.id, gone.id);
    assert.deepEqual([tombstone.kind, tombstone.documentId, tombstone.documents, tombstone.chunks], ["document", gone.id, 1, 12]);
    assert.equal(await f.documents.getById(gone.id), undefined);
    assert.equal(count(f.db, "chunks", corpus.id), 8);
    assert.equal(existsSync(path.join(f.dir, "blobs", corpus.id, gone.id)), false);
    assert.ok(existsSync(path.join(f.dir, "blobs", corpus.id, kept.id)));
    assert.equal(f.primaryHas(marker), false);
    assert.ok(f.coldHas(marker));

    f.clock.advanceDays(8);
    const purged = await f.service.purge();
    assert.deepEqual(
      purged.tombstones.map((t) => t.id),
      [gone.id],
    );
    assert.deepEqual(purged.keysDestroyed, [], "a live corpus keeps its key");
    assert.equal(f.coldHas(marker), false);
    const cipher = await f.keyring.cipher(corpus.id);
    assert.equal(openContent(cipher, kept.chunks[0]!.id, (await f.chunks.byIds([kept.chunks[0]!.id]))[0]!.content).text, "secret 0");
  });

  it("keeps a deleted corpus's key until its longest-lived tombstone expires", async () => {
    const f = await fixture("longest");
    const corpus = await f.corpus(10);
    const doc = await f.document(corpus, 3);
    await f.document(corpus, 3);
    await f.service.buryDocument(corpus.id, doc.id); // expires on day 10
    await f.corpora.update(corpus.id, { retentionDays: 1 }, 2);
    await f.service.buryCorpus((await f.corpora.getAny(corpus.id))!); // expires on day 1

    f.clock.advanceDays(2);
    const first = await f.service.purge();
    assert.deepEqual(
      first.tombstones.map((t) => t.id),
      [corpus.id],
    );
    assert.deepEqual(first.keysDestroyed, [], "the document's tombstone still needs the key");
    f.clock.advanceDays(9);
    const second = await f.service.purge();
    assert.deepEqual(
      second.tombstones.map((t) => t.id),
      [doc.id],
    );
    assert.deepEqual(second.keysDestroyed, [corpus.id]);
  });

  it("loses nothing when it stops between the copy and the primary deletion, and finishes on retry", async () => {
    const f = await fixture("crash");
    const corpus = await f.corpus(30);
    const doc = await f.document(corpus, 20);
    const marker = doc.chunks[11]!.content.subarray(0, 40);
    class CrashingCatalog extends TombstoneCatalog {
      override async commitCorpusDeletion(): Promise<boolean> {
        throw new Error("simulated crash before the primary deletion");
      }
    }
    const crashing = f.restart({ catalog: new CrashingCatalog(f.store) });
    await assert.rejects(crashing.buryCorpus(corpus), /simulated crash/);
    assert.equal((await f.catalog.get(corpus.id))?.status, "moving");
    assert.equal(count(f.db, "chunks", corpus.id), 20, "primary still holds every chunk");
    assert.ok(existsSync(path.join(f.dir, "blobs", corpus.id, doc.id)), "and the original");
    assert.equal((await f.cold.stat(corpus.id)).chunks, 20, "the cold store holds the copy");

    // After a restart, recovery finishes the requested deletion.
    const restarted = f.restart();
    assert.deepEqual((await restarted.recover()).completed, [corpus.id]);
    const tombstone = (await f.catalog.get(corpus.id))!;
    assert.deepEqual([tombstone.status, tombstone.documents, tombstone.chunks], ["retained", 1, 20]);
    assert.equal(count(f.db, "chunks", corpus.id), 0);
    assert.equal(existsSync(path.join(f.dir, "blobs", corpus.id)), false);
    assert.equal(f.primaryHas(marker), false);
    assert.deepEqual(await f.cold.stat(corpus.id), { chunks: 20, blobs: 1, bytes: tombstone.bytes });
    assert.deepEqual(await f.cold.readBlob(corpus.id, doc.id), readFileSync(path.join(f.dir, "cold", "blobs", corpus.id, doc.id)));
  });

  it("runs only the copy when asked (copyCorpus) and a plain retry of the deletion completes it", async () => {
    const f = await fixture("retry");
    const corpus = await f.corpus(30);
    await f.document(corpus, 5);
    assert.equal((await f.service.copyCorpus(corpus)).status, "moving");
    assert.equal(count(f.db, "chunks", corpus.id), 5);
    assert.equal((await f.cold.stat(corpus.id)).chunks, 5);
    const done = await f.service.buryCorpus(corpus);
    assert.deepEqual([done.status, done.chunks], ["retained", 5]);
    assert.equal(count(f.db, "chunks", corpus.id), 0);
  });

  it("copies again when the indexer commits chunks while the copy runs, so none is lost", async () => {
    const f = await fixture("race");
    const corpus = await f.corpus(30);
    await f.document(corpus, 4);
    let late: SealedChunk[] = [];
    let raced = false;
    /** The indexer finishing a document just as the first copy ends. */
    const cold = new Proxy(f.cold, {
      get(target, prop, receiver) {
        if (prop === "putManifest") {
          return async (id: string, sealed: Buffer) => {
            await target.putManifest(id, sealed);
            if (!raced) {
              raced = true;
              late = (await f.document(corpus, 6)).chunks;
            }
          };
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const tombstone = await f.restart({ cold }).buryCorpus(corpus);
    assert.ok(raced);
    assert.deepEqual([tombstone.documents, tombstone.chunks], [2, 10]);
    const held = new Set((await f.cold.readChunks(corpus.id, { limit: 100 })).map((c) => c.id));
    assert.equal(held.size, 10);
    for (const c of late) assert.ok(held.has(c.id), "a chunk committed during the copy is in the tombstone");
    assert.equal(count(f.db, "chunks", corpus.id), 0);
  });

  it("refuses to delete rows that were not copied (the catalogue's own check)", async () => {
    const f = await fixture("check");
    const corpus = await f.corpus(30);
    const doc = await f.document(corpus, 3);
    await f.catalog.begin({ id: corpus.id, kind: "corpus", workspaceId: "ws_a", corpusId: corpus.id, documentId: null, deletedAt: 1, expiresAt: 2 });
    const partial: CopiedRows = { documentIds: new Set([doc.id]), chunkIds: new Set(doc.chunks.slice(0, 2).map((c) => c.id)) };
    const counts: TombstoneCounts = { documents: 1, chunks: 2, bytes: 1 };
    assert.equal(await f.catalog.commitCorpusDeletion(corpus.id, partial, counts, 2), false);
    assert.equal(count(f.db, "chunks", corpus.id), 3);
    assert.equal((await f.catalog.get(corpus.id))?.status, "moving");
  });

  it("destroys at once what is deleted with retention 0, and reports every purge", async () => {
    const f = await fixture("zero");
    const reports: string[][] = [];
    const service = new TombstoneService({ catalog: f.catalog, cold: f.cold, corpora: f.corpora, documents: f.documents, chunks: f.chunks, blobs: f.blobs, keyring: f.keyring, clock: f.clock, onPurged: (r) => reports.push([...r.tombstones.map((t) => t.id), ...r.keysDestroyed]) });
    const corpus = await f.corpus(0);
    const doc = await f.document(corpus, 4);
    const marker = doc.chunks[1]!.content.subarray(0, 40);
    const tombstone = await service.buryCorpus(corpus);
    assert.deepEqual([tombstone.status, tombstone.expiresAt, tombstone.chunks], ["purged", tombstone.deletedAt, 4]);
    assert.deepEqual(reports, [[corpus.id, corpus.id]]);
    assert.equal(await f.corpora.wrappedKey(corpus.id), undefined);
    assert.equal(f.coldHas(marker) || f.primaryHas(marker), false);
    await service.purge();
    assert.equal(reports.length, 1, "a purge that destroys nothing reports nothing");
  });

  it("destroys keys of corpora deleted before tombstones existed, once due", async () => {
    const f = await fixture("legacy");
    const corpus = await f.corpus(30);
    const due = Math.floor(f.clock.ms / 1000) + 5 * 86400;
    f.db.prepare("DELETE FROM corpora WHERE id = ?").run(corpus.id);
    f.db.prepare("UPDATE corpus_keys SET destroy_after = ? WHERE corpus_id = ?").run(due, corpus.id);
    assert.deepEqual((await f.service.purge()).keysDestroyed, []);
    f.clock.advanceDays(5);
    assert.deepEqual((await f.service.purge()).keysDestroyed, [corpus.id]);
    assert.equal(await f.corpora.wrappedKey(corpus.id), undefined);
  });

  it("destroys and reports each expired tombstone once when two replicas purge at the same moment", async () => {
    const f = await fixture("replicas");
    const reports: { replica: string; tombstones: string[]; keys: string[] }[] = [];
    const replica = (name: string) =>
      new TombstoneService({ catalog: new TombstoneCatalog(f.store), cold: f.cold, corpora: f.corpora, documents: f.documents, chunks: f.chunks, blobs: f.blobs, keyring: f.keyring, clock: f.clock, onPurged: (r) => reports.push({ replica: name, tombstones: r.tombstones.map((t) => t.id), keys: r.keysDestroyed }) });
    const buried: string[] = [];
    for (let i = 0; i < 4; i++) {
      const corpus = await f.corpus(1);
      await f.document(corpus, 3);
      buried.push((await f.service.buryCorpus(corpus)).id);
    }
    f.clock.advanceDays(2);
    const [a, b] = [replica("a"), replica("b")];
    const results = await Promise.all([a.purge(), b.purge(), a.purge(), b.purge()] as const);
    const reported = reports.flatMap((r) => r.tombstones);
    assert.deepEqual([...reported].sort(), [...buried].sort(), "every expired tombstone reported exactly once");
    assert.deepEqual(reports.flatMap((r) => r.keys).sort(), [...buried].sort(), "every key reported destroyed exactly once");
    assert.equal(results[0], results[2], "calls on one replica share its run");
    assert.deepEqual([results[0], results[1]].flatMap((r) => r.tombstones.map((t) => t.id)).sort(), [...buried].sort());
    for (const id of buried) assert.equal(await f.catalog.get(id), undefined);
    for (const id of buried) assert.deepEqual(await f.cold.stat(id), { chunks: 0, blobs: 0, bytes: 0 });
  });

  it("lists tombstones per workspace by scope, and only administrators purge on demand", async () => {
    const f = await fixture("access");
    const a = await f.corpus(30, "ws_a");
    const b = await f.corpus(30, "ws_b");
    await f.service.buryCorpus(a);
    f.clock.advanceDays(1);
    await f.service.buryCorpus(b);
    const page = { limit: 20, order: "desc" as const };
    const all = await f.service.list(principal("ws_a", ["workspaces.manage"]), page);
    assert.deepEqual(
      all.data.map((t) => t.id),
      [b.id, a.id],
    );
    assert.deepEqual(
      (await f.service.list(principal("ws_a", ["workspaces.manage"]), page, "ws_b")).data.map((t) => t.id),
      [b.id],
    );
    assert.deepEqual(
      (await f.service.list(principal("ws_a", ["audit.read"]), page)).data.map((t) => t.id),
      [a.id],
    );
    const onePage = await f.service.list(principal("ws_a", ["workspaces.manage"]), { limit: 1, order: "asc" });
    assert.deepEqual([onePage.data[0]?.id, onePage.hasMore], [a.id, true]);
    await assert.rejects(f.service.list(principal("ws_a", ["audit.read"]), page, "ws_b"), (e: { kind?: string; code?: string }) => e.kind === "not_found" && e.code === "workspace_not_found");
    await assert.rejects(f.service.list(principal("ws_a", ["rag.write"]), page), (e: { kind?: string; code?: string }) => e.kind === "permission" && e.code === "insufficient_scope");
    assert.throws(() => f.service.purgeNow(principal("ws_a", ["audit.read", "rag.write"])), (e: { kind?: string }) => e.kind === "permission");
    assert.deepEqual((await f.service.purgeNow(principal("ws_a", ["workspaces.manage"]))).tombstones, []);
  });
});
