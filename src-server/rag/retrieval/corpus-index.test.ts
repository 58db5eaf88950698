import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CorpusIndex, keywordTrust, type IndexedChunk } from "./corpus-index.js";
import { lancedb, type LanceDb } from "./lance-modules.js";

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
  let db: LanceDb.Connection;
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

  it("holds vectors in half precision: similarities, from LanceDB or computed here, within 1e-3 of float32's", async () => {
    const query = unit([0.7, 0.3, 0.2, 0.6]);
    const cosine = (v: Float32Array) => v.reduce((sum, x, i) => sum + x * query[i]!, 0);
    const truth = new Map(chunks.map((c) => [c.id, cosine(c.vector)]));
    const vectorHits = await index.search({ mode: "vector", text: "", vector: query, topK: 4 });
    // Keyword mode scores its hits' similarities itself, from the stored half floats.
    const keywordHits = await index.search({ mode: "keyword", text: "kelantan harga council", vector: query, topK: 4 });
    assert.equal(vectorHits.length, 4);
    assert.ok(keywordHits.length >= 3);
    for (const hit of [...vectorHits, ...keywordHits]) {
      const error = Math.abs(hit.similarity! - truth.get(hit.chunkId)!);
      assert.ok(error < 1e-3, `${hit.chunkId}: ${hit.similarity} vs ${truth.get(hit.chunkId)}`);
    }
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

  it("tells a corpus in one language from a multilingual one, again after each change, for the `auto` keyword trust", async () => {
    const english = Array.from({ length: 19 }, (_, i): IndexedChunk => ({ id: `chk_en${i}`, documentId: `doc_en${i}`, text: `The council approved the drainage budget for district ${i} after the monsoon floods.`, vector: unit([1, i / 19, 0, 0]) }));
    const mixed = await CorpusIndex.open(db, "corp_languages", english);
    const multilingual = async () => (await mixed.hybridCandidates("drainage budget", unit([1, 0, 0, 0]), 5))!.multilingual;
    try {
      assert.equal(await multilingual(), false, "19 English passages");
      await mixed.add([{ id: "chk_ms1", documentId: "doc_ms1", text: "Majlis meluluskan peruntukan saliran untuk daerah itu selepas banjir monsun.", vector: unit([1, 0.5, 0, 0]) }]);
      assert.equal(await multilingual(), false, "1 Malay passage in 20 (5%)");
      await mixed.add([
        { id: "chk_ms2", documentId: "doc_ms2", text: "Kerja-kerja pembersihan longkang dijalankan oleh pihak berkuasa tempatan setiap bulan.", vector: unit([1, 0.6, 0, 0]) },
        { id: "chk_ms3", documentId: "doc_ms3", text: "Penduduk kampung diminta melaporkan sebarang kerosakan jalan kepada pejabat daerah.", vector: unit([1, 0.7, 0, 0]) },
      ]);
      assert.equal(await multilingual(), true, "3 Malay passages in 22 (14%)");
      await mixed.removeDocument("doc_ms3");
      assert.equal(await multilingual(), false, "2 in 21 (9.5%)");
    } finally {
      await mixed.close();
    }
  });

  it("trusts words by the question's language in one language, and by the cube of their coverage across two", () => {
    const half = { coverage: 0.5, sameLanguage: 0.8 };
    assert.equal(keywordTrust({ ...half, multilingual: false }, "auto"), 0.8);
    assert.equal(keywordTrust({ ...half, multilingual: true }, "auto"), 0.125 * 0.8);
    assert.equal(keywordTrust({ ...half, multilingual: true }, "squared"), 0.25 * 0.8);
    assert.equal(keywordTrust({ ...half, multilingual: true }, "linear"), 0.5 * 0.8);
    assert.equal(keywordTrust({ ...half, multilingual: false }, "language"), 0.8);
    assert.equal(keywordTrust({ ...half, multilingual: true }, "fixed"), 1);
  });

  it("keeps a rare word's only document in a hybrid result, unless the word is a small part of a long question", async () => {
    // Ten passages close to the query vector, none with the word; one far away holds it.
    const close = Array.from({ length: 10 }, (_, i): IndexedChunk => ({ id: `chk_n${i}`, documentId: `doc_n${i}`, text: `Flood relief centre report number ${i} for the district office and the welfare department.`, vector: unit([1, 0.01 * i, 0, 0]) }));
    const rare: IndexedChunk = { id: "chk_r", documentId: "doc_r", text: "Laporan mangsa banjir di Kuala Krai.", vector: unit([0, 0, 0, 1]) };
    const own = await CorpusIndex.open(db, "corp_rare", [...close, rare]);
    try {
      // A fusion that leans on the vector ranking (the default keeps it on the fusion alone).
      const leaning = { method: "convex", vectorWeight: 0.9, keywordTrust: "fixed" } as const;
      const typed = await own.search({ mode: "hybrid", text: "banjir", vector: unit([1, 0, 0, 0]), topK: 3, fusion: leaning });
      assert.ok(typed.some((h) => h.chunkId === "chk_r"), "the one document with the typed word stays in the top 3");
      const long = "How many people were in the district office relief centre report for the welfare department on the worst day of the banjir";
      const asked = await own.search({ mode: "hybrid", text: long, vector: unit([1, 0, 0, 0]), topK: 3 });
      assert.ok(!asked.some((h) => h.chunkId === "chk_r"), "one rare word among many does not push out the passages that match the question");
      assert.equal((await own.search({ mode: "hybrid", text: "banjir", vector: unit([1, 0, 0, 0]), topK: 3, fusion: leaning, keepRareTerms: false })).some((h) => h.chunkId === "chk_r"), false, "the guarantee is what kept it");
    } finally {
      await own.close();
    }
  });

  it("keeps a rare word's passage that neither candidate list reached (found by a SciFact query, which failed with a 500)", async () => {
    // Sixty short passages hold the question's other words and lie close to its vector; the
    // rare word sits once in a long passage further away, so both lists (50 deep) miss it.
    const close = Array.from({ length: 60 }, (_, i): IndexedChunk => ({ id: `chk_c${i}`, documentId: `doc_c${i}`, text: `River gauge station ${i}.`, vector: unit([1, 0.001 * i, 0, 0]) }));
    const filler = Array.from({ length: 100 }, (_, i): IndexedChunk => ({ id: `chk_f${i}`, documentId: `doc_f${i}`, text: `Palm oil prices for week ${i}.`, vector: unit([0, 1, 0.001 * i, 0]) }));
    const words = Array.from({ length: 300 }, (_, i) => `word${i % 40}`).join(" ");
    const rare: IndexedChunk = { id: "chk_r", documentId: "doc_r", text: `${words} zygote ${words}`, vector: unit([0.6, 0, 0, 0.8]) };
    const own = await CorpusIndex.open(db, "corp_beyond", [...close, ...filler, rare]);
    try {
      const plain = await own.search({ mode: "hybrid", text: "river gauge station zygote", vector: unit([1, 0, 0, 0]), topK: 10, keepRareTerms: false });
      assert.ok(!plain.some((h) => h.chunkId === "chk_r"), "the fusion alone does not reach it");
      const hits = await own.search({ mode: "hybrid", text: "river gauge station zygote", vector: unit([1, 0, 0, 0]), topK: 10 });
      const kept = hits.find((h) => h.chunkId === "chk_r");
      assert.ok(kept, "the passage with the rare word is kept");
      assert.equal(kept.documentId, "doc_r");
      // its cosine to the question (0.6), from its stored half floats
      assert.ok(kept.similarity !== null && Math.abs(kept.similarity - 0.6) < 1e-3, `and scored on the vector signal like the others: ${kept.similarity}`);
      assert.equal(hits.length, 10);
    } finally {
      await own.close();
    }
  });

  it("reports the evidence a relevance gate needs: coverage of the question's words and words the corpus never saw", async () => {
    const hits = await index.search({ mode: "hybrid", text: "Kelantan floods December", vector: unit([0.9, 0.2, 0, 0]), topK: 2 });
    const found = await index.evidence("Kelantan floods December", unit([0.9, 0.2, 0, 0]), hits);
    assert.equal(found.keywordCoverage, 1, "one result holds every word");
    assert.equal(found.unknownTermShare, 0);
    assert.ok(found.bestSimilarity! > 0.9 && found.similarityGap! > 0);
    const offTopic = await index.evidence("Who won the 1998 FIFA World Cup?", unit([0, 0, 0, 1]), []);
    assert.equal(offTopic.unknownTermShare, 1, "no passage has any of its words");
    assert.equal(offTopic.keywordCoverage, 0);
    const none = await index.evidence("the and of", null, []);
    assert.equal(none.terms, 0);
    assert.equal(none.keywordCoverage, null);
    assert.equal(none.bestSimilarity, null);
  });
});

