/**
 * E-mail through the API (issue 34): an EML with a PDF and a DOCX attached and an MBOX of
 * 50 messages are uploaded; the attachments and the messages become documents of their
 * own, linked to their parent, and are indexed; a fact found only in the PDF is found and
 * its citation names the attachment, whose parent is reachable; deleting a parent removes
 * its children (one tombstone), from the lists and from search.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { buildMbox, composedMessages, REPORT_SUBJECT, reportEmail } from "../fixtures/email/build-email.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

interface Doc {
  id: string;
  filename: string;
  content_type: string;
  status: string;
  error: { code: string } | null;
  metadata: Record<string, unknown>;
  parent_document_id: string | null;
  relation: string | null;
  position: number | null;
  children: { attachments: number; messages: number };
}

interface Hit {
  document_id: string;
  filename: string;
  text: string;
}

describe("e-mail messages and mailboxes", () => {
  let t: TestServer;
  let corpusId: string;
  let eml: Doc;
  let mbox: Doc;

  const children = async (parentId: string): Promise<Doc[]> => {
    const res = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?parent_document_id=${parentId}&limit=100&order=asc`);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.has_more, false);
    return res.json.data as Doc[];
  };
  const search = async (query: string, mode = "hybrid"): Promise<Hit[]> => {
    const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query, search: mode, top_k: 5 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.data as Hit[];
  };

  before(async () => {
    t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") } });
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Peti mel", embedding_model: "minilm" })).json.id as string;
    const res = await upload(
      t,
      corpusId,
      [
        { name: "laporan.eml", content: await reportEmail() },
        { name: "banjir.mbox", content: buildMbox(await composedMessages(50)) },
      ],
      { case: "K-17" },
    );
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.deepEqual(res.json.rejected, []);
    [eml, mbox] = res.json.documents as [Doc, Doc];
    assert.deepEqual([eml.content_type, mbox.content_type], ["message/rfc822", "application/mbox"]);
    assert.equal((await waitForStatus(t, corpusId, 900_000)).status, "ready");
  });
  after(() => t.close());

  it("indexes the message's attachments as documents of their own, linked to it, listed by its id", async () => {
    const attachments = await children(eml.id);
    assert.deepEqual(
      attachments.map((d) => [d.filename, d.content_type, d.status, d.relation, d.parent_document_id]).sort(),
      [
        ["nota.txt", "text/plain", "indexed", "attachment", eml.id],
        ["report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "indexed", "attachment", eml.id],
        ["report.pdf", "application/pdf", "indexed", "attachment", eml.id],
      ],
    );
    assert.ok(attachments.every((d) => d.metadata.case === "K-17"), "the upload's metadata applies to its attachments");
    const parent = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${eml.id}`)).json as Doc;
    assert.deepEqual([parent.status, parent.parent_document_id, parent.relation], ["indexed", null, null]);
    const corpus = (await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json;
    assert.deepEqual(corpus.document_counts, { queued: 0, processing: 0, indexed: 2 + 3 + 50, failed: 0, total: 55 });
  });

  it("finds a fact that only the attached PDF holds; the citation names the attachment, whose parent is the message", async () => {
    const hits = await search("Which region earned the most from selling dried fish to wholesale buyers?");
    const hit = hits[0]!;
    assert.equal(hit.filename, "report.pdf", JSON.stringify(hits.map((h) => h.filename)));
    assert.match(hit.text, /dried fish/);
    const cited = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${hit.document_id}`)).json as Doc;
    assert.deepEqual([cited.relation, cited.parent_document_id], ["attachment", eml.id]);
    const message = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${cited.parent_document_id}`)).json as Doc;
    assert.equal(message.filename, "laporan.eml");
    const header = await search(REPORT_SUBJECT, "keyword");
    assert.equal(header[0]?.document_id, eml.id, "the message itself indexes its subject and headers");
  });

  it("indexes each message of the mailbox as its own document, and the mailbox as an index of them", async () => {
    const messages = await children(mbox.id);
    assert.equal(messages.length, 50);
    assert.ok(messages.every((d) => d.relation === "message" && d.status === "indexed" && d.content_type === "message/rfc822"));
    // In mailbox order (they are staged within the same second, with random ids), paged in it too.
    assert.deepEqual(messages.map((d) => d.filename), Array.from({ length: 50 }, (_, i) => `Laporan harian banjir no. ${i + 1}.eml`));
    assert.deepEqual(messages.map((d) => d.position), Array.from({ length: 50 }, (_, i) => i));
    const paged: Doc[] = [];
    for (let after: string | null = null; ; ) {
      const res = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?parent_document_id=${mbox.id}&limit=7&order=asc${after ? `&after=${after}` : ""}`);
      paged.push(...(res.json.data as Doc[]));
      if (!res.json.has_more) break;
      after = res.json.last_id as string;
    }
    assert.deepEqual(paged.map((d) => d.id), messages.map((d) => d.id));
    const newestFirst = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?parent_document_id=${mbox.id}&limit=3`)).json.data as Doc[];
    assert.deepEqual(newestFirst.map((d) => d.position), [49, 48, 47], "the default order (desc) is the mailbox's last first");
    // The uploads alone, each saying what came out of it.
    const uploads = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?parent_document_id=none&order=asc`)).json.data as Doc[];
    assert.deepEqual(
      uploads.map((d) => [d.filename, d.children, d.position]).sort(),
      [
        ["banjir.mbox", { attachments: 0, messages: 50 }, null],
        ["laporan.eml", { attachments: 3, messages: 0 }, null],
      ],
    );
    assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${messages[0]!.id}`)).json.children, { attachments: 0, messages: 0 });
    const hit = (await search("river gauge at station 137 water level", "keyword")).find((h) => h.text.includes("station 137"));
    assert.ok(hit, "the 38th message is found by its own words");
    assert.equal(hit.filename, "Laporan harian banjir no. 38.eml");
    assert.ok(messages.some((d) => d.id === hit.document_id));
    const index = await search("Pegawai 41 pegawai41@daerah.example.my", "keyword");
    assert.ok(
      index.some((h) => h.document_id === mbox.id && h.text.includes("Laporan harian banjir no. 42")),
      "the mailbox's own index lists the message with its date, sender and subject",
    );
  });

  it("deletes a parent with its children in one tombstone; they leave the lists and search", async () => {
    const pdf = (await children(eml.id)).find((d) => d.filename === "report.pdf")!;
    const deleted = await t.call("DELETE", `/v1/rag/corpora/${corpusId}/documents/${eml.id}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.json));
    assert.equal(deleted.json.tombstone.documents, 4, "the message and its three attachments");
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${pdf.id}`)).status, 404);
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?parent_document_id=${eml.id}`)).status, 404, "the parent is gone");
    assert.ok(!(await search("dried fish wholesale buyers", "keyword")).some((h) => h.filename === "report.pdf"));
    const box = await t.call("DELETE", `/v1/rag/corpora/${corpusId}/documents/${mbox.id}`);
    assert.equal(box.json.tombstone.documents, 51);
    const left = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents`);
    assert.deepEqual(left.json.data, []);
  });
});
