import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CorpusKeyring } from "../../security/corpus-keyring.js";
import { LocalKeyFileProvider } from "../../security/local-key-file-provider.js";
import { ChunkStore, type SealedChunk } from "../../store/chunk-store.js";
import { CorpusStore } from "../../store/corpus-store.js";
import type { Database } from "../../store/database.js";
import { openSqlDatabase, type SqlDatabase } from "../../store/sql-database.js";
import { DocumentStore } from "../../store/document-store.js";
import { openTerms, sealContent, sealTerms, sealVector } from "../chunk-codec.js";
import type { DataCipher } from "../../security/data-cipher.js";
import { newId } from "../../ids.js";
import { SnapshotFiles } from "../../store/snapshot-files.js";
import type { CorpusIndex } from "./corpus-index.js";
import { CorpusIndexes, type CorpusIndexEvent } from "./corpus-indexes.js";
import { analyzeChunk } from "./keyword-analysis.js";

describe("CorpusIndexes: rebuilding a corpus's index from the encrypted store", () => {
  let dir: string;
  let store: SqlDatabase;
  let db: Database;
  let chunks: ChunkStore;
  let keyring: CorpusKeyring;
  let cipher: DataCipher;
  const corpusId = "corp_open";
  const vector = (i: number) => new Float32Array([1, i, 0, 0]);

  function chunk(id: string, documentId: string, index: number, text: string, terms: Buffer | null): SealedChunk {
    return { id, corpusId, documentId, index, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 5, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, vector(index)), terms };
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-indexes-"));
    store = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
    db = store.sqlite!;
    const corpora = new CorpusStore(store);
    const documents = new DocumentStore(store);
    chunks = new ChunkStore(store);
    db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)").run("ws_default", "test", 0);
    keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
    await corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "open", chunking: "fixed", embeddingModel: "synthetic", dimensions: 4, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
    cipher = await keyring.cipher(corpusId);
    for (const id of ["doc_old", "doc_new"]) await documents.insert({ id, corpusId, filename: `${id}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: id.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 0, updatedAt: 0, indexedAt: null });
    // A chunk stored before analyses were kept, one with an analysis of an older version, and
    // one whose stored analysis deliberately differs from its text (to see which is used).
    await chunks.commitDocument("doc_old", [chunk("chk_1", "doc_old", 0, "Banjir melanda Kelantan", null)], null, 0);
    const olderVersion = cipher.seal(Buffer.from(JSON.stringify({ v: 0, language: "en", terms: "stale" })), "chunk:chk_2:terms");
    await chunks.commitDocument("doc_new", [chunk("chk_2", "doc_new", 0, "Durian harvest in Pahang", olderVersion), chunk("chk_3", "doc_new", 1, "Rubber prices fell", sealTerms(cipher, "chk_3", { terms: "zebra", language: "en" }))], null, 0);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("uses stored analyses without reading the text, and analyses and stores the rest", async () => {
    const indexes = new CorpusIndexes(chunks, keyring);
    try {
      const index = await indexes.get(corpusId);
      const keyword = async (text: string) => (await index.search({ mode: "keyword", text, vector: null, topK: 3 })).map((h) => h.chunkId);
      assert.deepEqual(await keyword("zebra"), ["chk_3"], "the stored analysis is what is indexed");
      assert.deepEqual(await keyword("rubber"), []);
      assert.deepEqual(await keyword("banjir"), ["chk_1"], "a chunk without one is analysed from its text");
      assert.deepEqual(await keyword("durian"), ["chk_2"], "an analysis of another version is redone");
      assert.deepEqual(await keyword("stale"), []);
      const [one, two] = (await chunks.byIds(["chk_1", "chk_2"])).sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(openTerms(cipher, "chk_1", one!.terms!), analyzeChunk("Banjir melanda Kelantan"), "the analysis is stored for next time");
      assert.deepEqual(openTerms(cipher, "chk_2", two!.terms!), analyzeChunk("Durian harvest in Pahang"));
      assert.ok(!one!.terms!.includes(Buffer.from("banjir")), "sealed, never plaintext");
      const hits = await index.search({ mode: "vector", text: "", vector: vector(1), topK: 1 });
      assert.equal(hits[0]?.chunkId, "chk_3", "vectors decrypt to what was sealed");
    } finally {
      await indexes.close();
    }
  });

  it("refuses a stored analysis sealed for another chunk", async () => {
    const [three] = await chunks.byIds(["chk_3"]);
    assert.throws(() => openTerms(cipher, "chk_1", three!.terms!));
  });
});

describe("CorpusIndexes: opening from a sealed snapshot, brought up to date with the store", () => {
  let dir: string;
  let store: SqlDatabase;
  let db: Database;
  let chunks: ChunkStore;
  let documents: DocumentStore;
  let keyring: CorpusKeyring;
  let cipher: DataCipher;
  let files: SnapshotFiles;
  const corpusId = newId("corp_");
  const DIM = 16;
  const vectorOf = (doc: number, i: number) => new Float32Array(DIM).map((_, d) => Math.sin(doc * 31 + i * 7 + d));
  const texts = ["Banjir melanda Kelantan dan Terengganu", "Rubber prices fell in Pahang", "Durian harvest season in Johor"];
  const docIds: string[] = [];

  async function commit(documentId: string, doc: number, n: number): Promise<SealedChunk[]> {
    await documents.insert({ id: documentId, corpusId, filename: `${documentId}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: documentId.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 0, updatedAt: 0, indexedAt: null });
    const sealed = Array.from({ length: n }, (_, i): SealedChunk => {
      const id = newId("chk_");
      const text = `${texts[(doc + i) % texts.length]} ${doc}-${i}`;
      return { id, corpusId, documentId, index: i, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 8, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, vectorOf(doc, i)), terms: sealTerms(cipher, id, analyzeChunk(text)) };
    });
    await chunks.commitDocument(documentId, sealed, null, 0);
    return sealed;
  }

  function indexes(events: CorpusIndexEvent[] = []): CorpusIndexes {
    return new CorpusIndexes(chunks, keyring, { snapshots: files, snapshotMinChunks: 10, snapshotDelayMs: 60_000, onEvent: (e) => events.push(e) });
  }

  /** What a search returns, for comparing one index with another. */
  async function results(index: CorpusIndex): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const [doc, i] of [[0, 3], [1, 5], [2, 0]] as const) {
      for (const mode of ["hybrid", "vector", "keyword"] as const) out.push(await index.search({ mode, text: "banjir kelantan rubber", vector: vectorOf(doc, i), topK: 5 }));
    }
    out.push(await index.evidence("durian johor", vectorOf(2, 1), await index.search({ mode: "hybrid", text: "durian johor", vector: vectorOf(2, 1), topK: 3 })));
    return out;
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-snapshots-"));
    store = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
    db = store.sqlite!;
    const corpora = new CorpusStore(store);
    documents = new DocumentStore(store);
    chunks = new ChunkStore(store);
    files = new SnapshotFiles(path.join(dir, "index-snapshots"));
    db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)").run("ws_default", "test", 0);
    keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
    await corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "snap", chunking: "fixed", embeddingModel: "synthetic", dimensions: DIM, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
    cipher = await keyring.cipher(corpusId);
    for (let doc = 0; doc < 3; doc++) {
      docIds.push(newId("doc_"));
      await commit(docIds[doc]!, doc, 20);
    }
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes a snapshot after building from the chunks, and the next open reads it with the same results", async () => {
    const firstEvents: CorpusIndexEvent[] = [];
    const first = indexes(firstEvents);
    let expected: unknown[];
    try {
      expected = await results(await first.get(corpusId));
      await first.flushSnapshots();
    } finally {
      await first.close();
    }
    assert.deepEqual(firstEvents.map((e) => e.type), ["opened", "snapshot.written"], JSON.stringify(firstEvents));
    assert.equal((firstEvents[0] as { from: string }).from, "chunks");
    const bytes = readFileSync(path.join(dir, "index-snapshots", `${corpusId}.snap`));
    for (const plain of ["banjir", "kelantan", docIds[0]!]) assert.equal(bytes.indexOf(plain), -1, `${plain} is sealed`);

    const events: CorpusIndexEvent[] = [];
    const second = indexes(events);
    try {
      const index = await second.get(corpusId);
      assert.deepEqual(events, [{ type: "opened", corpusId, from: "snapshot", chunks: 60, ms: (events[0] as { ms: number }).ms, added: 0, removed: 0 }]);
      assert.deepEqual(await results(index), expected, "searches and evidence as from the chunks");
      await second.close();
      assert.deepEqual(events.map((e) => e.type), ["opened"], "an unchanged index is not written again");
    } finally {
      await second.close();
    }
  });

  it("brings a snapshot older than the store up to date (chunks added and deleted while the index was not in memory), and writes a new one", async () => {
    docIds.push(newId("doc_"));
    const added = await commit(docIds[3]!, 3, 4);
    // Chunks deleted behind the index's back (as a deletion finished at start would).
    const gone = await commit(newId("doc_"), 4, 3);
    const events: CorpusIndexEvent[] = [];
    const first = indexes(events);
    try {
      await first.get(corpusId);
      await first.flushSnapshots();
    } finally {
      await first.close();
    }
    db.prepare("DELETE FROM chunks WHERE document_id = ?").run(gone[0]!.documentId);
    events.length = 0;
    const reopened = indexes(events);
    try {
      const index = await reopened.get(corpusId);
      assert.deepEqual(events.map((e) => e.type), ["opened"]);
      assert.deepEqual({ ...events[0], ms: 0 }, { type: "opened", corpusId, from: "snapshot", chunks: 64, ms: 0, added: 0, removed: 3 });
      assert.equal(index.size, 64);
      assert.equal((await index.search({ mode: "vector", text: "", vector: vectorOf(4, 1), topK: 64 })).filter((h) => gone.some((g) => g.id === h.chunkId)).length, 0, "deleted chunks are gone");
      await reopened.flushSnapshots();
      assert.equal(events.at(-1)?.type, "snapshot.written");
    } finally {
      await reopened.close();
    }
    // A document indexed while the corpus's index is not in memory.
    docIds.push(newId("doc_"));
    const later = await commit(docIds[4]!, 5, 6);
    db.prepare("DELETE FROM chunks WHERE id = ?").run(added[0]!.id);
    events.length = 0;
    const third = indexes(events);
    try {
      const index = await third.get(corpusId);
      assert.deepEqual({ ...events[0], ms: 0 }, { type: "opened", corpusId, from: "snapshot", chunks: 69, ms: 0, added: 6, removed: 1 });
      const hit = await index.search({ mode: "vector", text: "", vector: vectorOf(5, 2), topK: 1 });
      assert.equal(hit[0]?.chunkId, later[2]!.id, "chunks stored since the snapshot are searchable");
      assert.equal((await index.search({ mode: "keyword", text: `${5}-${2}`, vector: null, topK: 100 })).length > 0, true);
      await third.flushSnapshots();
    } finally {
      await third.close();
    }
    // Back to the corpus the next tests expect: the two late documents' chunks deleted.
    db.prepare("DELETE FROM chunks WHERE document_id IN (?, ?)").run(docIds[3]!, docIds[4]!);
    docIds.splice(3);
    const again: CorpusIndexEvent[] = [];
    const fourth = indexes(again);
    try {
      assert.equal((await fourth.get(corpusId)).size, 60);
      assert.deepEqual({ ...again[0], ms: 0 }, { type: "opened", corpusId, from: "snapshot", chunks: 60, ms: 0, added: 0, removed: 9 });
      await fourth.flushSnapshots();
    } finally {
      await fourth.close();
    }
  });

  it("deletes the snapshot with a document (loaded or not), and writes the index's new state later", async () => {
    const snap = path.join(dir, "index-snapshots", `${corpusId}.snap`);
    const cold = indexes();
    await cold.removeDocument(corpusId, "doc_notloaded000000000000000");
    assert.equal(existsSync(snap), false, "deleted even when the index is not in memory");
    await cold.close();

    const events: CorpusIndexEvent[] = [];
    const live = indexes(events);
    try {
      const index = await live.get(corpusId); // rebuilt, and a snapshot planned
      await live.flushSnapshots();
      assert.equal(existsSync(snap), true);
      db.prepare("DELETE FROM chunks WHERE document_id = ?").run(docIds[3]!);
      await live.removeDocument(corpusId, docIds[3]!);
      assert.equal(existsSync(snap), false, "the snapshot held the document's vectors and terms");
      assert.equal(index.size, 60);
      // Chunks a document commit delivers twice (during an open) are indexed once.
      const [again] = await chunks.byIds([(await chunks.idsOfDocument(docIds[0]!))[0]!]);
      await live.addChunks(corpusId, [{ id: again!.id, documentId: again!.documentId, vector: vectorOf(0, 0), terms: "banjir", language: "ms" }]);
      assert.equal(index.size, 60);
      assert.equal(await index.count(), 60);
      await live.flushSnapshots();
      assert.equal(existsSync(snap), true, "the new state is written");
    } finally {
      await live.close();
    }
    const events2: CorpusIndexEvent[] = [];
    const next = indexes(events2);
    try {
      assert.equal((await next.get(corpusId)).size, 60);
      assert.equal((events2[0] as { from: string }).from, "snapshot");
    } finally {
      await next.close();
    }
  });

  it("throws a tampered snapshot away and rebuilds; drop and the start-up sweep delete snapshots", async () => {
    const snap = path.join(dir, "index-snapshots", `${corpusId}.snap`);
    const bytes = readFileSync(snap);
    bytes[bytes.length - 40]! ^= 0xff;
    writeFileSync(snap, bytes);
    const events: CorpusIndexEvent[] = [];
    const tampered = indexes(events);
    try {
      const index = await tampered.get(corpusId);
      assert.deepEqual(events.map((e) => e.type), ["snapshot.rejected", "opened"]);
      assert.equal(index.size, 60);
      assert.equal((await index.search({ mode: "keyword", text: "durian", vector: null, topK: 100 })).length, 20);
      await tampered.flushSnapshots();
      assert.equal(existsSync(snap), true);
      await tampered.drop(corpusId);
      assert.equal(existsSync(snap), false, "dropping a corpus deletes its snapshot");
    } finally {
      await tampered.close();
    }
    const orphan = newId("corp_");
    writeFileSync(path.join(dir, "index-snapshots", `${orphan}.snap`), "sealed bytes of a deleted corpus");
    const sweeper = indexes();
    assert.equal(await sweeper.sweepSnapshots((id) => id === corpusId), 1);
    assert.equal(existsSync(path.join(dir, "index-snapshots", `${orphan}.snap`)), false);
    await sweeper.close();
  });
});