describe("CorpusIndex at scale (vector index built in the background)", () => {
  const DIM = 32;
  const TOPICS = 400;
  let seed = 99;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const centres = Array.from({ length: TOPICS }, () => Array.from({ length: DIM }, () => random() - 0.5));
  /** A vector near topic `t`'s centre: corpora cluster by subject, and so do real embeddings. */
  const near = (t: number) => unit(centres[t]!.map((c) => c + (random() - 0.5) * 0.5));
  const N = 24_000; // above the size that gets a vector index
  const many: IndexedChunk[] = Array.from({ length: N }, (_, i) => ({ id: `chk_${i}`, documentId: `doc_${Math.floor(i / 40)}`, terms: `t${i % TOPICS} w${i}`, language: "en", vector: near(i % TOPICS) }));
  let db: LanceDb.Connection;
  let index: CorpusIndex;
  before(async () => {
    db = await lancedb.connect("memory://");
    index = await CorpusIndex.open(db, "corp_scale", many);
  });
  after(() => index.close());

  it("answers exactly while the vector index builds, and through it once built, with the same results as exact search", async () => {
    const queries = Array.from({ length: 20 }, (_, q) => near((q * 37) % TOPICS));
    const exact = await Promise.all(queries.map((vector) => index.search({ mode: "vector", text: "", vector, topK: 10, exact: true })));
    await index.vectorIndexBuilt();
    assert.equal(index.approximate, true, "a 24k-chunk corpus gets a vector index");
    let found = 0;
    for (const [q, vector] of queries.entries()) {
      const hits = await index.search({ mode: "vector", text: "", vector, topK: 10 });
      assert.equal(hits.length, 10);
      const truth = new Set(exact[q]!.map((h) => h.chunkId));
      found += hits.filter((h) => truth.has(h.chunkId)).length;
      // Similarities are the full vectors' (refined), not the quantized codes'.
      for (const hit of hits) {
        const exactHit = exact[q]!.find((h) => h.chunkId === hit.chunkId);
        if (exactHit) assert.ok(Math.abs(exactHit.similarity! - hit.similarity!) < 1e-5);
      }
    }
    assert.ok(found / 200 >= 0.9, `recall@10 ${found / 200}`);
  });

  it("keeps a deep list (a hybrid search's 50 vector candidates) as close to exact search as a short one", async () => {
    await index.vectorIndexBuilt();
    let found = 0;
    for (let q = 0; q < 20; q++) {
      const vector = near((q * 53 + 11) % TOPICS);
      const truth = new Set((await index.search({ mode: "vector", text: "", vector, topK: 50, exact: true })).map((h) => h.chunkId));
      const hits = await index.search({ mode: "vector", text: "", vector, topK: 50 });
      assert.equal(hits.length, 50);
      found += hits.filter((h) => truth.has(h.chunkId)).length;
    }
    assert.ok(found / 1000 >= 0.9, `recall@50 ${found / 1000}`);
  });

  it("finds every chunk of the documents a search is restricted to, whatever partitions they fall in", async () => {
    await index.vectorIndexBuilt();
    const hits = await index.search({ mode: "vector", text: "", vector: near(7), topK: 100, documentIds: ["doc_3", "doc_500"] });
    assert.equal(hits.length, 80);
    assert.deepEqual(new Set(hits.map((h) => h.documentId)), new Set(["doc_3", "doc_500"]));
  });

  it("finds chunks added after the index was built and forgets deleted ones", async () => {
    await index.vectorIndexBuilt();
    const vector = unit(Array.from({ length: DIM }, (_, i) => (i === 3 ? 1 : 0.01)));
    await index.add([{ id: "chk_new", documentId: "doc_new", text: "a late addition about durian", vector }]);
    assert.equal((await index.search({ mode: "vector", text: "", vector, topK: 1 }))[0]?.chunkId, "chk_new");
    assert.equal((await index.search({ mode: "keyword", text: "durian", vector: null, topK: 1 }))[0]?.chunkId, "chk_new");
    await index.removeDocument("doc_new");
    await index.removeDocument("doc_0");
    const after = await index.search({ mode: "vector", text: "", vector, topK: 50 });
    assert.ok(!after.some((h) => h.chunkId === "chk_new" || h.documentId === "doc_0"));
    assert.equal(await index.count(), N - 40);
  });

  it("refuses a chunk whose vector has another dimension", async () => {
    await assert.rejects(index.add([{ id: "chk_bad", documentId: "doc_bad", text: "x", vector: new Float32Array(DIM + 1) }, { id: "chk_bad2", documentId: "doc_bad", text: "y", vector: new Float32Array(DIM) }]), /dimensions/);
  });
});
