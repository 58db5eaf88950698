import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ChunkStore, corpusRowsLock, type SealedChunk } from "./chunk-store.js";
import { DocumentStore } from "./document-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";
import { TombstoneCatalog, type NewTombstone } from "./tombstone-catalog.js";

async function seed(store: SqlDatabase): Promise<void> {
  for (const ws of ["ws_a", "ws_b"]) await store.db.insertInto("workspaces").values({ id: ws, name: ws, created_at: 1 }).execute();
}

/** A corpus with its wrapped key, `documents` documents of `chunksEach` chunks. Returns their ids. */
async function corpusWith(store: SqlDatabase, id: string, documents: number, chunksEach: number, workspaceId = "ws_a"): Promise<{ documentIds: string[]; chunkIds: string[] }> {
  await store.db
    .insertInto("corpora")
    .values({ id, workspace_id: workspaceId, name: id, chunking: "fixed", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
    .execute();
  await store.db.insertInto("corpus_keys").values({ corpus_id: id, provider: "test", wrapped_key: randomBytes(40), created_at: 1, destroy_after: null }).execute();
  const documentIds: string[] = [];
  const chunkIds: string[] = [];
  for (let d = 0; d < documents; d++) {
    const documentId = `${id}_doc${d}`;
    documentIds.push(documentId);
    await addChunks(store, id, documentId, chunksEach, chunkIds);
  }
  return { documentIds, chunkIds };
}

async function addChunks(store: SqlDatabase, corpusId: string, documentId: string, n: number, ids: string[] = []): Promise<string[]> {
  await new DocumentStore(store).insert({ id: documentId, corpusId, filename: "f.txt", contentType: "text/plain", format: "txt", bytes: 1, sha256: documentId.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 1, updatedAt: 1, indexedAt: null });
  const sealed = Array.from({ length: n }, (_, index): SealedChunk => ({ id: `${documentId}_chk${index}`, corpusId, documentId, index, start: 0, end: 1, pageStart: null, pageEnd: null, tokenCount: 1, content: randomBytes(16), vector: randomBytes(16), terms: null }));
  await new ChunkStore(store).commitDocument(documentId, sealed, null, 1);
  ids.push(...sealed.map((c) => c.id));
  return sealed.map((c) => c.id);
}

const tombstone = (id: string, fields: Partial<NewTombstone> = {}): NewTombstone => ({ id, kind: "corpus", workspaceId: "ws_a", corpusId: id, documentId: null, deletedAt: 1_000, expiresAt: 2_000, ...fields });
const counts = { documents: 2, chunks: 6, bytes: 12_345_678_901 };
const count = async (store: SqlDatabase, table: "documents" | "chunks", corpusId: string) =>
  Number((await store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as("n")).where("corpus_id", "=", corpusId).executeTakeFirstOrThrow()).n);
const keyOf = (store: SqlDatabase, corpusId: string) => store.db.selectFrom("corpus_keys").selectAll().where("corpus_id", "=", corpusId).executeTakeFirst();

describeBackends("TombstoneCatalog", (backend) => {
  const open = async () => {
    const store = await backend.open();
    await seed(store);
    return { store, catalog: new TombstoneCatalog(store) };
  };

  it("records deletions as moving, lists them by workspace in pages, and finds them by status and expiry", async () => {
    const { catalog } = await open();
    await catalog.begin(tombstone("corp_1", { deletedAt: 10, expiresAt: 500 }));
    await catalog.begin(tombstone("doc_1", { kind: "document", corpusId: "corp_1", documentId: "doc_1", deletedAt: 20, expiresAt: 300 }));
    await catalog.begin(tombstone("corp_2", { workspaceId: "ws_b", deletedAt: 30, expiresAt: 100 }));
    await catalog.begin(tombstone("corp_2", { workspaceId: "ws_b", deletedAt: 99, expiresAt: 99 }));
    assert.deepEqual(await catalog.get("doc_1"), { id: "doc_1", kind: "document", workspaceId: "ws_a", corpusId: "corp_1", documentId: "doc_1", status: "moving", documents: 0, chunks: 0, bytes: 0, deletedAt: 20, expiresAt: 300 });
    assert.equal((await catalog.get("corp_2"))?.deletedAt, 30, "beginning a recorded deletion again changes nothing");
    assert.equal(await catalog.get("corp_none"), undefined);

    const all = await catalog.list(null, { limit: 2, order: "desc" });
    assert.deepEqual([all.data.map((t) => t.id), all.hasMore], [["corp_2", "doc_1"], true]);
    const rest = await catalog.list(null, { limit: 2, order: "desc", after: "doc_1" });
    assert.deepEqual([rest.data.map((t) => t.id), rest.hasMore], [["corp_1"], false]);
    assert.deepEqual(
      (await catalog.list("ws_a", { limit: 10, order: "asc" })).data.map((t) => t.id),
      ["corp_1", "doc_1"],
    );

    await catalog.markRetained("corp_2", counts);
    await catalog.markRetained("doc_1", { documents: 1, chunks: 2, bytes: 3 });
    assert.deepEqual(await catalog.get("corp_2"), { ...(await catalog.get("corp_2"))!, status: "retained", ...counts });
    assert.deepEqual(
      (await catalog.withStatus("moving")).map((t) => t.id),
      ["corp_1"],
    );
    assert.deepEqual(
      (await catalog.withStatus("retained")).map((t) => t.id),
      ["doc_1", "corp_2"],
      "oldest deletion first",
    );
    assert.deepEqual(
      (await catalog.expired(299)).map((t) => t.id),
      ["corp_2"],
    );
    assert.deepEqual(
      (await catalog.expired(300)).map((t) => t.id),
      ["corp_2", "doc_1"],
      "ordered by expiry; a moving one never expires",
    );
  });

  it("deletes a corpus's rows and keeps its key until the tombstone expires, only when every row was copied", async () => {
    const { store, catalog } = await open();
    const rows = await corpusWith(store, "corp_1", 2, 3);
    await corpusWith(store, "corp_2", 1, 2);
    await catalog.begin(tombstone("corp_1"));
    const copied = { documentIds: new Set(rows.documentIds), chunkIds: new Set(rows.chunkIds) };
    assert.equal(await catalog.commitCorpusDeletion("corp_1", { ...copied, chunkIds: new Set(rows.chunkIds.slice(1)) }, counts, 2_000), false, "a chunk was not copied");
    assert.equal(await catalog.commitCorpusDeletion("corp_1", { ...copied, documentIds: new Set(rows.documentIds.slice(1)) }, counts, 2_000), false, "a document was not copied");
    assert.equal(await count(store, "chunks", "corp_1"), 6, "nothing changed");
    assert.equal((await catalog.get("corp_1"))?.status, "moving");

    assert.equal(await catalog.commitCorpusDeletion("corp_1", copied, counts, 2_000), true);
    assert.equal(await count(store, "documents", "corp_1"), 0);
    assert.equal(await count(store, "chunks", "corp_1"), 0);
    assert.equal(await store.db.selectFrom("corpora").select("id").where("id", "=", "corp_1").executeTakeFirst(), undefined);
    assert.equal((await keyOf(store, "corp_1"))?.destroy_after, 2_000);
    assert.deepEqual(await catalog.get("corp_1"), { ...tombstone("corp_1"), status: "retained", ...counts, deletedAt: 1_000, expiresAt: 2_000, workspaceId: "ws_a", documentId: null, corpusId: "corp_1", kind: "corpus", id: "corp_1" });
    assert.equal(await count(store, "chunks", "corp_2"), 2, "another corpus keeps its rows");
    assert.equal((await keyOf(store, "corp_2"))?.destroy_after, null);
  });

  it("deletes one document and its chunks, only when every chunk was copied", async () => {
    const { store, catalog } = await open();
    const rows = await corpusWith(store, "corp_1", 2, 3);
    const [gone, kept] = rows.documentIds as [string, string];
    const goneChunks = rows.chunkIds.filter((id) => id.startsWith(gone));
    await catalog.begin(tombstone(gone, { kind: "document", corpusId: "corp_1", documentId: gone }));
    assert.equal(await catalog.commitDocumentDeletion(gone, "corp_1", { documentIds: new Set([gone]), chunkIds: new Set(goneChunks.slice(0, 2)) }, counts), false);
    assert.equal(await catalog.commitDocumentDeletion(gone, "corp_1", { documentIds: new Set([gone]), chunkIds: new Set(goneChunks) }, { documents: 1, chunks: 3, bytes: 48 }), true);
    assert.deepEqual(
      (await store.db.selectFrom("chunks").select("document_id").where("corpus_id", "=", "corp_1").execute()).map((r) => r.document_id),
      [kept, kept, kept],
    );
    assert.equal(await store.db.selectFrom("documents").select("id").where("id", "=", gone).executeTakeFirst(), undefined);
    assert.deepEqual([(await catalog.get(gone))?.status, (await catalog.get(gone))?.chunks], ["retained", 3]);
    assert.equal((await keyOf(store, "corp_1"))?.destroy_after, null, "the corpus keeps its key");
  });

  it("sees chunks committed while it waited for the corpus's rows: a deletion never drops what it did not copy", async () => {
    const { store, catalog } = await open();
    const rows = await corpusWith(store, "corp_1", 1, 2);
    await catalog.begin(tombstone("corp_1"));
    // An indexer's commit holds the corpus's lock (on SQLite: the write transaction) while it adds a document's chunks.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const indexer = store.transaction(async (tx) => {
      await store.lock(tx, [corpusRowsLock("corp_1")]);
      locked();
      await held;
      await tx
        .insertInto("documents")
        .values({ id: "doc_late", corpus_id: "corp_1", filename: "late.txt", content_type: "text/plain", format: "txt", bytes: 1, sha256: "l".repeat(64), status: "indexed", error_code: null, error_message: null, page_count: null, metadata: "{}", created_at: 2, updated_at: 2, indexed_at: 2 })
        .execute();
      await tx.insertInto("chunks").values({ id: "chk_late", corpus_id: "corp_1", document_id: "doc_late", idx: 0, start_offset: 0, end_offset: 1, page_start: null, page_end: null, token_count: 1, content: randomBytes(8), vector: randomBytes(8), terms: null }).execute();
    });
    await lockTaken;
    let settled = false;
    const deletion = catalog.commitCorpusDeletion("corp_1", { documentIds: new Set(rows.documentIds), chunkIds: new Set(rows.chunkIds) }, counts, 2_000).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(settled, false, "the deletion waits for the commit in progress");
    release();
    await indexer;
    assert.equal(await deletion, false, "the late chunk was not copied: nothing is deleted");
    assert.equal(await count(store, "chunks", "corp_1"), 3);
  });

  it("moves expired tombstones to purging once, and destroys the keys no corpus or retained tombstone needs", async () => {
    const { store, catalog } = await open();
    await corpusWith(store, "corp_gone", 0, 0);
    await corpusWith(store, "corp_doc", 0, 0);
    await corpusWith(store, "corp_live", 0, 0);
    await corpusWith(store, "corp_old", 0, 0);
    await store.db.deleteFrom("corpora").where("id", "in", ["corp_gone", "corp_doc", "corp_old"]).execute();
    await store.db.updateTable("corpus_keys").set({ destroy_after: 100 }).where("corpus_id", "in", ["corp_gone", "corp_doc", "corp_live"]).execute();
    await store.db.updateTable("corpus_keys").set({ destroy_after: 900 }).where("corpus_id", "=", "corp_old").execute();
    await catalog.begin(tombstone("corp_gone"));
    await catalog.markRetained("corp_gone", counts);
    await catalog.begin(tombstone("doc_1", { kind: "document", corpusId: "corp_doc", documentId: "doc_1" }));
    await catalog.markRetained("doc_1", counts);
    await catalog.begin(tombstone("doc_2", { kind: "document", corpusId: "corp_doc", documentId: "doc_2" }));
    await catalog.markRetained("doc_2", counts);
    await catalog.begin(tombstone("corp_moving"));

    const first = await catalog.startPurge(["corp_gone", "doc_1", "corp_moving", "corp_none"], 500);
    assert.deepEqual(first, { purging: ["corp_gone", "doc_1"], keysDestroyed: ["corp_gone"] }, "doc_2 still needs corp_doc's key; corp_live exists; corp_old is not due");
    assert.equal((await catalog.get("corp_moving"))?.status, "moving", "only retained tombstones are purged");
    assert.deepEqual(await catalog.startPurge(["corp_gone", "doc_1"], 500), { purging: [], keysDestroyed: [] }, "a second purge gets none of them");
    assert.deepEqual(await catalog.startPurge(["doc_2"], 1_000), { purging: ["doc_2"], keysDestroyed: ["corp_doc", "corp_old"] });
    assert.ok(await keyOf(store, "corp_live"));

    assert.equal(await catalog.remove("doc_1"), true);
    assert.equal(await catalog.remove("doc_1"), false);
    assert.equal(await catalog.get("doc_1"), undefined);
    const reclaimed = await catalog.reclaimSpace();
    assert.equal(typeof reclaimed.freedPages, "number");
  });

  it("gives each expired tombstone and key to exactly one of several replicas purging at once", async () => {
    const { store, catalog } = await open();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = `corp_${String(i).padStart(2, "0")}`;
      ids.push(id);
      await corpusWith(store, id, 0, 0);
      await catalog.begin(tombstone(id));
      await catalog.markRetained(id, counts);
    }
    await store.db.deleteFrom("corpora").execute();
    await store.db.updateTable("corpus_keys").set({ destroy_after: 100 }).execute();
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [store, store];
    try {
      const catalogs = [catalog, ...others.map((s) => new TombstoneCatalog(s))];
      const runs = await Promise.all(Array.from({ length: 9 }, (_, i) => catalogs[i % 3]!.startPurge([...ids].reverse(), 500)));
      const purged = runs.flatMap((r) => r.purging);
      const keys = runs.flatMap((r) => r.keysDestroyed);
      assert.deepEqual(purged.sort(), ids, "every tombstone to one replica");
      assert.deepEqual(keys.sort(), ids, "every key destroyed and reported once");
      assert.deepEqual(
        (await catalog.withStatus("purging")).map((t) => t.id),
        ids,
      );
    } finally {
      if (backend.dialect === "postgres") for (const s of others) await s.close();
    }
  });
});
