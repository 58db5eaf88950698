/**
 * Documents that came out of other documents (migration 19): the link and its relation as
 * stored, the list filtered by parent, the walk down a document's descendants, and a
 * document deletion that takes its descendants and refuses while one is missing from the copy.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ChunkStore, type SealedChunk } from "./chunk-store.js";
import { DocumentStore, type DocumentRecord } from "./document-store.js";
import type { SqlDatabase } from "./sql-database.js";
import { TombstoneCatalog } from "./tombstone-catalog.js";

async function seed(store: SqlDatabase): Promise<void> {
  await store.db.insertInto("workspaces").values({ id: "ws_a", name: "a", created_at: 1 }).execute();
  await store.db
    .insertInto("corpora")
    .values({ id: "corp_a", workspace_id: "ws_a", name: "a", chunking: "fixed", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
    .execute();
}

const doc = (id: string, fields: Partial<DocumentRecord> = {}): DocumentRecord => ({
  id,
  corpusId: "corp_a",
  filename: `${id}.eml`,
  contentType: "message/rfc822",
  format: "eml",
  bytes: 10,
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

const chunk = (documentId: string, index: number): SealedChunk => ({ id: `${documentId}_chk${index}`, corpusId: "corp_a", documentId, index, start: 0, end: 1, pageStart: null, pageEnd: null, tokenCount: 1, content: randomBytes(16), vector: randomBytes(16), terms: null });

describeBackends("DocumentStore: linked documents", (backend) => {
  const open = async () => {
    const store = await backend.open();
    await seed(store);
    return { store, documents: new DocumentStore(store) };
  };

  /** mailbox ← message ← attachment, and a second message; plus an unrelated upload. */
  async function family(documents: DocumentStore): Promise<void> {
    await documents.insert(doc("doc_box", { format: "mbox", filename: "box.mbox" }));
    await documents.insert(doc("doc_m1", { parentDocumentId: "doc_box", relation: "message", createdAt: 101 }));
    await documents.insert(doc("doc_m2", { parentDocumentId: "doc_box", relation: "message", createdAt: 102 }));
    await documents.insert(doc("doc_att", { parentDocumentId: "doc_m1", relation: "attachment", format: "pdf", filename: "report.pdf", createdAt: 103 }));
    await documents.insert(doc("doc_other", { createdAt: 104 }));
  }

  it("stores the parent and the relation, and reads a document uploaded on its own without them", async () => {
    const { documents } = await open();
    await family(documents);
    const attachment = await documents.get("corp_a", "doc_att");
    assert.equal(attachment?.parentDocumentId, "doc_m1");
    assert.equal(attachment?.relation, "attachment");
    assert.deepEqual(await documents.get("corp_a", "doc_other"), doc("doc_other", { createdAt: 104 }), "no link fields on an upload");
    assert.equal((await documents.get("corp_a", "doc_m2"))?.relation, "message");
  });

  it("lists a document's children (with paging and status), and walks its descendants parents first", async () => {
    const { documents } = await open();
    await family(documents);
    const children = await documents.list("corp_a", { limit: 1, order: "asc" }, undefined, "doc_box");
    assert.deepEqual([children.data.map((d) => d.id), children.hasMore], [["doc_m1"], true]);
    assert.deepEqual((await documents.list("corp_a", { limit: 10, order: "asc", after: "doc_m1" }, undefined, "doc_box")).data.map((d) => d.id), ["doc_m2"]);
    assert.deepEqual((await documents.list("corp_a", { limit: 10, order: "asc" }, "failed", "doc_box")).data, []);
    assert.deepEqual((await documents.list("corp_a", { limit: 10, order: "asc" }, undefined, "doc_other")).data, []);
    assert.deepEqual(
      (await documents.descendantsOf("doc_box")).map((d) => d.id),
      ["doc_m1", "doc_m2", "doc_att"],
    );
    assert.deepEqual(await documents.descendantsOf("doc_other"), []);
    assert.equal(await documents.depthOf((await documents.get("corp_a", "doc_att"))!, 10), 2);
    assert.equal(await documents.depthOf((await documents.get("corp_a", "doc_att"))!, 1), 1, "counting stops at the limit");
    assert.equal(await documents.depthOf((await documents.get("corp_a", "doc_box"))!, 10), 0);
  });

  it("refuses a child of a document that does not exist, and a relation it does not know", async () => {
    const { documents } = await open();
    await assert.rejects(documents.insert(doc("doc_orphan", { parentDocumentId: "doc_gone", relation: "attachment" })));
    await documents.insert(doc("doc_parent"));
    await assert.rejects(documents.insert(doc("doc_odd", { parentDocumentId: "doc_parent", relation: "sibling" as "message" })));
    assert.equal(await documents.getById("doc_orphan"), undefined);
  });

  it("deletes a document with its descendants and their chunks in one commit, refusing while a child was not copied", async () => {
    const { store, documents } = await open();
    await family(documents);
    const chunks = new ChunkStore(store);
    for (const id of ["doc_box", "doc_m1", "doc_att"]) await chunks.commitDocument(id, [chunk(id, 0), chunk(id, 1)], null, 1);
    const catalog = new TombstoneCatalog(store);
    await catalog.begin({ id: "doc_box", kind: "document", workspaceId: "ws_a", corpusId: "corp_a", documentId: "doc_box", deletedAt: 1, expiresAt: 2 });
    const allChunks = new Set(["doc_box", "doc_m1", "doc_att"].flatMap((id) => [`${id}_chk0`, `${id}_chk1`]));
    // A copy made before doc_m2 was staged: refused, nothing deleted.
    const stale = { documentIds: new Set(["doc_box", "doc_m1", "doc_att"]), chunkIds: allChunks };
    assert.equal(await catalog.commitDocumentDeletion("doc_box", "corp_a", stale, { documents: 3, chunks: 6, bytes: 1 }), false);
    assert.equal((await documents.descendantsOf("doc_box")).length, 3);
    // A copy missing a grandchild's chunk: refused too.
    const missingChunk = { documentIds: new Set(["doc_box", "doc_m1", "doc_m2", "doc_att"]), chunkIds: new Set([...allChunks].filter((c) => c !== "doc_att_chk1")) };
    assert.equal(await catalog.commitDocumentDeletion("doc_box", "corp_a", missingChunk, { documents: 4, chunks: 5, bytes: 1 }), false);
    const whole = { documentIds: new Set(["doc_box", "doc_m1", "doc_m2", "doc_att"]), chunkIds: allChunks };
    assert.equal(await catalog.commitDocumentDeletion("doc_box", "corp_a", whole, { documents: 4, chunks: 6, bytes: 1 }), true);
    assert.deepEqual(
      (await documents.ofCorpus("corp_a")).map((d) => d.id),
      ["doc_other"],
    );
    assert.equal(Number((await store.db.selectFrom("chunks").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n), 0);
    assert.equal((await catalog.get("doc_box"))?.status, "retained");
    assert.equal((await catalog.get("doc_box"))?.documents, 4);
  });
});
