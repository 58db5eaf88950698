import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as lancedb from "@lancedb/lancedb";
import { CorpusIndex, type IndexedChunk } from "./corpus-index.js";
import { reciprocalRankFusion } from "./reciprocal-rank-fusion.js";

const unit = (values: number[]) => {
  const norm = Math.hypot(...values);
  return new Float32Array(values.map((v) => v / norm));
};

const chunks: IndexedChunk[] = [
  { id: "chk_a", documentId: "doc_1", text: "Banjir besar melanda Kelantan pada Disember 2014.", vector: unit([1, 0.1, 0, 0]) },
  { id: "chk_b", documentId: "doc_2", text: "Monsoon floods hit Kelantan in December.", vector: unit([0.9, 0.2, 0, 0]) },
  { id: "chk_c", documentId: "doc_1", text: "Harga minyak sawit mentah naik 4 peratus.", vector: unit([0, 0, 1, 0.1]) },
  { id: "chk_d", documentId: "doc_3", text: "Project code KLX-2291 was approved by the council.", vector: unit([0, 1, 0, 0]) },
];

describe("CorpusIndex (in-memory LanceDB)", () => {
  let db: lancedb.Connection;
  let index: CorpusIndex;
  before(async () => {
    db = await lancedb.connect("memory://");
    index = await CorpusIndex.open(db, "corp_test", chunks);
  });
  after(() => index.close());

  it("serves several corpora side by side (each builds its own full-text index)", async () => {
    const other = await CorpusIndex.open(db, "corp_other", [{ id: "chk_z", documentId: "doc_9", text: "Kuching waterfront", vector: unit([0, 0, 0, 1]) }]);
    try {
      assert.equal((await other.search({ mode: "keyword", text: "kuching", vector: null, topK: 1 }))[0]?.chunkId, "chk_z");
    } finally {
      await other.close();
    }
  });

  it("ranks by cosine similarity in vector mode", async () => {
    const hits = await index.search({ mode: "vector", text: "", vector: unit([1, 0, 0, 0]), topK: 2 });
    assert.deepEqual(hits.map((h) => h.chunkId), ["chk_a", "chk_b"]);
    assert.ok(hits[0]!.score > 0.99 && hits[0]!.similarity === hits[0]!.score);
  });

  it("finds exact terms in keyword mode, Malay and codes included, whatever the punctuation", async () => {
    assert.deepEqual((await index.search({ mode: "keyword", text: "banjir", vector: null, topK: 5 })).map((h) => h.chunkId), ["chk_a"]);
    assert.equal((await index.search({ mode: "keyword", text: 'What is "KLX-2291"? (code: x)', vector: null, topK: 1 }))[0]?.chunkId, "chk_d");
    assert.deepEqual(await index.search({ mode: "keyword", text: "zzzz", vector: null, topK: 5 }), []);
  });

  it("fuses both lists in hybrid mode: a chunk strong in both comes first", async () => {
    const hits = await index.search({ mode: "hybrid", text: "floods Kelantan December", vector: unit([0.9, 0.2, 0, 0]), topK: 3 });
    assert.equal(hits[0]?.chunkId, "chk_b");
    assert.ok(hits.every((h, i) => i === 0 || h.score <= hits[i - 1]!.score));
  });

  it("restricts results to given documents, and forgets a removed document", async () => {
    const only = await index.search({ mode: "hybrid", text: "Kelantan", vector: unit([1, 0, 0, 0]), topK: 5, documentIds: ["doc_2"] });
    assert.deepEqual(only.map((h) => h.documentId), ["doc_2"]);
    assert.deepEqual(await index.search({ mode: "hybrid", text: "Kelantan", vector: unit([1, 0, 0, 0]), topK: 5, documentIds: [] }), []);
    await index.add([{ id: "chk_e", documentId: "doc_4", text: "Kelantan river levels", vector: unit([1, 0, 0, 0]) }]);
    assert.equal(await index.count(), 5);
    await index.removeDocument("doc_1");
    const after = await index.search({ mode: "hybrid", text: "banjir Kelantan", vector: unit([1, 0.1, 0, 0]), topK: 5 });
    assert.ok(!after.some((h) => h.documentId === "doc_1"));
    assert.equal(await index.count(), 3);
  });
});

describe("reciprocalRankFusion", () => {
  it("rewards items in both lists over items high in one", () => {
    const fused = reciprocalRankFusion([["a", "b", "c"], ["c", "d", "b"]]);
    assert.deepEqual(fused.map((f) => f.id).slice(0, 2), ["c", "b"]);
    assert.ok(Math.abs(fused[0]!.score - (1 / 63 + 1 / 61)) < 1e-12);
  });
});
