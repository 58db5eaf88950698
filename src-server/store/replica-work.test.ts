/**
 * What replicas sharing a store rely on for indexing: claims (one replica per document),
 * commits only by the claimant, abandoned work handed back, and the corpus change feed.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ChunkStore, type SealedChunk } from "./chunk-store.js";
import { CorpusFeed } from "./corpus-feed.js";
import { DocumentStore } from "./document-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";

async function seed(store: SqlDatabase, documents: number): Promise<void> {
  await store.db.insertInto("workspaces").values({ id: "ws_a", name: "a", created_at: 1 }).execute();
  await store.db
    .insertInto("corpora")
    .values({ id: "corp_a", workspace_id: "ws_a", name: "a", chunking: "fixed", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
    .execute();
  for (let i = 0; i < documents; i++) {
    await new DocumentStore(store).insert({ id: `doc_${i}`, corpusId: "corp_a", filename: `${i}.txt`, contentType: "text/plain", format: "txt", bytes: 1, sha256: String(i).padStart(64, "f"), status: "queued", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 0, createdAt: 1, updatedAt: 1, indexedAt: null });
  }
}

const chunk = (documentId: string, index: number): SealedChunk => ({ id: `chk_${documentId}_${index}`, corpusId: "corp_a", documentId, index, start: 0, end: 1, pageStart: null, pageEnd: null, tokenCount: 1, content: randomBytes(8), vector: randomBytes(16), terms: null });

describeBackends("replicas' indexing work in the store", (backend) => {
  it("gives each document to one replica of several claiming it at once", async () => {
    const first = await backend.open();
    await seed(first, 20);
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new DocumentStore(db));
      const claims = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 3]!.claim(`doc_${i % 20}`, `r${i % 3}`, 10)));
      const won = claims.filter((c) => c !== undefined);
      assert.equal(won.length, 20, `each document claimed exactly once (${won.length} claims)`);
      assert.deepEqual(new Set(won.map((d) => d.id)).size, 20);
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });

  it("commits only while the claimant holds the document, and hands back the work of replicas gone", async () => {
    const store = await backend.open();
    await seed(store, 3);
    const documents = new DocumentStore(store);
    const feed = new CorpusFeed(store, "r1");
    const chunks = new ChunkStore(store, feed);
    await documents.claim("doc_0", "r1", 10);
    await documents.claim("doc_1", "r2", 10);
    // r2 dies: its document goes back to the queue (r1's stays with r1).
    assert.deepEqual(await documents.requeueAbandoned(["r1"], 20), ["doc_1"]);
    assert.equal((await documents.getById("doc_1"))!.status, "queued");
    assert.equal((await documents.getById("doc_0"))!.status, "processing");
    // r3 takes it; r2, which was only slow, cannot commit it any more.
    await documents.claim("doc_1", "r3", 21);
    assert.equal(await chunks.commitDocument("doc_1", [chunk("doc_1", 0)], null, 30, "r2"), false);
    assert.equal((await chunks.ofDocument("doc_1")).length, 0, "nothing of r2's was written");
    assert.equal(await chunks.commitDocument("doc_1", [chunk("doc_1", 0), chunk("doc_1", 1)], null, 31, "r3"), true);
    assert.equal((await documents.getById("doc_1"))!.status, "indexed");
    assert.equal(await documents.markFailed("doc_0", { code: "x", message: "y" }, 32, "r9"), false, "only the claimant marks it failed");
    assert.equal(await documents.markFailed("doc_0", { code: "x", message: "y" }, 32, "r1"), true);
    // doc_2 was queued long ago and never handed out.
    assert.deepEqual(await documents.queuedBefore(100), ["doc_2"]);
    assert.deepEqual(await documents.queuedBefore(1), []);
    // The feed says what was committed, by whom, in order.
    const changes = await feed.since(0);
    assert.deepEqual(
      changes.map((c) => [c.change, c.documentId, c.origin]),
      [["indexed", "doc_1", "r1"]],
    );
    assert.equal(await feed.head(), changes[0]!.seq);
    assert.equal(await feed.prune(Date.now() + 1000), 1);
    assert.equal(await feed.head(), 0);
  });
});
