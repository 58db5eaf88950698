import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { DocumentStore, type DocumentRecord } from "./document-store.js";
import { SqlFileBlobs } from "./file-blob-store.js";
import { OpenAiFileStore, type OpenAiFileRecord } from "./openai-file-store.js";
import type { SqlDatabase } from "./sql-database.js";
import { VectorStoreStore, type AttachmentRecord } from "./vector-store-store.js";

const FILE = (n: number) => `file-${String(n).padStart(24, "0")}`;
const KEY = { provider: "test", wrappedKey: Buffer.from("wrapped") };

async function seed(store: SqlDatabase): Promise<void> {
  for (const ws of ["ws_a", "ws_b"]) await store.db.insertInto("workspaces").values({ id: ws, name: ws, created_at: 1 }).execute();
  for (const id of ["corp_a", "corp_b"]) {
    await store.db
      .insertInto("corpora")
      .values({ id, workspace_id: "ws_a", name: id, chunking: "semantic", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
      .execute();
  }
}

const file = (n: number, fields: Partial<OpenAiFileRecord> = {}): OpenAiFileRecord => ({ id: FILE(n), workspaceId: "ws_a", filename: `f${n}.md`, purpose: "assistants", bytes: 10 * n, sha256: "a".repeat(64), createdAt: 100 + n, expiresAt: null, ...fields });

const doc = (id: string, status: DocumentRecord["status"], fields: Partial<DocumentRecord> = {}): DocumentRecord => ({
  id,
  corpusId: "corp_a",
  filename: `${id}.md`,
  contentType: "text/markdown",
  format: "md",
  bytes: 5,
  sha256: id.padEnd(64, "0"),
  status,
  error: status === "failed" ? { code: "corrupt_document", message: "broken" } : null,
  pageCount: null,
  chunkCount: 0,
  metadata: {},
  attempts: 0,
  createdAt: 100,
  updatedAt: 100,
  indexedAt: null,
  ...fields,
});

const attachment = (n: number, fields: Partial<AttachmentRecord> = {}): AttachmentRecord => ({ corpusId: "corp_a", fileId: FILE(n), documentId: null, borrowed: false, batchId: null, state: "attached", error: null, attributes: {}, chunking: { type: "auto" }, createdAt: 200 + n, ...fields });

describeBackends("OpenAiFileStore and VectorStoreStore", (backend) => {
  const open = async () => {
    const store = await backend.open();
    await seed(store);
    return { store, files: new OpenAiFileStore(store), stores: new VectorStoreStore(store), documents: new DocumentStore(store) };
  };

  it("keeps files per workspace, pages them by creation, filters by purpose and hides the expired", async () => {
    const { files } = await open();
    for (let n = 1; n <= 5; n++) await files.insert(file(n, { purpose: n % 2 === 0 ? "user_data" : "assistants" }), KEY);
    await files.insert(file(6, { expiresAt: 150 }), KEY);
    await files.insert(file(7, { workspaceId: "ws_b" }), KEY);
    assert.deepEqual(await files.get("ws_a", FILE(1), 120), file(1));
    assert.equal(await files.get("ws_b", FILE(1), 120), undefined, "another workspace's file does not exist for the caller");
    assert.ok(await files.get("ws_a", FILE(6), 149));
    assert.equal(await files.get("ws_a", FILE(6), 150), undefined, "expired");
    const first = await files.list("ws_a", { limit: 2, order: "desc" }, 160);
    assert.deepEqual(first.data.map((f) => f.id), [FILE(5), FILE(4)]);
    assert.equal(first.hasMore, true);
    const rest = await files.list("ws_a", { limit: 10, order: "desc", after: FILE(4) }, 160);
    assert.deepEqual(rest.data.map((f) => f.id), [FILE(3), FILE(2), FILE(1)]);
    assert.equal(rest.hasMore, false);
    assert.deepEqual((await files.list("ws_a", { limit: 10, order: "asc" }, 160, "user_data")).data.map((f) => f.id), [FILE(2), FILE(4)]);
    assert.deepEqual(await files.expired(160), [FILE(6)]);
    assert.deepEqual(await files.wrappedKey(FILE(1)), KEY.wrappedKey);
    assert.equal(await files.delete(FILE(1)), true);
    assert.equal(await files.delete(FILE(1)), false);
    assert.equal(await files.wrappedKey(FILE(1)), undefined, "the key goes with the record");
  });

  it("stores sealed file bytes in parts and lists them apart from corpora's originals", async () => {
    const { store } = await open();
    const blobs = new SqlFileBlobs(store);
    const bytes = Buffer.alloc(2.5 * 1024 * 1024, 7);
    await blobs.write(FILE(1), Readable.from([bytes]));
    assert.deepEqual(await blobs.read(FILE(1)), bytes);
    assert.deepEqual(await blobs.list(), [FILE(1)]);
    await blobs.delete(FILE(1));
    assert.equal(await blobs.read(FILE(1)), undefined);
    await assert.rejects(blobs.write("../etc/passwd", Readable.from([bytes])), /invalid file id/);
  });

  it("derives each attachment's status from its document, counts and filters by it, and pages", async () => {
    const { files, stores, documents } = await open();
    for (let n = 1; n <= 6; n++) await files.insert(file(n), KEY);
    await documents.insert(doc("doc_q", "queued"));
    await documents.insert(doc("doc_p", "processing"));
    await documents.insert(doc("doc_i", "indexed"));
    await documents.insert(doc("doc_f", "failed"));
    await stores.attach(attachment(1, { documentId: "doc_q" }));
    await stores.attach(attachment(2, { documentId: "doc_p" }));
    await stores.attach(attachment(3, { documentId: "doc_i", attributes: { team: "red", year: 2024, ok: true } }));
    await stores.attach(attachment(4, { documentId: "doc_f" }));
    await stores.attach(attachment(5, { state: "failed", error: { code: "unsupported_file", message: "no" } }));
    await stores.attach(attachment(6, { state: "cancelled" }));
    assert.deepEqual(await stores.counts({ corpusId: "corp_a" }), { in_progress: 2, completed: 1, failed: 2, cancelled: 1, total: 6 });
    const three = await stores.attachment("corp_a", FILE(3));
    assert.equal(three?.status, "completed");
    assert.deepEqual(three?.attributes, { team: "red", year: 2024, ok: true });
    assert.deepEqual((await stores.attachment("corp_a", FILE(4)))?.documentError, { code: "corrupt_document", message: "broken" });
    assert.deepEqual((await stores.attachment("corp_a", FILE(5)))?.error, { code: "unsupported_file", message: "no" });
    const inProgress = await stores.attachments("corp_a", { limit: 1, order: "asc" }, { status: "in_progress" });
    assert.deepEqual(inProgress.data.map((a) => a.fileId), [FILE(1)]);
    assert.equal(inProgress.hasMore, true);
    const next = await stores.attachments("corp_a", { limit: 1, order: "asc", after: FILE(1) }, { status: "in_progress" });
    assert.deepEqual(next.data.map((a) => a.fileId), [FILE(2)]);
    assert.equal(next.hasMore, false);
    assert.deepEqual((await stores.attachments("corp_a", { limit: 10, order: "desc" }, { status: "failed" })).data.map((a) => a.fileId), [FILE(5), FILE(4)]);
    assert.equal((await stores.attachments("corp_b", { limit: 10, order: "desc" })).data.length, 0, "another store's files are not listed");
    assert.deepEqual(await stores.fileIdsOf("corp_a", ["doc_i", "doc_none"]), new Map([["doc_i", FILE(3)]]));
  });

  it("retries a failed attachment but never replaces a standing one; attributes reach the document", async () => {
    const { files, stores, documents } = await open();
    await files.insert(file(1), KEY);
    await documents.insert(doc("doc_1", "queued"));
    assert.equal(await stores.attach(attachment(1, { state: "failed", error: { code: "invalid_file", message: "x" } })), true);
    assert.equal(await stores.attach(attachment(1, { documentId: "doc_1" })), true, "a failed attachment is attached again");
    assert.equal(await stores.attach(attachment(1, { documentId: null, state: "failed" })), false, "a standing attachment stays");
    assert.equal((await stores.attachment("corp_a", FILE(1)))?.documentId, "doc_1");
    await stores.setAttributes("corp_a", FILE(1), { lang: "ms" });
    assert.deepEqual((await stores.attachment("corp_a", FILE(1)))?.attributes, { lang: "ms" });
    assert.deepEqual((await documents.getById("doc_1"))?.metadata, { lang: "ms" });
    assert.equal(await stores.referencesTo("doc_1"), 1);
    assert.deepEqual(await stores.chunkingOf("doc_1"), { type: "auto" });
  });

  it("goes with its document, its file and its corpus", async () => {
    const { store, files, stores, documents } = await open();
    await files.insert(file(1), KEY);
    await files.insert(file(2), KEY);
    await documents.insert(doc("doc_1", "indexed"));
    await stores.attach(attachment(1, { documentId: "doc_1" }));
    await stores.attach(attachment(2, { corpusId: "corp_b" }));
    await stores.putSettings({ corpusId: "corp_b", description: null, expiresAfterDays: 1, lastActiveAt: 10, expiredAt: null });
    await store.db.deleteFrom("documents").where("id", "=", "doc_1").execute();
    assert.equal(await stores.attachment("corp_a", FILE(1)), undefined, "a deleted document takes its attachment");
    await files.delete(FILE(2));
    assert.equal(await stores.attachment("corp_b", FILE(2)), undefined, "a deleted file takes its attachments");
    await store.db.deleteFrom("corpora").where("id", "=", "corp_b").execute();
    assert.equal(await stores.settings("corp_b"), undefined, "a deleted corpus takes its settings");
  });

  it("expires stores by their last activity, once", async () => {
    const { stores } = await open();
    await stores.putSettings({ corpusId: "corp_a", description: "d", expiresAfterDays: 2, lastActiveAt: 1000, expiredAt: null });
    await stores.putSettings({ corpusId: "corp_b", description: null, expiresAfterDays: null, lastActiveAt: 0, expiredAt: null });
    assert.deepEqual(await stores.dueToExpire(1000 + 2 * 86400 - 1), []);
    await stores.touch("corp_a", 2000);
    assert.deepEqual(await stores.dueToExpire(1000 + 2 * 86400), [], "activity moved the anchor");
    assert.deepEqual(await stores.dueToExpire(2000 + 2 * 86400), ["corp_a"]);
    assert.equal(await stores.markExpired("corp_a", 5), true);
    assert.equal(await stores.markExpired("corp_a", 6), false);
    await stores.touch("corp_a", 9999);
    assert.deepEqual(await stores.settings("corp_a"), { corpusId: "corp_a", description: "d", expiresAfterDays: 2, lastActiveAt: 2000, expiredAt: 5 });
    assert.deepEqual(await stores.dueToExpire(10 ** 9), [], "an expired store is not due again");
    assert.deepEqual([...(await stores.settingsOf(["corp_a", "corp_b", "corp_x"])).keys()].sort(), ["corp_a", "corp_b"]);
  });

  it("keeps batches and their files", async () => {
    const { files, stores } = await open();
    await files.insert(file(1), KEY);
    await files.insert(file(2), KEY);
    await stores.insertBatch({ id: "vsfb_1", corpusId: "corp_a", cancelledAt: null, createdAt: 5 });
    await stores.attach(attachment(1, { batchId: "vsfb_1", state: "failed" }));
    await stores.attach(attachment(2, { state: "cancelled" }));
    await stores.moveToBatch("corp_a", FILE(2), "vsfb_1");
    assert.deepEqual((await stores.attachmentsOfBatch("vsfb_1")).map((a) => a.fileId), [FILE(1), FILE(2)]);
    assert.deepEqual(await stores.counts({ batchId: "vsfb_1" }), { in_progress: 0, completed: 0, failed: 1, cancelled: 1, total: 2 });
    assert.equal(await stores.batch("corp_b", "vsfb_1"), undefined, "another store's batch does not exist there");
    await stores.markBatchCancelled("vsfb_1", 9);
    await stores.markBatchCancelled("vsfb_1", 10);
    assert.equal((await stores.batch("corp_a", "vsfb_1"))?.cancelledAt, 9);
  });
});
