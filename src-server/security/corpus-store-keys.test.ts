/**
 * The corpus store on SQLite and Postgres: corpora scoped to their workspace, pages,
 * partial updates, document and chunk counts, and data keys stored beside them, created
 * insert-if-absent so replicas creating one corpus's key at once agree on it.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { CorpusKeyring } from "./corpus-keyring.js";
import { DataCipher, newDataKey } from "./data-cipher.js";
import type { KeyProvider } from "./key-provider.js";
import { CorpusStore, type CorpusRecord } from "../store/corpus-store.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";

/** A KEK in memory, shared by the "replicas" of a test. */
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

const corpus = (id: string, over: Partial<CorpusRecord> = {}): CorpusRecord => ({
  id,
  workspaceId: "ws_a",
  name: id,
  chunking: "semantic",
  embeddingModel: "m",
  dimensions: 384,
  embeddingPrompts: { query: "query: ", document: "passage: " },
  rerankModel: null,
  searchDefaults: null,
  retentionDays: 30,
  metadata: { team: "legal" },
  createdAt: 100,
  updatedAt: 100,
  ...over,
});

const key = (byte: number) => ({ provider: "memory:test", wrappedKey: Buffer.alloc(40, byte) });

async function seed(store: SqlDatabase): Promise<CorpusStore> {
  await store.db
    .insertInto("workspaces")
    .values([
      { id: "ws_a", name: "A", created_at: 1 },
      { id: "ws_b", name: "B", created_at: 1 },
    ])
    .execute();
  return new CorpusStore(store);
}

