import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerSentences } from "./answer-sentences.js";
import { supportAnswer } from "./answer-support.js";
import { attributeAnswer, type Attribution } from "./attribution.js";
import type { Citation } from "./query-service.js";

const LRT = {
  index: 1,
  text:
    "Laluan Bayu carried 12.4 million passengers in the second quarter of 2024. " +
    "On-time performance for the quarter was 98.2 percent, measured as the share of trips arriving within two minutes of schedule. " +
    "The monthly unlimited-travel pass, Pas Bayu 30, is sold at RM50.",
};
const BANJIR = {
  index: 2,
  text:
    "Banjir di Kelantan bermula pada 27 November 2022. " +
    "Jumlah mangsa mencapai kemuncak seramai 41,870 orang daripada 11,205 keluarga di 214 pusat pemindahan sementara. " +
    "Kelewatan amaran disebabkan oleh kegagalan sambungan data di dua stesen telemetri sungai.",
};
const PORT = { index: 3, text: "Kuantan Port suspended vessel operations for 31 hours. The Federal Government approved a recovery envelope of RM95 million." };
const SOURCES = [LRT, BANJIR, PORT];

/** The answer's sentences with the source text their spans point at. */
function explain(answer: string, result: Attribution, sources = SOURCES) {
  return result.sentences.map((s) => ({
    sentence: answer.slice(s.start, s.end),
    citations: s.citations,
    supported: s.supported,
    spans: s.spans.map((x) => sources.find((src) => src.index === x.index)!.text.slice(x.start, x.end)),
  }));
}

describe("answerSentences", () => {
  it("keeps markers out of the sentences and gives each to the sentence it follows", () => {
    const answer = "Fact one.[1] Fact two [2][3]. Fact three. [1, 3]\n\n[2]";
    const sentences = answerSentences(answer);
    assert.deepEqual(
      sentences.map((s) => [answer.slice(s.start, s.end), s.markers]),
      [
        ["Fact one.[1]", [1]],
        ["Fact two [2][3].", [2, 3]],
        ["Fact three. [1, 3]", [1, 3, 2]],
      ],
    );
    assert.equal(sentences[1]!.content.includes("["), false);
  });

  it("reads list items one by one, without their bullets, and drops citation-only fragments", () => {
    const answer = "- 41,870 orang [2]\n- 214 pusat pemindahan [2]\n2. Dr. Ahmad berkata begitu.\n[1]";
    assert.deepEqual(
      answerSentences(answer).map((s) => answer.slice(s.start, s.end)),
      ["41,870 orang [2]", "214 pusat pemindahan [2]", "Dr. Ahmad berkata begitu."],
    );
    assert.deepEqual(answerSentences("[1][2] . [3]"), []);
  });
});

