/**
 * Citations a reader can check, end to end with real models: a PDF passage that runs from
 * page 1 onto page 2 supports an answer with a fact on page 2, so the citation points at
 * page 2 and at the sentence holding the fact; `/query` answers (plain and streamed, which
 * agree) carry `heading_path`, `support` and the answer's `sentences`, consistent with `cited`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Principal } from "../../src-server/domain/scopes.js";
import { citationObject } from "../../src-server/http/wire/rag-wire.js";
import { supportAnswer } from "../../src-server/rag/answer/answer-support.js";
import { buildPdf, type PdfText } from "../fixtures/documents/build-pdf.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

/** Lines of 11 pt text from `top` down, 14 pt apart. */
const lines = (texts: string[], top: number): PdfText[] => texts.map((text, i) => ({ x: 72, y: top - i * 14, size: 11, text }));

/** Two short pages: one passage of fixed chunking covers both; the warehouse's capacity is on page 2. */
const PAGE_TWO_FACT = "The cold-storage warehouse in Kuala Terengganu holds 4,750 tonnes of fish.";
const pdf = Buffer.from(
  buildPdf([
    {
      texts: [
        { x: 72, y: 720, size: 16, text: "Harbour Cooperative Review", bold: true },
        ...lines(["The cooperative grew steadily this year. Membership rose to 2,310 fishers,", "and the board met eleven times to plan new facilities for the members."], 690),
        { x: 300, y: 40, size: 9, text: "1" },
      ],
    },
    {
      texts: [
        { x: 72, y: 720, size: 14, text: "Facilities", bold: true },
        ...lines([PAGE_TWO_FACT, "It opened in June and serves boats from three districts."], 695),
        { x: 300, y: 40, size: 9, text: "2" },
      ],
    },
  ]),
);

const ADMIN: Principal = { workspaceId: "ws_default", keyId: "key_test", keyName: "test", scopes: new Set(["rag.read", "inference"]) };

/** Shapes and invariants of an answer's citations and sentences (either the JSON answer or the stream's final event). */
function assertAttribution(answer: string, body: any): void {
  const indexes = new Set<number>(body.citations.map((c: any) => c.index));
  for (const c of body.citations) {
    assert.deepEqual(Object.keys(c).sort(), ["chunk_id", "cited", "document_id", "filename", "heading_path", "index", "metadata", "page", "page_end", "page_start", "score", "support", "text"]);
    assert.ok(Array.isArray(c.heading_path) && c.heading_path.every((h: unknown) => typeof h === "string"));
    if (c.support !== null) {
      assert.deepEqual(Object.keys(c.support).sort(), ["end", "page", "start"]);
      assert.ok(Number.isInteger(c.support.start) && c.support.start >= 0 && c.support.start < c.support.end && c.support.end <= c.text.length, JSON.stringify(c.support));
      assert.equal(c.cited, true, "a source that supports the answer is cited");
      if (c.page_start === null) assert.equal(c.support.page, null);
      else assert.ok(c.support.page >= c.page_start && c.support.page <= c.page_end);
    }
    assert.equal(c.page, c.support?.page ?? c.page_start, "page is the supporting passage's page, else the first");
  }
  let previousEnd = 0;
  const supportedBy = new Set<number>();
  for (const s of body.sentences) {
    assert.deepEqual(Object.keys(s).sort(), ["citations", "end", "start", "supported"]);
    assert.ok(s.start >= previousEnd && s.start < s.end && s.end <= answer.length, `sentence [${s.start}, ${s.end}) in an answer of ${answer.length}`);
    assert.match(answer.slice(s.start, s.end), /[\p{L}\p{N}]/u);
    previousEnd = s.end;
    assert.deepEqual(s.citations, [...s.citations].sort((a: number, b: number) => a - b));
    for (const n of s.citations) assert.ok(indexes.has(n), `sentence cites [${n}], which is no citation`);
    if (s.supported) for (const n of s.citations) supportedBy.add(n);
  }
  const marked = new Set([...answer.matchAll(/\[(\d{1,3})\]/g)].map((m) => Number(m[1])));
  for (const c of body.citations) {
    assert.equal(c.cited, supportedBy.has(c.index) || marked.has(c.index), `cited of [${c.index}] agrees with the sentences and markers`);
    if (c.support !== null) assert.ok(supportedBy.has(c.index));
  }
}

