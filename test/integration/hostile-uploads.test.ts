/**
 * Hostile files through the API: each is accepted as an upload (it is a well-formed file
 * of its type), then fails as a document with a clear error code and message, while the
 * server stays up, keeps its memory, and indexes an ordinary file uploaded beside them.
 * (`bench/hostile-files.ts` measures the memory of each in detail.)
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { buildZipBomb } from "../fixtures/documents/build-zip-bomb.js";
import { hugeHtml, lzwBomb, manyEntriesDocx, pdfWithForms, relsBombDocx, zlibBomb } from "../fixtures/documents/hostile-documents.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const HOSTILE: { name: string; content: Buffer; code: string }[] = [
  { name: "rels-bomb.docx", content: Buffer.from(relsBombDocx(1024, "honest")), code: "document_too_large" },
  { name: "rels-bomb-lying.docx", content: Buffer.from(relsBombDocx(1024, "lying")), code: "document_too_large" },
  { name: "bomb.docx", content: Buffer.from(buildZipBomb({ inflatedBytes: 1.1 * 1024 ** 3, declare: "lying" })), code: "document_too_large" },
  { name: "entries.docx", content: Buffer.from(manyEntriesDocx(12_000)), code: "document_too_large" },
  { name: "lzw-bomb.pdf", content: Buffer.from(pdfWithForms([lzwBomb(1000)], { filter: "/LZWDecode" })), code: "document_too_large" },
  { name: "encrypted-bomb.pdf", content: Buffer.from(pdfWithForms([zlibBomb(1024)], { userPassword: "" })), code: "document_too_large" },
  { name: "huge.html", content: Buffer.from(hugeHtml(9)), code: "document_too_large" },
];

describe("hostile uploads", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") } });
  });
  after(() => t.close());

  it("fails each hostile file as a document with a clear code, and indexes the ordinary one beside them", async (test) => {
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "hostile", embedding_model: "minilm", chunking: "paragraph" })).json;
    const rssBefore = process.memoryUsage().rss;
    const uploaded = await upload(t, corpus.id, [...HOSTILE, { name: "fine.md", content: "# Fine\n\nAn ordinary document about the harbour." }]);
    assert.equal(uploaded.status, 202, JSON.stringify(uploaded.json));
    assert.equal(uploaded.json.rejected.length, 0, "each is a well-formed file of its type");
    const done = await waitForStatus(t, corpus.id, 120_000);
    assert.deepEqual(done.document_counts, { queued: 0, processing: 0, indexed: 1, failed: HOSTILE.length, total: HOSTILE.length + 1 });
    const documents = (await t.call("GET", `/v1/rag/corpora/${corpus.id}/documents?limit=100`)).json.data as { filename: string; status: string; error: { code: string; message: string } | null }[];
    for (const hostile of HOSTILE) {
      const document = documents.find((d) => d.filename === hostile.name);
      assert.equal(document?.status, "failed", hostile.name);
      assert.equal(document.error?.code, hostile.code, `${hostile.name}: ${document.error?.message}`);
      assert.ok((document.error?.message.length ?? 0) > 20, `${hostile.name}: a message a user can act on`);
    }
    assert.equal(documents.find((d) => d.filename === "fine.md")?.status, "indexed");
    // The parse workers ran in this process: nothing near the gigabytes these files hold was
    // inflated (or kept). Each worker's heap is capped (rag.parseMemoryMb, 192 MB); the
    // allocator may still hold a finished worker's pages while the next one runs, so up to
    // two caps plus 150 MB of the server's own is fair (measured 191–415 MB across runs).
    const grown = Math.round((process.memoryUsage().rss - rssBefore) / 1024 ** 2);
    test.diagnostic(`RSS after: +${grown} MB`);
    const bound = 2 * 192 + 150; // rag.parseMemoryMb: the default, which this server keeps
    assert.ok(grown < bound, `RSS grew by ${grown} MB (bound ${bound} MB)`);
    assert.equal((await t.call("GET", "/healthz", undefined, null)).status, 200);
  });
});
