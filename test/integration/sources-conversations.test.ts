/**
 * What the workbench reads besides answers: cited passages in their context, the original
 * document for pdf.js, page ranges of passages that span pages, and conversations kept
 * per workspace, sealed at rest, exportable as Markdown.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { buildPdf } from "../fixtures/documents/build-pdf.js";
import { reportPdfPages } from "../fixtures/documents/fixture-documents.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe("sources and conversations", () => {
  let t: TestServer;
  let corpusId: string;
  let otherKey: string;
  const pdf = Buffer.from(buildPdf(reportPdfPages()));

  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2") },
      // Large fixed windows: one passage runs across the report's pages.
      config: { chat: { contextSize: 2048, sequences: 1 }, rag: { chunkTargetTokens: 150, chunkMaxTokens: 150, chunkOverlapTokens: 0 } },
    });
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Report", embedding_model: "minilm", chunking: "fixed" })).json.id;
    const res = await upload(t, corpusId, [{ name: "annual-report.pdf", content: pdf }, { name: "notes.md", content: "# Notes\n\nThe warehouse opens in March.\n\nTwenty members will be trained." }]);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.equal((await waitForStatus(t, corpusId)).status, "ready");
    const ws = (await t.call("POST", "/v1/admin/workspaces", { name: "Elsewhere" })).json;
    otherKey = (await t.call("POST", `/v1/admin/workspaces/${ws.id}/api_keys`, { name: "k" })).json.secret;
  });
  after(() => t.close());

  it("gives a passage that spans pages its whole page range", async () => {
    const found = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "regional revenue northern region dried fish", top_k: 10, search: "keyword" });
    assert.equal(found.status, 200, JSON.stringify(found.json));
    const fromPdf = found.json.data.filter((c: any) => c.filename === "annual-report.pdf");
    assert.ok(fromPdf.length > 0);
    for (const c of fromPdf) {
      assert.ok(c.page_start >= 1 && c.page_end >= c.page_start && c.page_end <= 3, JSON.stringify(c));
      assert.equal(c.page, c.page_start);
    }
    assert.ok(fromPdf.some((c: any) => c.page_end > c.page_start), "a 150-token window over three short pages must cross a page break");
    const md = found.json.data.find((c: any) => c.filename === "notes.md");
    if (md) assert.deepEqual([md.page_start, md.page_end], [null, null]);
  });

  it("shows a cited passage with the text around it, and the original file for the viewer", async () => {
    const found = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "Outlook priorities cold-storage units", top_k: 1, search: "keyword" });
    const hit = found.json.data[0];
    const passage = await t.call("GET", `/v1/rag/corpora/${corpusId}/chunks/${hit.chunk_id}`);
    assert.equal(passage.status, 200);
    assert.equal(passage.json.object, "rag.chunk");
    assert.equal(passage.json.text, hit.text);
    assert.equal(passage.json.document_id, hit.document_id);
    assert.equal(passage.json.content_type, "application/pdf");
    assert.ok(passage.json.before === null || typeof passage.json.before === "string");
    const docs = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents`)).json.data;
    const pdfDoc = docs.find((d: any) => d.filename === "annual-report.pdf");
    assert.ok(pdfDoc.chunk_count >= 2, "the PDF has more than one chunk, so a passage has a neighbour");
    assert.ok(passage.json.before !== null || passage.json.after !== null);

    const original = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/documents/${pdfDoc.id}/content`, { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(original.status, 200);
    assert.equal(original.headers.get("content-type"), "application/pdf");
    assert.match(original.headers.get("content-disposition") ?? "", /^attachment;.*annual-report\.pdf/);
    assert.match(original.headers.get("content-security-policy") ?? "", /sandbox/);
    const bytes = Buffer.from(await original.arrayBuffer());
    assert.equal(createHash("sha256").update(bytes).digest("hex"), createHash("sha256").update(pdf).digest("hex"));

    // Other workspaces, unknown ids: 404, never the data.
    for (const route of [`/v1/rag/corpora/${corpusId}/chunks/${hit.chunk_id}`, `/v1/rag/corpora/${corpusId}/documents/${pdfDoc.id}/content`]) {
      const res = await t.call("GET", route, undefined, otherKey);
      assert.equal(res.status, 404, route);
    }
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/chunks/chk_doesnotexist000000000000`)).json.error.code, "chunk_not_found");
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/doc_doesnotexist000000000000/content`)).json.error.code, "document_not_found");
  });

  it("keeps conversations per workspace: create, append with citations, title from the first question, rename, export, delete", async () => {
    const created = await t.call("POST", "/v1/conversations", { corpus_id: corpusId });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const id = created.json.id;
    assert.match(id, /^conv_/);
    assert.equal(created.json.title, "New conversation");
    const citation = (await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "warehouse Port Klang", top_k: 1, search: "keyword" })).json.data[0];
    // A citation as answers carried it before `heading_path` and `support` (kept conversations hold such).
    const { heading_path: _h, support: _s, ...wireCitation } = citation;
    const question = "When does the Port Klang warehouse open, and who approved it? Zebrafish-marker-7731";
    const appended = await t.call("POST", `/v1/conversations/${id}/messages`, {
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: "The board approved it [1].", citations: [{ ...wireCitation, cited: true }], grounded: true, model: "chat" },
      ],
    });
    assert.equal(appended.status, 201, JSON.stringify(appended.json));
    assert.deepEqual(appended.json.data.map((m: any) => m.role), ["user", "assistant"]);
    const got = (await t.call("GET", `/v1/conversations/${id}`)).json;
    assert.equal(got.title, "When does the Port Klang warehouse open, and who approved…");
    assert.equal(got.message_count, 2);
    assert.equal(got.messages[1].citations[0].chunk_id, citation.chunk_id);
    assert.deepEqual([got.messages[1].citations[0].heading_path, got.messages[1].citations[0].support], [[], null], "older citations read back with the defaults");
    const current = { ...citation, cited: true, support: { page: citation.page_start, start: 0, end: 5 } };
    const withSupport = await t.call("POST", `/v1/conversations/${id}/messages`, { messages: [{ role: "assistant", content: "Again [1].", citations: [current], grounded: true }] });
    assert.equal(withSupport.status, 201, JSON.stringify(withSupport.json));
    assert.deepEqual(withSupport.json.data[0].citations[0], current, "a citation as answers carry it now is kept whole");
    assert.equal(got.messages[1].grounded, true);

    const listed = (await t.call("GET", "/v1/conversations")).json;
    assert.equal(listed.data[0].id, id);
    assert.equal((await t.call("GET", "/v1/conversations", undefined, otherKey)).json.data.length, 0, "another workspace sees none");
    assert.equal((await t.call("GET", `/v1/conversations/${id}`, undefined, otherKey)).status, 404);

    const renamed = await t.call("PATCH", `/v1/conversations/${id}`, { title: "Warehouse" });
    assert.equal(renamed.json.title, "Warehouse");
    const exported = await fetch(`${t.url}/v1/conversations/${id}/export?format=markdown`, { headers: { authorization: `Bearer ${t.key}` } });
    assert.match(exported.headers.get("content-type") ?? "", /^text\/markdown/);
    const markdown = await exported.text();
    assert.match(markdown, /^# Warehouse\n/);
    assert.ok(markdown.includes(question));
    assert.ok(markdown.includes("The board approved it [1]."));
    assert.match(markdown, /- \[1\] (annual-report\.pdf, pages? \d|notes\.md: )/);
    assert.match(markdown, /corpus: Report/);

    // Sealed at rest: the question is nowhere in the data directory.
    const marker = Buffer.from("Zebrafish-marker-7731");
    for (const file of filesUnder(t.dataDir)) assert.ok(!readFileSync(file).includes(marker), `plaintext in ${file}`);

    const deleted = await t.call("DELETE", `/v1/conversations/${id}`);
    assert.deepEqual(deleted.json, { id, object: "conversation.deleted", deleted: true });
    assert.equal((await t.call("GET", `/v1/conversations/${id}`)).status, 404);
  });

  it("refuses malformed conversation input in the error shape", async () => {
    const id = (await t.call("POST", "/v1/conversations", {})).json.id;
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/v1/conversations", { corpus_id: "corp_doesnotexist000000000000" }, 404, "corpus_not_found"],
      ["POST", "/v1/conversations", { title: "" }, 400, "invalid_parameter"],
      ["POST", `/v1/conversations/${id}/messages`, { messages: [] }, 400, "invalid_parameter"],
      ["POST", `/v1/conversations/${id}/messages`, { messages: [{ role: "system", content: "x" }] }, 400, "invalid_parameter"],
      ["POST", `/v1/conversations/${id}/messages`, { messages: Array.from({ length: 51 }, () => ({ role: "user", content: "x" })) }, 400, "invalid_parameter"],
      ["POST", `/v1/conversations/${id}/messages`, { messages: [{ role: "user", content: "x", extra: 1 }] }, 400, "unknown_parameter"],
      ["PATCH", `/v1/conversations/${id}`, { title: "x".repeat(201) }, 400, "invalid_parameter"],
      ["GET", `/v1/conversations/${id}/export?format=pdf`, undefined, 400, "invalid_parameter"],
      ["DELETE", "/v1/conversations/conv_nope", undefined, 404, "conversation_not_found"],
    ];
    for (const [method, route, body, status, code] of cases) {
      const res = await t.call(method, route, body);
      assert.equal(res.status, status, `${method} ${route}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, code, `${method} ${route}`);
    }
  });
});
