import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CorpusKeyring } from "../../security/corpus-keyring.js";
import { LocalKeyFileProvider } from "../../security/local-key-file-provider.js";
import { ChunkStore, type SealedChunk } from "../../store/chunk-store.js";
import { CorpusStore } from "../../store/corpus-store.js";
import { openDatabase, type Database } from "../../store/database.js";
import { DocumentStore } from "../../store/document-store.js";
import { WorkspaceStore } from "../../store/workspace-store.js";
import { openTerms, sealContent, sealTerms, sealVector } from "../chunk-codec.js";
import type { DataCipher } from "../../security/data-cipher.js";
import { newId } from "../../ids.js";
import { SnapshotFiles } from "../../store/snapshot-files.js";
import type { CorpusIndex } from "./corpus-index.js";
import { CorpusIndexes, type CorpusIndexEvent } from "./corpus-indexes.js";
import { analyzeChunk } from "./keyword-analysis.js";

describe("CorpusIndexes: rebuilding a corpus's index from the encrypted store", () => {
  let dir: string;
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
    db = openDatabase(dir);
    const corpora = new CorpusStore(db);
    const documents = new DocumentStore(db);
    chunks = new ChunkStore(db);
    new WorkspaceStore(db).insert({ id: "ws_default", name: "test", createdAt: 0 });
    keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
    corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "open", chunking: "fixed", embeddingModel: "synthetic", dimensions: 4, embeddingPrompts: { query: "", document: "" }, rerankModel: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
    cipher = await keyring.cipher(corpusId);
    for (const id of ["doc_old", "doc_new"]) documents.insert({ id, corpusId, filename: `${id}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: id.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 0, updatedAt: 0, indexedAt: null });
    // A chunk stored before analyses were kept, one with an analysis of an older version, and
    // one whose stored analysis deliberately differs from its text (to see which is used).
    chunks.commitDocument("doc_old", [chunk("chk_1", "doc_old", 0, "Banjir melanda Kelantan", null)], null, 0);
    const olderVersion = cipher.seal(Buffer.from(JSON.stringify({ v: 0, language: "en", terms: "stale" })), "chunk:chk_2:terms");
    chunks.commitDocument("doc_new", [chunk("chk_2", "doc_new", 0, "Durian harvest in Pahang", olderVersion), chunk("chk_3", "doc_new", 1, "Rubber prices fell", sealTerms(cipher, "chk_3", { terms: "zebra", language: "en" }))], null, 0);
  });
  after(() => {
    db.close();
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
      const [one, two] = chunks.byIds(["chk_1", "chk_2"]).sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(openTerms(cipher, "chk_1", one!.terms!), analyzeChunk("Banjir melanda Kelantan"), "the analysis is stored for next time");
      assert.deepEqual(openTerms(cipher, "chk_2", two!.terms!), analyzeChunk("Durian harvest in Pahang"));
      assert.ok(!one!.terms!.includes(Buffer.from("banjir")), "sealed, never plaintext");
      const hits = await index.search({ mode: "vector", text: "", vector: vector(1), topK: 1 });
      assert.equal(hits[0]?.chunkId, "chk_3", "vectors decrypt to what was sealed");
    } finally {
      await indexes.close();
    }
  });

  it("refuses a stored analysis sealed for another chunk", () => {
    const [three] = chunks.byIds(["chk_3"]);
    assert.throws(() => openTerms(cipher, "chk_1", three!.terms!));
  });
});

describe("CorpusIndexes: opening from a sealed snapshot when it holds exactly the corpus's chunks", () => {
  let dir: string;
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

  function commit(documentId: string, doc: number, n: number): SealedChunk[] {
    documents.insert({ id: documentId, corpusId, filename: `${documentId}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: documentId.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 0, updatedAt: 0, indexedAt: null });
    const sealed = Array.from({ length: n }, (_, i): SealedChunk => {
      const id = newId("chk_");
      const text = `${texts[(doc + i) % texts.length]} ${doc}-${i}`;
      return { id, corpusId, documentId, index: i, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 8, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, vectorOf(doc, i)), terms: sealTerms(cipher, id, analyzeChunk(text)) };
    });
    chunks.commitDocument(documentId, sealed, null, 0);
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
    db = openDatabase(dir);
    const corpora = new CorpusStore(db);
    documents = new DocumentStore(db);
    chunks = new ChunkStore(db);
    files = new SnapshotFiles(path.join(dir, "index-snapshots"));
    new WorkspaceStore(db).insert({ id: "ws_default", name: "test", createdAt: 0 });
    keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
    corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "snap", chunking: "fixed", embeddingModel: "synthetic", dimensions: DIM, embeddingPrompts: { query: "", document: "" }, rerankModel: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
    cipher = await keyring.cipher(corpusId);
    for (let doc = 0; doc < 3; doc++) {
      docIds.push(newId("doc_"));
      commit(docIds[doc]!, doc, 20);
    }
  });
  after(() => {
    db.close();
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
      assert.deepEqual(events, [{ type: "opened", corpusId, from: "snapshot", chunks: 60, ms: (events[0] as { ms: number }).ms }]);
      assert.deepEqual(await results(index), expected, "searches and evidence as from the chunks");
      await second.close();
      assert.deepEqual(events.map((e) => e.type), ["opened"], "an unchanged index is not written again");
    } finally {
      await second.close();
    }
  });

  it("rebuilds when the corpus's chunks changed behind the snapshot, and writes a new one", async () => {
    docIds.push(newId("doc_"));
    const added = commit(docIds[3]!, 3, 4);
    const events: CorpusIndexEvent[] = [];
    const reopened = indexes(events);
    try {
      const index = await reopened.get(corpusId);
      assert.deepEqual(events.map((e) => e.type), ["snapshot.rejected", "opened"]);
      assert.match((events[0] as { reason: string }).reason, /changed/);
      assert.equal((events[1] as { from: string }).from, "chunks");
      assert.equal(index.size, 64);
      const hit = await index.search({ mode: "vector", text: "", vector: vectorOf(3, 2), topK: 1 });
      assert.equal(hit[0]?.chunkId, added[2]!.id);
      await reopened.flushSnapshots();
      assert.equal(events.at(-1)?.type, "snapshot.written");
    } finally {
      await reopened.close();
    }
    const again: CorpusIndexEvent[] = [];
    const third = indexes(again);
    try {
      assert.equal((await third.get(corpusId)).size, 64);
      assert.equal((again[0] as { from: string }).from, "snapshot");
    } finally {
      await third.close();
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
      const [again] = chunks.byIds([chunks.idsOfDocument(docIds[0]!)[0]!]);
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
