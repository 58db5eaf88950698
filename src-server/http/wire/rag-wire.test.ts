import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import { parseWith } from "../validate.js";
import type * as Api from "../../contract/index.js";
import { supportAnswer } from "../../rag/answer/answer-support.js";
import { QuerySchema, SearchSchema, answerCitationsEvent, answerObject, citationObject } from "./rag-wire.js";

const refusal = (param: string) => (error: unknown) => error instanceof ServiceError && error.code === "invalid_parameter" && error.param === param;

describe("question and query are one field on /query and /search", () => {
  it("accepts each route's own name and the other as an alias", () => {
    assert.equal(parseWith(QuerySchema, { question: " Banjir? " }).question, "Banjir?");
    assert.equal(parseWith(QuerySchema, { query: "Banjir?" }).question, "Banjir?");
    assert.equal(parseWith(SearchSchema, { query: "banjir" }).query, "banjir");
    assert.equal(parseWith(SearchSchema, { question: "banjir" }).query, "banjir");
    assert.ok(!("query" in parseWith(QuerySchema, { query: "x" })), "the alias does not travel on");
  });

  it("names the route's own field when neither is sent, and refuses both", () => {
    assert.throws(() => parseWith(QuerySchema, { top_k: 3 }), refusal("question"));
    assert.throws(() => parseWith(SearchSchema, {}), refusal("query"));
    assert.throws(() => parseWith(QuerySchema, { question: "a", query: "b" }), refusal("query"));
    assert.throws(() => parseWith(SearchSchema, { question: "a", query: "a" }), refusal("question"));
    assert.throws(() => parseWith(SearchSchema, { query: "   " }), refusal("query"));
  });
});

describe("answers on the wire", () => {
  const text = "Seramai 41,870 orang dipindahkan. Paras sungai mencecah 26.8 meter.";
  const citation = { index: 1, documentId: "doc_1", chunkId: "chk_1", filename: "banjir.pdf", text, score: 0.9, pageStart: 3, pageEnd: 4, pageBreaks: [[0, 3], [34, 4]] as [number, number][], headingPath: ["Banjir", "Mangsa"], metadata: {} };
  const started = { corpusId: "corp_1", model: "chat", citations: [citation], run: {} as never, fallback: null, queryTokens: 3, relevance: { relevant: true, decidedBy: "gate" as const, score: 0.8, threshold: 0.4, judge: 0.9 } };

  it("gives the plain answer and the stream's last event the same citations and sentences", () => {
    const answer = "Paras sungai mencecah 26.8 meter [1].";
    const supported = supportAnswer(started.citations, answer, true);
    const ending = { ...supported, promptTokens: 10, completionTokens: 5, finishReason: "stop" as const };
    const plain = answerObject("ans_1", started, answer, ending, 1);
    const event = answerCitationsEvent("ans_1", started, ending) as Extract<Api.AnswerStreamEvent, { object: "rag.answer.citations" }>;
    assert.deepEqual(event.citations, plain.citations);
    assert.deepEqual(event.sentences, plain.sentences);
    assert.deepEqual(plain.sentences, [{ start: 0, end: answer.length, citations: [1], supported: true }]);
    const [c] = plain.citations;
    assert.deepEqual(c!.support, { page: 4, start: 34, end: text.length });
    assert.equal(c!.page, 4, "page is the supporting passage's page");
    assert.deepEqual([c!.page_start, c!.page_end, c!.heading_path, c!.cited], [3, 4, ["Banjir", "Mangsa"], true]);
  });

  it("keeps page at the first page when the source supports nothing", () => {
    const unsupported = citationObject(citation);
    assert.deepEqual([unsupported.page, unsupported.support, unsupported.cited], [3, null, false]);
  });
});
