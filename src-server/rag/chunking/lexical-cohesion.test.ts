import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LEXICAL_DIMENSIONS, lexicalVectors } from "./lexical-cohesion.js";
import { cosine as denseCosine, gapDistances, toDense, type SparseVector } from "./semantic-breakpoints.js";
import { TWO_TOPICS_EN, TWO_TOPICS_MS } from "../../../test/helpers/chunking-documents.js";

const norm = (v: SparseVector) => Math.sqrt(v.values.reduce((s, x) => s + x * x, 0));
const cosine = (a: SparseVector, b: SparseVector) => denseCosine(toDense(a), toDense(b));

describe("lexicalVectors", () => {
  for (const [language, sentences] of [
    ["English", TWO_TOPICS_EN],
    ["Malay", TWO_TOPICS_MS],
  ] as const) {
    it(`puts the largest distance of a two-topic ${language} text at the shift`, () => {
      const distances = gapDistances(lexicalVectors(sentences), 2);
      const largest = distances.reduce<number>((best, d, i) => (d !== null && d > (distances[best] ?? -1) ? i : best), 1);
      assert.equal(largest, 6, distances.map((d) => d?.toFixed(2)).join(" "));
      // Within a topic the vocabulary is shared; across the shift it is not.
      assert.ok(distances[6]! > 0.9, `shift ${distances[6]}`);
      assert.ok(distances[3]! < 0.9, `within ${distances[3]}`);
    });
  }

  it("counts inflections of one word as the same word (the keyword index's stems)", () => {
    const english = lexicalVectors(["The rivers flooded the villages.", "A river floods a village."]);
    assert.ok(cosine(english[0]!, english[1]!) > 0.99, `English ${cosine(english[0]!, english[1]!)}`);
    // banjir/kebanjiran and dipindahkan share stems; the third sentence shares none.
    const [victims, officials, prices] = lexicalVectors(["Mangsa banjir dipindahkan ke sekolah.", "Pegawai kebanjiran dipindahkan.", "Harga minyak sawit meningkat."]);
    assert.ok(cosine(victims!, officials!) > 0.3, `Malay ${cosine(victims!, officials!)}`);
    assert.ok(cosine(victims!, prices!) < 0.05, `unrelated ${cosine(victims!, prices!)}`);
  });

  it("weights words by their rarity in the document", () => {
    // "kelantan" is in every sentence: it says nothing about where the topic shifts.
    const [a, b, c] = lexicalVectors(["Kelantan floods rose.", "Kelantan floods fell.", "Kelantan palm prices rose."]);
    assert.ok(cosine(a!, b!) > cosine(a!, c!), "shared rare word beats shared common word");
  });

  it("gives unit vectors, and a zero vector to a sentence of function words only", () => {
    const vectors = lexicalVectors(["Floods in Kelantan.", "It is what it is, and yang itu.", ""]);
    assert.equal(vectors.length, 3);
    for (const v of vectors) assert.equal(v.length, LEXICAL_DIMENSIONS);
    assert.ok(Math.abs(norm(vectors[0]!) - 1) < 1e-6);
    assert.equal(norm(vectors[1]!), 0);
    assert.equal(norm(vectors[2]!), 0);
  });

  it("gives the distances its dense form gives, exactly", () => {
    const sentences = [...TWO_TOPICS_EN, "It is.", ...TWO_TOPICS_MS];
    const sparse = lexicalVectors(sentences);
    for (const v of sparse) assert.ok(v.indexes.length < 20, "only the sentence's own dimensions are kept");
    assert.deepEqual(gapDistances(sparse, 2), gapDistances(sparse.map(toDense), 2));
    assert.deepEqual(gapDistances([sparse[0]!, null, ...sparse.slice(1, 5)], 3), gapDistances([toDense(sparse[0]!), null, ...sparse.slice(1, 5).map(toDense)], 3));
  });

  it("handles no texts", () => {
    assert.deepEqual(lexicalVectors([]), []);
  });
});
