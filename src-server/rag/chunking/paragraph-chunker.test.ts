import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ParsedDocument } from "../ingest/types.js";
import { paragraphChunker } from "./paragraph-chunker.js";
import { sentenceSpans } from "./sentences.js";
import { assertValidChunks, englishReport, fakeDeps, h, makeDocument, malayReport, options, p, TWO_TOPICS_EN, TWO_TOPICS_MS } from "../../../test/helpers/chunking-documents.js";
import type { ChunkDraft } from "./types.js";

/** Every chunk starts and ends on a sentence boundary of the block it starts or ends in. */
function assertWholeSentences(doc: ParsedDocument, chunks: ChunkDraft[]): void {
  const starts = new Set<number>();
  const ends = new Set<number>();
  for (const block of doc.blocks) {
    for (const s of sentenceSpans(block.text, block.start)) {
      starts.add(s.start);
      ends.add(s.end);
    }
  }
  for (const c of chunks) {
    assert.ok(starts.has(c.start), `chunk ${c.index} starts mid-sentence: ${c.text.slice(0, 40)}`);
    assert.ok(ends.has(c.end), `chunk ${c.index} ends mid-sentence: ${c.text.slice(-40)}`);
  }
}

describe("paragraphChunker", () => {
  it("merges short paragraphs up to targetTokens", async () => {
    const doc = makeDocument(TWO_TOPICS_EN.map((s) => p(s)));
    const opts = options("paragraph", { maxTokens: 60, targetTokens: 30 });
    const chunks = await paragraphChunker(doc, opts, fakeDeps());
    assertValidChunks(doc, chunks, opts);
    assert.equal(chunks.length, 6);
    for (const c of chunks) assert.equal(c.text.split("\n\n").length, 2);
  });

  it("never splits a sentence, splitting long paragraphs between sentences", async () => {
    for (const doc of [englishReport(), malayReport(), makeDocument([p([...TWO_TOPICS_MS, ...TWO_TOPICS_EN].join(" "))])]) {
      const opts = options("paragraph", { maxTokens: 50, targetTokens: 35 });
      const chunks = await paragraphChunker(doc, opts, fakeDeps());
      assertValidChunks(doc, chunks, opts);
      assertWholeSentences(doc, chunks);
    }
  });

  it("keeps Malay abbreviations inside the sentence they belong to", async () => {
    const doc = makeDocument([p(TWO_TOPICS_MS.join(" "))]);
    const opts = options("paragraph", { maxTokens: 20, targetTokens: 20 });
    const chunks = await paragraphChunker(doc, opts, fakeDeps());
    assertValidChunks(doc, chunks, opts);
    assert.equal(chunks.length, TWO_TOPICS_MS.length);
    assert.deepEqual(
      chunks.map((c) => c.text),
      TWO_TOPICS_MS,
    );
  });

  it("starts a chunk at each heading, with the heading at its top", async () => {
    const doc = makeDocument([p("Pendahuluan ringkas."), h(1, "Bab Satu"), p("Isi bab satu."), h(2, "Bahagian A"), p("Isi bahagian A."), h(1, "Bab Dua"), h(2, "Bahagian B"), p("Isi B.")]);
    const chunks = await paragraphChunker(doc, options("paragraph"), fakeDeps());
    assert.deepEqual(
      chunks.map((c) => [c.text, c.headingPath]),
      [
        ["Pendahuluan ringkas.", []],
        ["Bab Satu\n\nIsi bab satu.", ["Bab Satu"]],
        ["Bahagian A\n\nIsi bahagian A.", ["Bab Satu", "Bahagian A"]],
        ["Bab Dua\n\nBahagian B\n\nIsi B.", ["Bab Dua", "Bahagian B"]],
      ],
    );
  });

  it("keeps a heading with a paragraph beyond the target but within maxTokens", async () => {
    const doc = makeDocument([h(1, "Tajuk"), p(TWO_TOPICS_MS.slice(0, 3).join(" "))]);
    const opts = options("paragraph", { maxTokens: 60, targetTokens: 20 });
    const chunks = await paragraphChunker(doc, opts, fakeDeps());
    assert.equal(chunks.length, 1);
  });

  it("keeps a short opening line (a plain-text title) with the paragraph after it, within maxTokens", async () => {
    // BEIR SciFact's files are a title line and an abstract: the title alone made a chunk of its own.
    const body = TWO_TOPICS_MS.slice(0, 3).join(" ");
    const titled = await paragraphChunker(makeDocument([p("Banjir Kelantan."), p(body)]), options("paragraph", { maxTokens: 60, targetTokens: 20 }), fakeDeps());
    assert.equal(titled.length, 1);
    assert.ok(titled[0]!.text.startsWith("Banjir Kelantan.\n\n"));
    // Beyond maxTokens the title still goes alone rather than making an oversized chunk.
    const tight = await paragraphChunker(makeDocument([p("Banjir Kelantan."), p(body)]), options("paragraph", { maxTokens: 40, targetTokens: 20 }), fakeDeps());
    assert.ok(tight.every((c) => c.tokenCount <= 40));
    // A long opening paragraph is no title: the target applies.
    const long = await paragraphChunker(makeDocument([p(TWO_TOPICS_MS.slice(3, 6).join(" ")), p(body)]), options("paragraph", { maxTokens: 200, targetTokens: 20 }), fakeDeps());
    assert.equal(long.length, 2);
  });

  it("splits a single sentence longer than maxTokens by words", async () => {
    const sentence = `Senarai ${Array.from({ length: 300 }, (_, i) => `item${i}`).join(", ")}.`;
    const doc = makeDocument([p("Ayat biasa sebelum."), p(sentence), p("Ayat biasa selepas.")]);
    const opts = options("paragraph", { maxTokens: 80, targetTokens: 50 });
    const chunks = await paragraphChunker(doc, opts, fakeDeps());
    assertValidChunks(doc, chunks, opts);
    assert.ok(chunks.length >= 12);
    for (const c of chunks) {
      assert.ok(c.tokenCount <= 80);
      assert.ok(c.start === 0 || /\s/u.test(doc.text[c.start - 1]!), "starts at a word");
      assert.ok(c.end === doc.text.length || /\s/u.test(doc.text[c.end]!), "ends at a word");
    }
  });
});
