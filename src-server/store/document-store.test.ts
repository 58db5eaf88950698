import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { DocumentStore, type DocumentRecord } from "./document-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";

/** A workspace and corpora to hang documents on (the foreign keys hold on both backends). */
async function seed(store: SqlDatabase, corpora: string[] = ["corp_a", "corp_b"]): Promise<void> {
  await store.db.insertInto("workspaces").values({ id: "ws_a", name: "a", created_at: 1 }).execute();
  for (const id of corpora) {
    await store.db
      .insertInto("corpora")
      .values({ id, workspace_id: "ws_a", name: id, chunking: "fixed", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
      .execute();
  }
}

const doc = (id: string, fields: Partial<DocumentRecord> = {}): DocumentRecord => ({
  id,
  corpusId: "corp_a",
  filename: `${id}.txt`,
  contentType: "text/plain",
  format: "txt",
  bytes: 123,
  sha256: id.padEnd(64, "0"),
  status: "queued",
  error: null,
  pageCount: null,
  chunkCount: 0,
  metadata: {},
  attempts: 0,
  createdAt: 100,
  updatedAt: 100,
  indexedAt: null,
  ...fields,
});

describeBackends("DocumentStore", (backend) => {
  const open = async () => {
    const store = await backend.open();
    await seed(store);
    return { store, documents: new DocumentStore(store) };
  };

  it("stores a document and reads it back by id, by corpus and by content hash", async () => {
    const { documents } = await open();
    const record = doc("doc_1", { status: "failed", error: { code: "parse_error", message: "bad PDF" }, pageCount: 12, chunkCount: 3, metadata: { team: "red", n: 2, nested: { a: [1, "x"] } }, attempts: 2, bytes: 5_000_000_000, createdAt: 1_700_000_000, updatedAt: 1_700_000_001, indexedAt: 1_700_000_002 });
    assert.equal(await documents.insert(record), true);
    assert.deepEqual(await documents.get("corp_a", "doc_1"), record);
    assert.deepEqual(await documents.getById("doc_1"), record);
    assert.deepEqual(await documents.findBySha256("corp_a", record.sha256), record);
    assert.equal(await documents.get("corp_b", "doc_1"), undefined, "another corpus's document does not exist there");
    assert.equal(await documents.findBySha256("corp_b", record.sha256), undefined);
    assert.equal(await documents.getById("doc_none"), undefined);
  });

  it("refuses a second document with the same content in a corpus (false, nothing stored), not in another corpus", async () => {
    const { documents } = await open();
    assert.equal(await documents.insert(doc("doc_1", { sha256: "f".repeat(64) })), true);
    assert.equal(await documents.insert(doc("doc_2", { sha256: "f".repeat(64) })), false);
    assert.equal(await documents.getById("doc_2"), undefined);
    assert.equal(await documents.insert(doc("doc_3", { sha256: "f".repeat(64), corpusId: "corp_b" })), true);
  });

  it("lists a corpus's documents in pages, optionally by status; ofCorpus returns them oldest first", async () => {
    const { documents } = await open();
    for (let i = 0; i < 5; i++) await documents.insert(doc(`doc_${i}`, { createdAt: 100 + (i % 3), status: i % 2 === 0 ? "indexed" : "failed" }));
    await documents.insert(doc("doc_other", { corpusId: "corp_b" }));
    const byTime = ["doc_0", "doc_3", "doc_1", "doc_4", "doc_2"];
    assert.deepEqual(
      (await documents.ofCorpus("corp_a")).map((d) => d.id),
      byTime,
    );
    const first = await documents.list("corp_a", { limit: 2, order: "asc" });
    assert.deepEqual([first.data.map((d) => d.id), first.hasMore], [["doc_0", "doc_3"], true]);
    const second = await documents.list("corp_a", { limit: 2, order: "asc", after: "doc_3" });
    assert.deepEqual(
      second.data.map((d) => d.id),
      ["doc_1", "doc_4"],
    );
    const desc = await documents.list("corp_a", { limit: 10, order: "desc" });
    assert.deepEqual(
      desc.data.map((d) => d.id),
      [...byTime].reverse(),
    );
    assert.equal(desc.hasMore, false);
    const failed = await documents.list("corp_a", { limit: 10, order: "asc" }, "failed");
    assert.deepEqual(
      failed.data.map((d) => d.id),
      ["doc_3", "doc_1"],
    );
  });

  it("counts documents by status across corpora", async () => {
    const { documents } = await open();
    await documents.insert(doc("doc_1", { status: "indexed" }));
    await documents.insert(doc("doc_2", { status: "indexed", corpusId: "corp_b" }));
    await documents.insert(doc("doc_3", { status: "failed" }));
    assert.deepEqual(await documents.countsByStatus(), { queued: 0, processing: 0, indexed: 2, failed: 1 });
  });

  it("finds indexed documents whose metadata equals every filter value, as JSON equality on top-level keys", async () => {
    const { documents } = await open();
    const add = (id: string, metadata: Record<string, unknown>, status: DocumentRecord["status"] = "indexed") => documents.insert(doc(id, { metadata, status }));
    await add("doc_red", { team: "red", year: 2024, final: true });
    await add("doc_Red", { team: "Red", year: 2024.0, final: 1 });
    await add("doc_blue", { team: "blue", year: "2024", final: false });
    await add("doc_nested", { inner: { team: "red" }, year: 2023 });
    await add("doc_pct", { team: "50%_off", year: 2024 });
    await add("doc_queued", { team: "red" }, "queued");
    await add("doc_obj", { tags: { a: 1 } });
    assert.deepEqual(await documents.idsMatching("corp_a", { team: "red" }), ["doc_red"], "strings compare exactly (case too), only indexed documents, only top-level keys");
    assert.deepEqual(await documents.idsMatching("corp_a", { team: "Red" }), ["doc_Red"]);
    assert.deepEqual(await documents.idsMatching("corp_a", { year: 2024 }), ["doc_Red", "doc_pct", "doc_red"], "numbers by value; the string '2024' is not 2024");
    assert.deepEqual(await documents.idsMatching("corp_a", { year: "2024" }), ["doc_blue"]);
    assert.deepEqual(await documents.idsMatching("corp_a", { final: true }), ["doc_Red", "doc_red"], "true equals 1");
    assert.deepEqual(await documents.idsMatching("corp_a", { final: 0 }), ["doc_blue"], "0 equals false");
    assert.deepEqual(await documents.idsMatching("corp_a", { team: "red", year: 2024 }), ["doc_red"], "every key must match");
    assert.deepEqual(await documents.idsMatching("corp_a", { team: "50%_off" }), ["doc_pct"], "LIKE wildcards in a value are literal");
    assert.deepEqual(await documents.idsMatching("corp_a", { team: "50__off" }), []);
    assert.deepEqual(await documents.idsMatching("corp_a", { tags: '{"a":1}' }), ["doc_obj"], "an object compares as its JSON text");
    assert.deepEqual(await documents.idsMatching("corp_a", { missing: "x" }), []);
    assert.deepEqual(await documents.idsMatching("corp_b", { team: "red" }), []);
  });

  it("claims the oldest queued document, counting the attempt; nothing when the queue is empty", async () => {
    const { documents } = await open();
    await documents.insert(doc("doc_late", { createdAt: 200 }));
    await documents.insert(doc("doc_early", { createdAt: 150, attempts: 1 }));
    await documents.insert(doc("doc_done", { createdAt: 10, status: "indexed" }));
    const claimed = await documents.claimNext(500);
    assert.deepEqual([claimed?.id, claimed?.status, claimed?.attempts, claimed?.updatedAt], ["doc_early", "processing", 2, 500]);
    assert.deepEqual(await documents.getById("doc_early"), claimed);
    assert.equal((await documents.claimNext(501))?.id, "doc_late");
    assert.equal(await documents.claimNext(502), undefined);

    assert.equal(await documents.requeueInterrupted(600), 2, "both left processing go back to the queue");
    assert.deepEqual([(await documents.getById("doc_late"))?.status, (await documents.getById("doc_late"))?.updatedAt], ["queued", 600]);
    await documents.markFailed("doc_late", { code: "parse_error", message: "no text" }, 700);
    assert.deepEqual(await documents.getById("doc_late"), { ...doc("doc_late", { createdAt: 200 }), status: "failed", error: { code: "parse_error", message: "no text" }, attempts: 1, updatedAt: 700 });
    assert.equal((await documents.claimNext(750))?.attempts, 3, "doc_early, claimed a third time");
    assert.equal(await documents.requeueInterrupted(800), 1, "a failed document stays failed");
  });

  it("gives each queued document to exactly one of several indexers claiming at once", async () => {
    const { store, documents } = await open();
    for (let i = 0; i < 30; i++) await documents.insert(doc(`doc_${String(i).padStart(2, "0")}`, { createdAt: i }));
    // Three replicas' pools on Postgres; on SQLite (':memory:' cannot be shared) one handle.
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [store, store];
    try {
      const stores = [documents, ...others.map((s) => new DocumentStore(s))];
      const claimAll = async (s: DocumentStore) => {
        const mine: string[] = [];
        for (let d = await s.claimNext(1); d; d = await s.claimNext(1)) mine.push(d.id);
        return mine;
      };
      const claims = (await Promise.all(stores.flatMap((s) => [claimAll(s), claimAll(s)]))).flat();
      assert.equal(claims.length, 30, "no document claimed twice");
      assert.equal(new Set(claims).size, 30);
      assert.deepEqual(await documents.countsByStatus(), { queued: 0, processing: 30, indexed: 0, failed: 0 });
      for (const id of claims) assert.equal((await documents.getById(id))?.attempts, 1);
    } finally {
      if (backend.dialect === "postgres") for (const s of others) await s.close();
    }
  });
});
