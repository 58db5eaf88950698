/**
 * What the pipelined indexer relies on in the store, on SQLite and Postgres: several queued
 * documents claimed at once (each by one claimer), and a group of documents committed in one
 * transaction with each document's status its own.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ChunkStore, type SealedChunk } from "./chunk-store.js";
import { CorpusFeed } from "./corpus-feed.js";
import { DocumentStore } from "./document-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";

async function seed(store: SqlDatabase, documents: number, status: "queued" | "processing" = "queued"): Promise<void> {
  await store.db.insertInto("workspaces").values({ id: "ws_a", name: "a", created_at: 1 }).execute();
  for (const id of ["corp_a", "corp_b"]) {
    await store.db
      .insertInto("corpora")
      .values({ id, workspace_id: "ws_a", name: id, chunking: "fixed", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
      .execute();
  }
  for (let i = 0; i < documents; i++) {
    await new DocumentStore(store).insert({ id: `doc_${String(i).padStart(3, "0")}`, corpusId: i % 2 === 0 ? "corp_a" : "corp_b", filename: `${i}.txt`, contentType: "text/plain", format: "txt", bytes: 1, sha256: String(i).padStart(64, "f"), status, error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 0, createdAt: 100 + i, updatedAt: 1, indexedAt: null });
  }
}

const docId = (i: number) => `doc_${String(i).padStart(3, "0")}`;
const chunk = (i: number, index: number, id = `chk_${i}_${index}`): SealedChunk => ({ id, corpusId: i % 2 === 0 ? "corp_a" : "corp_b", documentId: docId(i), index, start: index, end: index + 1, pageStart: null, pageEnd: null, tokenCount: 1, content: randomBytes(8), vector: randomBytes(16), terms: randomBytes(4) });
const commitOf = (i: number, chunks: number) => ({ documentId: docId(i), corpusId: i % 2 === 0 ? "corp_a" : "corp_b", chunks: Array.from({ length: chunks }, (_, n) => chunk(i, n)), pageCount: null });

describeBackends("the pipelined indexer's store work", (backend) => {
  it("claims the oldest queued documents at once, each for one claimer", async () => {
    const first = await backend.open();
    await seed(first, 30);
    const documents = new DocumentStore(first);
    const claimed = await documents.claimQueued(4, 50);
    assert.deepEqual(claimed.map((d) => d.id), [0, 1, 2, 3].map(docId), "oldest first");
    assert.ok(claimed.every((d) => d.status === "processing" && d.attempts === 1 && d.updatedAt === 50));
    assert.deepEqual((await documents.claimMany([docId(3), docId(9), docId(5)], "r1", 51)).map((d) => d.id), [docId(9), docId(5)], "in the order asked, without those taken");
    assert.equal((await documents.getById(docId(9)))!.status, "processing");
    // Within a budget of bytes of originals: a larger one is taken alone, never beside others.
    await first.db.updateTable("documents").set({ bytes: 50 }).where("id", "=", docId(6)).execute();
    assert.deepEqual((await documents.claimQueued(10, 52, 10)).map((d) => d.id), [docId(4)]);
    assert.deepEqual((await documents.claimQueued(10, 52, 10)).map((d) => d.id), [docId(6)]);
    assert.deepEqual((await documents.claimQueued(10, 52, 3)).map((d) => d.id), [7, 8, 10].map(docId));
    // Claimers at once (three connections on Postgres): every document once.
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new DocumentStore(db));
      const rounds = await Promise.all(stores.map(async (store) => {
        const mine: string[] = [];
        for (let got = await store.claimQueued(3, 60); got.length > 0; got = await store.claimQueued(3, 60)) mine.push(...got.map((d) => d.id));
        return mine;
      }));
      const all = rounds.flat();
      assert.equal(all.length, 19, `each queued document claimed once (${all.length} claims)`);
      assert.equal(new Set(all).size, 19);
      assert.deepEqual(await documents.claimQueued(5, 61), []);
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });

  it("commits a group in one transaction, each document on its own terms", async () => {
    const store = await backend.open();
    await seed(store, 6, "processing");
    const documents = new DocumentStore(store);
    const feed = new CorpusFeed(store, "r1");
    const chunks = new ChunkStore(store, feed);
    // Documents of two corpora; one deleted meanwhile (it gets no chunk, no orphan); one committed before (replaced).
    await chunks.commitDocument(docId(2), [chunk(2, 0, "chk_old")], null, 5);
    await store.db.deleteFrom("documents").where("id", "=", docId(3)).execute();
    const committed = await chunks.commitDocuments([commitOf(0, 3), commitOf(1, 2), commitOf(2, 2), commitOf(3, 4)], 10);
    assert.deepEqual(committed, [docId(0), docId(1), docId(2)]);
    for (const [i, n] of [[0, 3], [1, 2], [2, 2]] as const) {
      const d = (await documents.getById(docId(i)))!;
      assert.deepEqual([d.status, d.chunkCount, d.indexedAt], ["indexed", n, 10]);
      assert.deepEqual((await chunks.ofDocument(docId(i))).map((c) => c.index), [...Array(n).keys()], `${docId(i)}: its chunks once`);
    }
    assert.deepEqual(await chunks.idsOfDocument(docId(3)), [], "the deleted document has no chunk");
    assert.deepEqual((await feed.since(0)).map((c) => c.documentId), [docId(2), docId(0), docId(1), docId(2)]);

    // With a claimant: only the documents it holds.
    assert.deepEqual(await documents.claimMany([], "r1", 11), []);
    await store.db.updateTable("documents").set({ status: "processing", claimed_by: "r1" }).where("id", "in", [docId(4)]).execute();
    await store.db.updateTable("documents").set({ status: "processing", claimed_by: "r2" }).where("id", "in", [docId(5)]).execute();
    assert.deepEqual(await chunks.commitDocuments([commitOf(4, 1), commitOf(5, 1)], 12, "r1"), [docId(4)]);
    assert.equal((await documents.getById(docId(5)))!.status, "processing", "r2's document is left to r2");
    assert.deepEqual(await chunks.idsOfDocument(docId(5)), []);
  });

  it("writes nothing of a group whose transaction fails", async () => {
    const store = await backend.open();
    await seed(store, 3, "processing");
    const chunks = new ChunkStore(store);
    const documents = new DocumentStore(store);
    // Two documents' chunks with the same id: the insert fails, and the whole group with it.
    const clash = [commitOf(0, 2), { ...commitOf(1, 1), chunks: [chunk(1, 0, "chk_0_1")] }];
    await assert.rejects(chunks.commitDocuments(clash, 20));
    for (const i of [0, 1]) {
      assert.equal((await documents.getById(docId(i)))!.status, "processing", `${docId(i)} is not marked indexed`);
      assert.deepEqual(await chunks.idsOfDocument(docId(i)), []);
    }
    // Each on its own then commits (what the indexer does after a failed group).
    assert.equal(await chunks.commitDocument(docId(0), commitOf(0, 2).chunks, null, 21), true);
    assert.equal(await chunks.commitDocument(docId(1), [chunk(1, 0)], null, 21), true);
    assert.equal(await chunks.commitDocument("doc_missing", [{ ...chunk(1, 0, "chk_x"), documentId: "doc_missing" }], null, 21), false, "a document that is gone commits nothing");
    assert.deepEqual(await chunks.byIds(["chk_x"]), []);
  });
});
