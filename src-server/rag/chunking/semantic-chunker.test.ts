import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { semanticChunker } from "./semantic-chunker.js";
import { assertValidChunks, fakeCountTokens, fakeDeps, h, list, makeDocument, options, p, table, TWO_TOPICS_EN, TWO_TOPICS_MS } from "../../../test/helpers/chunking-documents.js";

const opts = options("semantic", { maxTokens: 256, targetTokens: 200 });
/** Topic shifts from sentence embeddings (the fake embeds each sentence by its topic words). */
const byEmbedding = { ...opts, breakpoints: "embedding" as const };

describe("semanticChunker", () => {
  for (const [language, sentences] of [
    ["English", TWO_TOPICS_EN],
    ["Malay", TWO_TOPICS_MS],
  ] as const) {
    for (const breakpoints of ["lexical", "embedding"] as const) {
      it(`cuts one ${language} section between its two topics (topic shifts from ${breakpoints === "lexical" ? "words" : "sentence embeddings"})`, async () => {
        const doc = makeDocument([h(1, "Berita"), p(sentences.join(" "))]);
        const deps = fakeDeps();
        const chunks = await semanticChunker(doc, { ...opts, breakpoints }, deps);
        assertValidChunks(doc, chunks, opts);
        assert.equal(chunks.length, 2);
        assert.ok(chunks[0]!.text.endsWith(sentences[5]!), chunks[0]!.text);
        assert.ok(chunks[1]!.text.startsWith(sentences[6]!), chunks[1]!.text);
        assert.deepEqual(chunks.map((c) => c.headingPath), [["Berita"], ["Berita"]]);
        // From words, nothing is embedded: the chunks' text is embedded once, by the indexer.
        assert.equal(deps.embedCalls, breakpoints === "lexical" ? 0 : 1);
      });
    }
  }

  it("finds topic shifts from words by default", async () => {
    const doc = makeDocument([p(TWO_TOPICS_EN.join(" ")), p(TWO_TOPICS_MS.join(" "))]);
    const deps = fakeDeps();
    const chunks = await semanticChunker(doc, opts, deps);
    assert.equal(deps.embedCalls, 0);
    assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
  });

  it("does not cut where the words stay on one topic", async () => {
    const doc = makeDocument([p(TWO_TOPICS_EN.slice(0, 6).join(" ") + " " + TWO_TOPICS_EN.slice(0, 6).join(" "))]);
    const chunks = await semanticChunker(doc, opts, fakeDeps());
    assert.equal(chunks.length, 1);
  });

  it("does not cut where the embeddings see no topic shift", async () => {
    const doc = makeDocument([p(TWO_TOPICS_EN.join(" "))]);
    const same = { countTokens: fakeCountTokens, embed: (texts: string[]) => Promise.resolve(texts.map(() => Float32Array.of(1, 0))) };
    const chunks = await semanticChunker(doc, byEmbedding, same);
    assert.equal(chunks.length, 1);
  });

  it("embeds all sentences of a document in one call", async () => {
    const doc = makeDocument([h(1, "A"), p(TWO_TOPICS_EN.join(" ")), h(1, "B"), p(TWO_TOPICS_MS.join(" "))]);
    const deps = fakeDeps();
    await semanticChunker(doc, byEmbedding, deps);
    assert.equal(deps.embedCalls, 1);
  });

  it("does not embed sections too small to cut", async () => {
    const doc = makeDocument([h(1, "Ringkas"), p("Satu ayat. Dua ayat.")]);
    const deps = fakeDeps();
    const chunks = await semanticChunker(doc, byEmbedding, deps);
    assert.equal(deps.embedCalls, 0);
    assert.equal(chunks.length, 1);
  });

  it("starts a section at each heading and keeps stacked headings together", async () => {
    const doc = makeDocument([h(1, "# Laporan"), h(2, "## Banjir"), p(TWO_TOPICS_MS[0]!), h(2, "## Sawit"), p(TWO_TOPICS_MS[6]!)]);
    const chunks = await semanticChunker(doc, opts, fakeDeps());
    assert.deepEqual(
      chunks.map((c) => [c.text.split("\n")[0], c.headingPath]),
      [
        ["# Laporan", ["Laporan", "Banjir"]],
        ["## Sawit", ["Laporan", "Sawit"]],
      ],
    );
  });

  it("keeps lists and tables whole when they fit, and records page ranges", async () => {
    const items = TWO_TOPICS_EN.slice(0, 6);
    const rows = TWO_TOPICS_EN.slice(6).map((s, i) => [String(i), s]);
    const doc = makeDocument([h(1, "Data", 1), p("Ringkasan data banjir dan harga.", 1), list(items, 1), table(rows, 2)], "pdf");
    const small = options("semantic", { maxTokens: 120, targetTokens: 60 });
    const chunks = await semanticChunker(doc, small, fakeDeps());
    assertValidChunks(doc, chunks, small);
    const listBlock = doc.blocks[2]!;
    const tableBlock = doc.blocks[3]!;
    assert.ok(chunks.some((c) => c.start <= listBlock.start && c.end >= listBlock.end), "list in one chunk");
    const tableChunk = chunks.find((c) => c.start <= tableBlock.start && c.end >= tableBlock.end);
    assert.ok(tableChunk, "table in one chunk");
    assert.equal(tableChunk.pageEnd, 2);
  });

  it("splits lists longer than maxTokens by lines", async () => {
    const doc = makeDocument([list([...TWO_TOPICS_EN, ...TWO_TOPICS_MS])]);
    const small = options("semantic", { maxTokens: 60, targetTokens: 40 });
    const chunks = await semanticChunker(doc, small, fakeDeps());
    assertValidChunks(doc, chunks, small);
    assert.ok(chunks.length > 3);
    for (const c of chunks) assert.ok(c.text.startsWith("- ") && (c.end === doc.text.length || doc.text[c.end] === "\n"), c.text);
  });

  it("keeps long sections under maxTokens and merges a tiny tail", async () => {
    const doc = makeDocument([p([...TWO_TOPICS_EN, ...TWO_TOPICS_EN, "Tamat."].join(" "))]);
    const small = options("semantic", { maxTokens: 50, targetTokens: 40 });
    const chunks = await semanticChunker(doc, small, fakeDeps());
    assertValidChunks(doc, chunks, small);
    assert.ok(chunks.length >= 6);
    assert.ok(chunks.at(-1)!.text.endsWith("smallholders. Tamat."), chunks.at(-1)!.text);
  });

  it("splits a single huge sentence by words under maxTokens", async () => {
    const sentence = `${Array.from({ length: 400 }, (_, i) => `perkataan${i % 37}`).join(" ")}.`;
    const doc = makeDocument([h(1, "Ayat panjang"), p(sentence)]);
    const small = options("semantic", { maxTokens: 100, targetTokens: 60 });
    const chunks = await semanticChunker(doc, small, fakeDeps());
    assertValidChunks(doc, chunks, small);
    assert.ok(chunks.length >= 5);
    for (const c of chunks) assert.match(doc.text.slice(c.end, c.end + 1), /^(\s|)$/u);
  });

  it("fails when embed returns the wrong number of vectors", async () => {
    const doc = makeDocument([p(TWO_TOPICS_EN.join(" "))]);
    const deps = { countTokens: fakeCountTokens, embed: () => Promise.resolve([new Float32Array(4)]) };
    await assert.rejects(semanticChunker(doc, byEmbedding, deps), /embed returned 1 vectors for 12 texts/);
  });
});
