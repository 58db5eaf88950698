/**
 * Staging the files that come out of a document (an e-mail's attachments) as documents of
 * their own, on real stores in a temp folder (SQLite, sealed blob files, a real keyring):
 * what is stored, announced and audited; unreadable, empty and duplicate files; the limits
 * on nesting and count; a parent deleted meanwhile; and its deletion taking them along.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { reportEmail } from "../../test/fixtures/email/build-email.js";
import type { AuditEvent } from "../audit/audit-service.js";
import type { Clock } from "../domain/clock.js";
import { newId } from "../ids.js";
import { CorpusKeyring } from "../security/corpus-keyring.js";
import { DataCipher, newDataKey } from "../security/data-cipher.js";
import { EncryptedBlobStore } from "../security/encrypted-blob-store.js";
import type { KeyProvider } from "../security/key-provider.js";
import { BlobStore } from "../store/blob-store.js";
import { ChunkStore } from "../store/chunk-store.js";
import { CorpusStore, type CorpusRecord } from "../store/corpus-store.js";
import { DocumentStore, type DocumentRecord } from "../store/document-store.js";
import { openSqlDatabase } from "../store/sql-database.js";
import { SqliteColdStore } from "../store/sqlite-cold-store.js";
import { TombstoneCatalog } from "../store/tombstone-catalog.js";
import { CorpusEvents, type CorpusEvent } from "./corpus-events.js";
import { EmbeddedDocuments } from "./embedded-documents.js";
import { parseEml } from "./ingest/parse-eml.js";
import type { EmbeddedFile } from "./ingest/types.js";
import { TombstoneService } from "./tombstone-service.js";

const parent = mkdtempSync(path.join(os.tmpdir(), "pustaka-embedded-"));
after(() => rmSync(parent, { recursive: true, force: true }));

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

const clock: Clock = { now: () => Date.now() };

async function setup(name: string, options: { maxDepth?: number; maxFiles?: number } = {}) {
  const dir = path.join(parent, name);
  const store = await openSqlDatabase({ kind: "sqlite", dataDir: dir });
  store.sqlite!.prepare("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_a', 'a', 1)").run();
  const corpora = new CorpusStore(store);
  const documents = new DocumentStore(store);
  const plainBlobs = new BlobStore(path.join(dir, "blobs"));
  const keyring = new CorpusKeyring(new MemoryKeyProvider(), corpora);
  const blobs = new EncryptedBlobStore(plainBlobs, keyring);
  const events = new CorpusEvents();
  const audited: AuditEvent[] = [];
  const woken: string[][] = [];
  const cold = new SqliteColdStore(path.join(dir, "cold"));
  const tombstones = new TombstoneService({ catalog: new TombstoneCatalog(store), cold, corpora, documents, chunks: new ChunkStore(store), blobs: plainBlobs, keyring, clock });
  after(async () => {
    await cold.close();
    await store.close();
  });
  const corpus: CorpusRecord = { id: newId("corp_"), workspaceId: "ws_a", name: "Mail", chunking: "fixed", embeddingModel: "m", dimensions: 4, embeddingPrompts: { query: "", document: "" }, rerankModel: null, searchDefaults: null, retentionDays: 30, metadata: {}, createdAt: 1, updatedAt: 1 };
  await corpora.insert(corpus, await keyring.create(corpus.id));
  const seen: CorpusEvent[] = [];
  events.subscribe(corpus.id, (e) => seen.push(e));
  const service = new EmbeddedDocuments({ documents, corpora, blobs, events, audit: { record: (e) => audited.push(e) }, onQueued: (ids) => woken.push(ids), maxFileBytes: 50 * 1024 * 1024, ...options });
  /** Stores a document as an upload (or a child of `parentId`) would be stored. */
  const addDocument = async (fields: Partial<DocumentRecord> = {}): Promise<DocumentRecord> => {
    const bytes = randomBytes(64);
    const record: DocumentRecord = { id: newId("doc_"), corpusId: corpus.id, filename: "mail.eml", contentType: "message/rfc822", format: "eml", bytes: bytes.length, sha256: randomBytes(32).toString("hex"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: { case: "K-17" }, attempts: 1, createdAt: 1, updatedAt: 1, indexedAt: null, ...fields };
    await blobs.write(corpus.id, record.id, Readable.from([bytes]));
    assert.equal(await documents.insert(record), true);
    return record;
  };
  return { store, corpus, documents, blobs, plainBlobs, service, audited, woken, seen, tombstones, addDocument };
}

