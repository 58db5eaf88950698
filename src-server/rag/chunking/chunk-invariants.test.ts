import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertChunkInvariants } from "./chunk-invariants.js";
import { paragraphChunker } from "./paragraph-chunker.js";
import { fakeDeps, makeDocument, options, p } from "../../../test/helpers/chunking-documents.js";
import type { ChunkDraft } from "./types.js";

describe("assertChunkInvariants", () => {
  const doc = makeDocument([p("Ayat satu. Ayat dua."), p("Ayat tiga.")]);
  const limits = { maxTokens: 100, allowOverlap: false };
  const good = async (): Promise<ChunkDraft[]> => paragraphChunker(doc, options("paragraph", { maxTokens: 5, targetTokens: 5 }), fakeDeps());

  it("accepts a valid chunking", async () => {
    const chunks = await good();
    assert.equal(chunks.length, 3);
    assertChunkInvariants(doc, chunks, limits);
  });

  const cases: [string, (c: ChunkDraft[]) => ChunkDraft[], RegExp][] = [
    ["a wrong index", (c) => c.map((x, i) => ({ ...x, index: i + 1 })), /index 1 at position 0/],
    ["text not matching its offsets", (c) => [{ ...c[0]!, text: "Ayat satu!" }, ...c.slice(1)], /slice/],
    ["a blank chunk", (c) => [...c, { ...c[0]!, index: 3, start: doc.text.length - 11, end: doc.text.length - 10, text: "\n" }], /blank/],
    ["too many tokens", (c) => [{ ...c[0]!, tokenCount: 101 }, ...c.slice(1)], /exceeds 100/],
    ["a half-null page range", (c) => [{ ...c[0]!, pageStart: 1 }, ...c.slice(1)], /page range/],
    ["page breaks without pages", (c) => [{ ...c[0]!, pageBreaks: [[0, 1]] }, ...c.slice(1)], /page breaks in a chunk without pages/],
    ["page breaks outside the page range", (c) => [{ ...c[0]!, pageStart: 1, pageEnd: 1, pageBreaks: [[0, 1], [3, 2]] }, ...c.slice(1)], /outside 1–1/],
    ["page breaks not from offset 0", (c) => [{ ...c[0]!, pageStart: 1, pageEnd: 2, pageBreaks: [[2, 1]] }, ...c.slice(1)], /offset 0/],
    ["chunks out of order", (c) => [c[1]!, c[0]!, c[2]!].map((x, i) => ({ ...x, index: i })), /order/],
    ["overlapping chunks", (c) => [c[0]!, { ...c[1]!, start: c[1]!.start - 3, text: doc.text.slice(c[1]!.start - 3, c[1]!.end) }, c[2]!], /overlaps/],
    ["uncovered text", (c) => [c[0]!, { ...c[2]!, index: 1 }], /in no chunk/],
  ];
  for (const [name, corrupt, message] of cases) {
    it(`rejects ${name}`, async () => {
      const chunks = corrupt(await good());
      assert.throws(() => assertChunkInvariants(doc, chunks, limits), message);
    });
  }
});
