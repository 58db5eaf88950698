import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertChunkInvariants } from "./chunk-invariants.js";
import { fixedChunker } from "./fixed-chunker.js";
import { assertValidChunks, englishReport, fakeCountTokens, fakeDeps, h, makeDocument, malayReport, options, p, TWO_TOPICS_MS } from "../../../test/helpers/chunking-documents.js";

describe("fixedChunker", () => {
  it("makes windows of about targetTokens sharing about overlapTokens", async () => {
    for (const doc of [englishReport(), malayReport()]) {
      const opts = options("fixed", { maxTokens: 60, targetTokens: 40, overlapTokens: 10 });
      const chunks = await fixedChunker(doc, opts, fakeDeps());
      assertValidChunks(doc, chunks, opts);
      assert.ok(chunks.length >= 4);
      chunks.forEach((c, i) => {
        assert.ok(c.tokenCount <= 40, `window ${i} has ${c.tokenCount} tokens`);
        if (i < chunks.length - 1) assert.ok(c.tokenCount >= 30, `window ${i} has only ${c.tokenCount} tokens`);
        const next = chunks[i + 1];
        if (next === undefined) return;
        assert.ok(next.start < c.end, `window ${i + 1} overlaps window ${i}`);
        const shared = fakeCountTokens(doc.text.slice(next.start, c.end));
        assert.ok(shared > 0 && shared <= 10, `overlap of ${shared} tokens`);
      });
    }
  });

  it("aligns windows to word boundaries", async () => {
    const doc = malayReport();
    const chunks = await fixedChunker(doc, options("fixed", { maxTokens: 30, targetTokens: 25, overlapTokens: 5 }), fakeDeps());
    for (const c of chunks) {
      assert.ok(c.start === 0 || /\s/u.test(doc.text[c.start - 1]!), `window ${c.index} starts inside a word`);
      assert.ok(c.end === doc.text.length || /\s/u.test(doc.text[c.end]!), `window ${c.index} ends inside a word`);
    }
  });

  it("without overlap, tiles the text", async () => {
    const doc = makeDocument([p(TWO_TOPICS_MS.join(" "))]);
    const opts = options("fixed", { maxTokens: 30, targetTokens: 30, overlapTokens: 0 });
    const chunks = await fixedChunker(doc, opts, fakeDeps());
    assertValidChunks(doc, chunks, opts);
    assertChunkInvariants(doc, chunks, { maxTokens: 30, allowOverlap: false });
    assert.equal(chunks.map((c) => c.text).join(" "), doc.text);
  });

  it("records the heading path and pages at each window", async () => {
    const doc = makeDocument([h(1, "Satu", 1), p(TWO_TOPICS_MS.slice(0, 4).join(" "), 1), h(1, "Dua", 2), p(TWO_TOPICS_MS.slice(6, 10).join(" "), 3)], "pdf");
    const chunks = await fixedChunker(doc, options("fixed", { maxTokens: 40, targetTokens: 40, overlapTokens: 8 }), fakeDeps());
    assert.deepEqual(chunks[0]!.headingPath, ["Satu"]);
    assert.deepEqual(chunks.at(-1)!.headingPath, ["Dua"]);
    assert.equal(chunks[0]!.pageStart, 1);
    assert.ok(chunks.some((c) => c.pageStart! < c.pageEnd!), "a window crosses a page break");
    assert.equal(chunks.at(-1)!.pageEnd, 3);
  });

  it("cuts a word longer than a window inside it", async () => {
    const blob = "x".repeat(50) + "-".repeat(40);
    const doc = makeDocument([p(`Data: ${blob} tamat.`)]);
    const opts = options("fixed", { maxTokens: 12, targetTokens: 10, overlapTokens: 2 });
    const chunks = await fixedChunker(doc, opts, fakeDeps());
    assertValidChunks(doc, chunks, opts);
    assert.ok(chunks.length >= 4);
  });

  it("counts each word once, not each window again and again", async () => {
    const doc = makeDocument(Array.from({ length: 200 }, (_, i) => p(`${TWO_TOPICS_MS[i % 12]!} Perenggan ${i}.`)));
    const deps = fakeDeps();
    await fixedChunker(doc, options("fixed", { maxTokens: 300, targetTokens: 256, overlapTokens: 64 }), deps);
    // Words (memoised) plus each finished window, which repeat the overlap: well under 3x the text.
    assert.ok(deps.countedChars < 3 * doc.text.length, `${deps.countedChars} characters tokenized for ${doc.text.length}`);
  });

  it("caps the overlap at half a window", async () => {
    const doc = makeDocument([p(TWO_TOPICS_MS.join(" "))]);
    const chunks = await fixedChunker(doc, options("fixed", { maxTokens: 40, targetTokens: 40, overlapTokens: 39 }), fakeDeps());
    for (let i = 1; i < chunks.length; i++) assert.ok(fakeCountTokens(doc.text.slice(chunks[i]!.start, chunks[i - 1]!.end)) <= 20);
  });
});