describe("EmbeddedDocuments.stage", () => {
  it("stores each attachment sealed as a queued document linked to its message, announces, audits and wakes the indexer", async () => {
    const t = await setup("stage");
    const message = await t.addDocument();
    const parsed = await parseEml(await reportEmail());
    await t.service.stage(message, parsed.embedded!);
    // Documents staged within the same second list in id order: put them back in the message's order.
    const order = parsed.embedded!.map((e) => e.filename);
    const children = (await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, message.id)).data.sort((a, b) => order.indexOf(a.filename) - order.indexOf(b.filename));
    assert.deepEqual(
      children.map((d) => [d.filename, d.format, d.contentType, d.status, d.relation, d.parentDocumentId]),
      [
        ["report.pdf", "pdf", "application/pdf", "queued", "attachment", message.id],
        ["report.docx", "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "queued", "attachment", message.id],
        ["nota.txt", "txt", "text/plain", "queued", "attachment", message.id],
      ],
    );
    assert.deepEqual(children[0]!.metadata, { case: "K-17" }, "the upload's metadata applies to what came out of it");
    for (const [i, child] of children.entries()) {
      assert.ok((await t.blobs.read(t.corpus.id, child.id)).equals(Buffer.from(parsed.embedded![i]!.bytes)), `${child.filename} is stored as it came`);
      assert.ok(!(await t.plainBlobs.read(t.corpus.id, child.id)).includes(Buffer.from(parsed.embedded![i]!.bytes).subarray(0, 32)), "stored sealed, not in clear");
    }
    assert.deepEqual(t.woken, [children.map((d) => d.id)], "staged in the message's order");
    assert.deepEqual(
      t.seen.map((e) => (e.type === "document.status" ? [e.documentId, e.status] : e.type)),
      children.map((d) => [d.id, "queued"]),
    );
    assert.deepEqual(
      t.audited.map((e) => [e.type, e.actor, e.outcome, e.workspaceId, e.data.parent_document_id, e.data.document_id, e.data.relation, e.data.accepted]),
      children.map((d) => ["document.upload", "system", "success", "ws_a", message.id, d.id, "attachment", true]),
    );
  });

  it("keeps an unreadable file as a failed document with the reason, refuses empty and duplicate ones, and stages nothing twice", async () => {
    const t = await setup("unreadable");
    const uploadBytes = Buffer.from("Content the corpus already holds.");
    await t.addDocument({ filename: "already.txt", format: "txt", sha256: createHash("sha256").update(uploadBytes).digest("hex") });
    const message = await t.addDocument();
    const files: EmbeddedFile[] = [
      { filename: "program.exe", bytes: Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00]), relation: "attachment" },
      { filename: "kosong.txt", bytes: new Uint8Array(0), relation: "attachment" },
      { filename: "copy.txt", bytes: uploadBytes, relation: "attachment" },
      { filename: "nota.txt", bytes: Buffer.from("Nota baharu."), relation: "attachment" },
    ];
    await t.service.stage(message, files);
    const children = (await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, message.id)).data.sort((a, b) => b.filename.localeCompare(a.filename));
    assert.deepEqual(
      children.map((d) => [d.filename, d.status, d.error?.code ?? null, d.contentType]),
      [
        ["program.exe", "failed", "unsupported_file_type", "application/octet-stream"],
        ["nota.txt", "queued", null, "text/plain"],
      ],
    );
    assert.match(children[0]!.error!.message, /^unsupported file type: upload PDF, /);
    assert.ok((await t.blobs.read(t.corpus.id, children[0]!.id)).equals(Buffer.from(files[0]!.bytes)), "the unreadable original is kept");
    assert.deepEqual(
      t.audited.map((e) => [e.data.accepted, e.outcome, e.data.reason ?? null]),
      [
        [true, "failure", "unsupported_file_type"],
        [false, "failure", "empty_file"],
        [false, "failure", "duplicate_document"],
        [true, "success", null],
      ],
    );
    assert.deepEqual(t.woken, [[children[1]!.id]], "only the readable one is handed to the indexer");
    // Indexed again (after a crash): the same files are recognised, nothing is stored or audited twice.
    await t.service.stage(message, files);
    assert.equal((await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, message.id)).data.length, 2);
    assert.equal(t.audited.filter((e) => e.data.accepted === true).length, 2);
  });

  it("fails files nested deeper than the limit, and stages at most the limit's count of files", async () => {
    const t = await setup("limits", { maxDepth: 2, maxFiles: 3 });
    const root = await t.addDocument();
    const child = await t.addDocument({ parentDocumentId: root.id, relation: "attachment" });
    const grandchild = await t.addDocument({ parentDocumentId: child.id, relation: "attachment" });
    await t.service.stage(child, [{ filename: "ok.txt", bytes: Buffer.from("second level"), relation: "attachment" }]);
    await t.service.stage(grandchild, [{ filename: "deep.txt", bytes: Buffer.from("third level"), relation: "attachment" }]);
    assert.deepEqual(
      (await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, child.id)).data.filter((d) => d.filename === "ok.txt").map((d) => d.status),
      ["queued"],
    );
    const deep = (await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, grandchild.id)).data;
    assert.deepEqual(
      deep.map((d) => [d.status, d.error?.code]),
      [["failed", "document_too_complex"]],
    );
    const many = Array.from({ length: 5 }, (_, i): EmbeddedFile => ({ filename: `m${i}.txt`, bytes: Buffer.from(`message ${i}`), relation: "message" }));
    await t.service.stage(root, many);
    const staged = (await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, root.id)).data.filter((d) => d.relation === "message");
    assert.deepEqual(
      staged.map((d) => d.filename).sort(),
      ["m0.txt", "m1.txt", "m2.txt"],
    );
    assert.ok(t.audited.some((e) => e.data.reason === "too_many_files" && e.data.parent_document_id === root.id));
  });

  it("stops quietly when the parent is deleted meanwhile, leaving no original behind", async () => {
    const t = await setup("gone");
    const message = await t.addDocument();
    await t.store.db.deleteFrom("documents").where("id", "=", message.id).execute();
    await t.service.stage(message, [{ filename: "late.txt", bytes: Buffer.from("too late"), relation: "attachment" }]);
    assert.deepEqual(await t.documents.ofCorpus(t.corpus.id), []);
    assert.deepEqual(
      (await t.blobs.list()).filter((b) => b.documentId !== message.id),
      [],
    );
    assert.deepEqual(t.audited, []);
  });

  it("goes with its parent into one tombstone when the parent is deleted", async () => {
    const t = await setup("bury");
    const mailbox = await t.addDocument({ format: "mbox", filename: "box.mbox" });
    await t.service.stage(mailbox, [
      { filename: "a.eml", bytes: Buffer.from("From: a@example.my\nSubject: A\n\nA."), relation: "message" },
      { filename: "b.eml", bytes: Buffer.from("From: b@example.my\nSubject: B\n\nB."), relation: "message" },
    ]);
    const [first] = (await t.documents.list(t.corpus.id, { limit: 10, order: "asc" }, undefined, mailbox.id)).data;
    await t.service.stage(first!, [{ filename: "lampiran.txt", bytes: Buffer.from("attached to A"), relation: "attachment" }]);
    assert.equal((await t.documents.descendantsOf(mailbox.id)).length, 3);
    const other = await t.addDocument();
    const tombstone = await t.tombstones.buryDocument(t.corpus.id, mailbox.id);
    assert.equal(tombstone.status, "retained");
    assert.equal(tombstone.documents, 4, "the mailbox, its two messages and the attachment");
    assert.deepEqual(
      (await t.documents.ofCorpus(t.corpus.id)).map((d) => d.id),
      [other.id],
    );
    assert.deepEqual(
      (await t.blobs.list()).map((b) => b.documentId),
      [other.id],
      "the originals left primary storage (kept sealed in the cold store)",
    );
  });
});