describe("attributeAnswer", () => {
  it("links English sentences without markers to the passages holding their facts", () => {
    const answer = "Laluan Bayu carried 12.4 million passengers. Its on-time performance was 98.2 percent.";
    const result = attributeAnswer(answer, SOURCES);
    assert.deepEqual(explain(answer, result), [
      { sentence: "Laluan Bayu carried 12.4 million passengers.", citations: [1], supported: true, spans: ["Laluan Bayu carried 12.4 million passengers in the second quarter of 2024."] },
      { sentence: "Its on-time performance was 98.2 percent.", citations: [1], supported: true, spans: [LRT.text.split(". ")[1]! + "."] },
    ]);
    assert.deepEqual([...result.cited], [1]);
    assert.deepEqual(result.support.get(1), { ...result.sentences[0]!.spans[0]!, index: 1 }, "the citation's support is its best-supported sentence (the first of equals)");
  });

  it("links Malay sentences through Malay stems, and a short English answer about a Malay source through its numbers", () => {
    const ms = "Kemuncak mangsa banjir ialah 41,870 orang daripada 11,205 keluarga. Amaran lewat kerana sambungan data gagal di stesen telemetri.";
    assert.deepEqual(
      explain(ms, attributeAnswer(ms, SOURCES)).map((s) => [s.citations, s.supported, s.spans[0]?.slice(0, 20)]),
      [
        [[2], true, "Jumlah mangsa mencap"],
        [[2], true, "Kelewatan amaran dis"],
      ],
    );
    const en = "41,870 people from 11,205 families, at the peak.";
    assert.deepEqual(explain(en, attributeAnswer(en, SOURCES))[0]!.citations, [2]);
  });

  it("attributes a marked sentence to the marked source, with the best-matching sentence inside it", () => {
    const answer = "Operations stopped for 31 hours [3]. The pass costs RM50 [1].";
    const result = attributeAnswer(answer, SOURCES);
    assert.deepEqual(explain(answer, result), [
      { sentence: "Operations stopped for 31 hours [3].", citations: [3], supported: true, spans: ["Kuantan Port suspended vessel operations for 31 hours."] },
      { sentence: "The pass costs RM50 [1].", citations: [1], supported: true, spans: ["The monthly unlimited-travel pass, Pas Bayu 30, is sold at RM50."] },
    ]);
  });

  it("moves a sentence whose marker names the wrong source to the source that holds it, and keeps the marked one cited", () => {
    const answer = "The recovery envelope was RM95 million [1].";
    const result = attributeAnswer(answer, SOURCES);
    assert.deepEqual(result.sentences.map((s) => [s.citations, s.supported]), [[[3], true]]);
    assert.deepEqual([...result.cited].sort(), [1, 3]);
    assert.equal(result.support.has(1), false, "the wrongly marked source supports nothing");
  });

  it("counts numbers strongly: a wrong figure leaves the sentence unsupported", () => {
    const right = attributeAnswer("Kuantan Port suspended operations for 31 hours.", SOURCES).sentences[0]!;
    const wrong = attributeAnswer("Kuantan Port suspended operations for 45 hours.", SOURCES).sentences[0]!;
    assert.equal(right.supported, true);
    assert.equal(wrong.supported, false);
    assert.ok(wrong.coverage < right.coverage);
    // A lone digit is list numbering as often as a fact: it does not carry a sentence.
    assert.equal(attributeAnswer("Pembarikan: 1.", [{ index: 1, text: "1. Banjir bermula. 2. Air surut." }, PORT]).sentences[0]!.supported, false);
  });

  it("flags a sentence no source supports, and a marked one its source does not hold", () => {
    const answer = "On-time performance was 98.2 percent. The moon is made of green cheese. Penguins live in Antarctica [1].";
    const result = attributeAnswer(answer, SOURCES);
    assert.deepEqual(
      result.sentences.map((s) => [s.citations, s.supported]),
      [
        [[1], true],
        [[], false],
        [[1], false],
      ],
    );
    assert.deepEqual(result.sentences[2]!.spans, []);
  });

  it("answers nothing for an empty answer, and only the cited sources for an answer of markers", () => {
    const empty = attributeAnswer("", SOURCES);
    assert.deepEqual([empty.sentences, [...empty.cited], empty.support.size], [[], [], 0]);
    const markers = attributeAnswer(" [1][3] [9]", SOURCES);
    assert.deepEqual([markers.sentences, [...markers.cited].sort()], [[], [1, 3]]);
    assert.deepEqual(attributeAnswer("Anything at all.", []).sentences.map((s) => s.supported), [false]);
  });

  it("stays bounded on hostile input", () => {
    const words = "banjir 41,870 passengers [1] quarter [999] [2, 3] RM50. ".repeat(2000);
    const hostile = [words, "x".repeat(100_000), "[1]".repeat(30_000), `${"(".repeat(50_000)}12.4${")".repeat(50_000)}`, "a. ".repeat(33_000)];
    for (const answer of hostile) {
      const started = performance.now();
      const result = attributeAnswer(answer, SOURCES);
      const ms = performance.now() - started;
      assert.ok(ms < 5000, `${answer.slice(0, 20)}… took ${ms.toFixed(0)} ms`);
      for (const s of result.sentences) {
        assert.ok(s.start >= 0 && s.start < s.end && s.end <= answer.length);
        assert.ok(s.citations.every((n) => n >= 1 && n <= 3));
      }
    }
    const big = SOURCES.map((s) => ({ ...s, text: s.text.repeat(300) }));
    const started = performance.now();
    attributeAnswer(words.slice(0, 20_000), big);
    assert.ok(performance.now() - started < 5000);
  });
});

describe("supportAnswer", () => {
  const citation = (index: number, text: string, extra: Partial<Citation> = {}): Citation => ({
    index,
    documentId: "doc_1",
    chunkId: `chk_${index}`,
    filename: "report.pdf",
    text,
    score: 1,
    pageStart: null,
    pageEnd: null,
    headingPath: [],
    metadata: {},
    ...extra,
  });

  it("gives the supporting passage's page from the chunk's page breaks", () => {
    const text = "Membership grew steadily. The board met eleven times.\n\nThe northern region earned RM1,200 thousand from dried fish.";
    const pdf = citation(1, text, { pageStart: 1, pageEnd: 2, pageBreaks: [[0, 1], [text.indexOf("The northern"), 2]] });
    const out = supportAnswer([pdf, citation(2, "Unrelated notes about a warehouse.")], "The northern region earned RM1,200 thousand.", true);
    const [first, second] = out.citations;
    assert.deepEqual(first!.support, { page: 2, start: text.indexOf("The northern"), end: text.length });
    assert.equal(first!.cited, true);
    assert.deepEqual([second!.cited, second!.support], [false, null]);
    assert.deepEqual(out.sentences, [{ start: 0, end: 44, citations: [1], supported: true }]);
  });

  it("attributes nothing in a fallback answer", () => {
    const out = supportAnswer([citation(1, "The corpus does not contain information.")], "The corpus does not contain information that answers this question.", false);
    assert.deepEqual(out.sentences, []);
    assert.ok(out.citations.every((c) => !c.cited && c.support === null));
  });
});