describeBackends("CorpusStore", (backend) => {
  it("stores a corpus with every field, and shows it only in its own workspace", async () => {
    const corpora = await seed(await backend.open());
    const record = corpus("corp_1", { rerankModel: "rr", searchDefaults: { search: "hybrid", fusion: { method: "rrf", vectorWeight: 0.7, keywordTrust: "auto" } } });
    await corpora.insert(record, key(1));
    assert.deepEqual(await corpora.get("ws_a", "corp_1"), record);
    assert.equal(await corpora.get("ws_b", "corp_1"), undefined, "another workspace's corpus does not exist for the caller");
    assert.deepEqual(await corpora.getAny("corp_1"), record);
    assert.equal(await corpora.getAny("corp_none"), undefined);
    assert.deepEqual(await corpora.wrappedKey("corp_1"), { provider: "memory:test", wrappedKey: key(1).wrappedKey, destroyAfter: null });
    assert.equal(await corpora.wrappedKey("corp_none"), undefined);
    await assert.rejects(corpora.insert(corpus("corp_1"), key(1)), "an id is one corpus");
  });

  it("pages a workspace's corpora by creation time both ways, with cursors", async () => {
    const corpora = await seed(await backend.open());
    for (const [i, id] of ["corp_c", "corp_a", "corp_d", "corp_b"].entries()) await corpora.insert(corpus(id, { createdAt: 100 + i, updatedAt: 100 + i }), key(i + 1));
    await corpora.insert(corpus("corp_x", { workspaceId: "ws_b" }), key(9));
    const ids = (page: { data: CorpusRecord[] }) => page.data.map((c) => c.id);
    const first = await corpora.list("ws_a", { limit: 3, order: "asc" });
    assert.deepEqual(ids(first), ["corp_c", "corp_a", "corp_d"]);
    assert.equal(first.hasMore, true);
    const rest = await corpora.list("ws_a", { limit: 3, order: "asc", after: "corp_d" });
    assert.deepEqual(ids(rest), ["corp_b"]);
    assert.equal(rest.hasMore, false);
    assert.deepEqual(ids(await corpora.list("ws_a", { limit: 10, order: "desc" })), ["corp_b", "corp_d", "corp_a", "corp_c"]);
    assert.deepEqual(ids(await corpora.list("ws_a", { limit: 2, order: "desc", before: "corp_c" })), ["corp_d", "corp_a"]);
    assert.deepEqual(ids(await corpora.list("ws_a", { limit: 10, order: "asc", after: "corp_x" })), [], "a cursor of another workspace gives an empty page");
    assert.deepEqual(await corpora.ids(), ["corp_a", "corp_b", "corp_c", "corp_d", "corp_x"]);
  });

  it("updates only the fields given; null clears the reranker and the search defaults", async () => {
    const corpora = await seed(await backend.open());
    const searchDefaults = { search: "keyword" as const };
    await corpora.insert(corpus("corp_1", { rerankModel: "rr", searchDefaults }), key(1));
    await corpora.update("corp_1", { name: "renamed" }, 200);
    assert.deepEqual(await corpora.getAny("corp_1"), corpus("corp_1", { name: "renamed", rerankModel: "rr", searchDefaults, updatedAt: 200 }));
    await corpora.update("corp_1", { retentionDays: 7, metadata: { a: "b" }, rerankModel: null, searchDefaults: null }, 300);
    assert.deepEqual(await corpora.getAny("corp_1"), corpus("corp_1", { name: "renamed", retentionDays: 7, metadata: { a: "b" }, updatedAt: 300 }));
    await corpora.update("corp_1", { rerankModel: "rr2", searchDefaults }, 400);
    const updated = await corpora.getAny("corp_1");
    assert.equal(updated?.rerankModel, "rr2");
    assert.deepEqual(updated?.searchDefaults, searchDefaults);
    await corpora.touch("corp_1", 500);
    assert.equal((await corpora.getAny("corp_1"))?.updatedAt, 500);
    await corpora.update("corp_none", { name: "x" }, 600);
    assert.equal(await corpora.getAny("corp_none"), undefined, "updating a missing corpus creates nothing");
  });

  it("counts a corpus's documents by status and its chunks", async () => {
    const store = await backend.open();
    const corpora = await seed(store);
    await corpora.insert(corpus("corp_1"), key(1));
    await corpora.insert(corpus("corp_2"), key(2));
    assert.deepEqual(await corpora.counts("corp_1"), { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 });
    assert.equal(await corpora.chunkCount("corp_1"), 0);
    const statuses: [string, string, string][] = [
      ["doc_1", "corp_1", "indexed"],
      ["doc_2", "corp_1", "indexed"],
      ["doc_3", "corp_1", "queued"],
      ["doc_4", "corp_1", "failed"],
      ["doc_5", "corp_2", "processing"],
    ];
    await store.db
      .insertInto("documents")
      .values(statuses.map(([id, corpusId, status]) => ({ id, corpus_id: corpusId, filename: `${id}.txt`, content_type: "text/plain", format: "txt", bytes: 10, sha256: id.padEnd(64, "0"), status, error_code: null, error_message: null, page_count: null, metadata: "{}", created_at: 1, updated_at: 1, indexed_at: null })))
      .execute();
    await store.db
      .insertInto("chunks")
      .values([0, 1, 2].map((idx) => ({ id: `chk_${idx}`, corpus_id: "corp_1", document_id: "doc_1", idx, start_offset: 0, end_offset: 1, page_start: null, page_end: null, token_count: 1, content: Buffer.from("x"), vector: Buffer.alloc(4), terms: null })))
      .execute();
    assert.deepEqual(await corpora.counts("corp_1"), { queued: 1, processing: 0, indexed: 2, failed: 1, total: 4 });
    assert.deepEqual(await corpora.counts("corp_2"), { queued: 0, processing: 1, indexed: 0, failed: 0, total: 1 });
    assert.equal(await corpora.chunkCount("corp_1"), 3);
    assert.equal(await corpora.chunkCount("corp_2"), 0);
  });

  it("stores a key insert-if-absent and reads back the first; the corpus claims it, and refuses a different one", async () => {
    const corpora = await seed(await backend.open());
    const first = await corpora.insertKeyIfAbsent("corp_1", key(1), 100, 5000);
    assert.deepEqual(first, { provider: "memory:test", wrappedKey: key(1).wrappedKey, destroyAfter: 5000 }, "unclaimed: due for destruction");
    assert.deepEqual(await corpora.insertKeyIfAbsent("corp_1", key(2), 101, 6000), first, "the second caller gets the first key");
    await assert.rejects(corpora.insert(corpus("corp_1"), key(2)), /different data key/);
    assert.equal(await corpora.getAny("corp_1"), undefined, "nothing stored");
    assert.equal((await corpora.wrappedKey("corp_1"))?.destroyAfter, 5000);
    await corpora.insert(corpus("corp_1"), key(1));
    assert.deepEqual(await corpora.wrappedKey("corp_1"), { provider: "memory:test", wrappedKey: key(1).wrappedKey, destroyAfter: null }, "claimed by its corpus");
  });

  it("keeps one key when keyrings on several connections create the same corpus's key at once", async () => {
    const first = await backend.open();
    await seed(first);
    // Postgres: three replicas' pools on one database; SQLite (':memory:' is one handle) races on it.
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const provider = new MemoryKeyProvider();
      const rings = [first, ...others].map((db) => new CorpusKeyring(provider, new CorpusStore(db)));
      const ids = ["corp_r1", "corp_r2", "corp_r3", "corp_r4"];
      for (const id of ids) {
        const created = await Promise.all(rings.flatMap((ring) => [ring.create(id), ring.create(id)]));
        assert.ok(
          created.every((k) => k.wrappedKey.equals(created[0]!.wrappedKey)),
          "every replica is given the one key stored",
        );
        const sealed = await Promise.all(rings.map(async (ring, i) => (await ring.cipher(id)).seal(Buffer.from(`from ${i}`), "aad")));
        const reader = new CorpusKeyring(provider, new CorpusStore(first));
        for (const [i, value] of sealed.entries()) assert.equal((await reader.cipher(id)).open(value, "aad").toString(), `from ${i}`, `what replica ${i} sealed opens with the stored key`);
      }
      await new CorpusStore(first).insert(corpus("corp_r1"), await rings[1]!.create("corp_r1"));
      assert.equal((await new CorpusStore(first).wrappedKey("corp_r1"))?.destroyAfter, null);
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