describe("citations a reader can check", () => {
  let t: TestServer;
  let corpusId: string;
  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2") },
      config: { chat: { contextSize: 2048, sequences: 1 }, rag: { chunkTargetTokens: 150, chunkMaxTokens: 150, chunkOverlapTokens: 0, minSimilarity: 0.1 } },
    });
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Cooperative", embedding_model: "minilm", chunking: "fixed" })).json.id;
    const notes = "# Notes\n\n## Training\n\nTwenty new members will be trained in boat engine repair next year.\n\nThe training budget is RM85,000.";
    const res = await upload(t, corpusId, [{ name: "review.pdf", content: pdf }, { name: "notes.md", content: notes }]);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.equal((await waitForStatus(t, corpusId)).status, "ready");
  });
  after(() => t.close());

  it("cites page 2 and the sentence holding the fact when a passage runs from page 1 onto page 2", async () => {
    // The stored chunk, as the query service reads it back (decrypted, with its page breaks).
    const found = await t.server.services.queries.retrieve(ADMIN, corpusId, { question: "How many tonnes does the Kuala Terengganu warehouse hold?", topK: 3, search: "hybrid" }, AbortSignal.timeout(60_000));
    const passage = found.citations.find((c) => c.filename === "review.pdf")!;
    assert.ok(passage, "the PDF passage is retrieved");
    assert.deepEqual([passage.pageStart, passage.pageEnd], [1, 2], "one passage spans both pages");
    assert.ok(passage.text.indexOf("Membership rose") < passage.text.indexOf("Kuala Terengganu"));

    const out = supportAnswer(found.citations, "The Kuala Terengganu warehouse holds 4,750 tonnes of fish.", true);
    const cited = out.citations.find((c) => c.index === passage.index)!;
    assert.equal(cited.cited, true);
    assert.equal(cited.support?.page, 2, "the fact is on page 2, not on the passage's first page");
    assert.equal(passage.text.slice(cited.support.start, cited.support.end), PAGE_TWO_FACT);
    assert.deepEqual(out.sentences, [{ start: 0, end: 58, citations: [passage.index], supported: true }]);

    // A fact of page 1 in the same passage stays on page 1.
    const first = supportAnswer(found.citations, "Membership rose to 2,310 fishers.", true).citations.find((c) => c.index === passage.index)!;
    assert.equal(first.support?.page, 1);
  });

  it("answers with heading paths, supporting spans and attributed sentences, the same plain and streamed", async () => {
    const question = "How many tonnes of fish does the cold-storage warehouse in Kuala Terengganu hold?";
    const request = { question, top_k: 3, temperature: 0, max_tokens: 60 };
    const plain = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, request);
    assert.equal(plain.status, 200, JSON.stringify(plain.json));
    assert.equal(plain.json.grounded, true);
    assert.ok(Array.isArray(plain.json.sentences));
    assertAttribution(plain.json.answer, plain.json);
    const pdfCitation = plain.json.citations.find((c: any) => c.filename === "review.pdf");
    assert.deepEqual(pdfCitation.heading_path.length > 0, true, JSON.stringify(pdfCitation));
    const md = plain.json.citations.find((c: any) => c.filename === "notes.md");
    if (md) assert.equal(md.page, null);

    const streamed = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/query`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...request, stream: true }),
    });
    const events = (await readSse(streamed)) as any[];
    const final = events.at(-1);
    assert.equal(final.object, "rag.answer.citations");
    const text = events.filter((e) => e.object === "rag.answer.delta").map((e) => e.delta).join("");
    assertAttribution(text, final);
    // The two generations may differ; each is attributed the same way from the same sources:
    // exactly what the service computes for its text (the plain answer's text is trimmed).
    const found = await t.server.services.queries.retrieve(ADMIN, corpusId, { question, topK: 3, search: "hybrid" }, AbortSignal.timeout(60_000));
    const expected = (answer: string) => {
      const out = supportAnswer(found.citations, answer, true);
      return { citations: out.citations.map((c) => citationObject(c, c.cited, c.support)), sentences: out.sentences };
    };
    assert.deepEqual({ citations: plain.json.citations, sentences: plain.json.sentences }, JSON.parse(JSON.stringify(expected(plain.json.answer))));
    assert.deepEqual({ citations: final.citations, sentences: final.sentences }, JSON.parse(JSON.stringify(expected(text))));
    if (text.trim() === plain.json.answer) {
      const shift = text.indexOf(plain.json.answer);
      assert.deepEqual(final.sentences.map((s: any) => ({ ...s, start: s.start - shift, end: s.end - shift })), plain.json.sentences);
      assert.deepEqual(final.citations, plain.json.citations);
    }
  });

  it("attributes nothing in a 'not in the corpus' answer, and search results carry heading paths but no support", async () => {
    const none = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: "Siapakah pengarang novel Salina?", search: "keyword" });
    assert.equal(none.json.grounded, false);
    assert.deepEqual(none.json.sentences, []);
    assert.ok(none.json.citations.every((c: any) => c.cited === false && c.support === null));
    const search = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "training budget", top_k: 2 });
    for (const c of search.json.data) {
      assert.equal(c.support, null);
      assert.equal(c.cited, false);
      assert.equal(c.page, c.page_start);
      assert.ok(Array.isArray(c.heading_path));
    }
    const training = search.json.data.find((c: any) => c.filename === "notes.md");
    assert.deepEqual(training.heading_path, ["Notes", "Training"]);
  });
});
