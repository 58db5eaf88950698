import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { CitationMarkers, stripCitationMarkers } from "./citation-markers.js";

describe("citation markers to annotations", () => {
  it("takes markers out of the text and notes their sources where they stood", () => {
    const { text, annotations } = stripCitationMarkers("Pekerja mendapat 18 hari cuti [1]. Baki dibawa ke hadapan [2][3], hingga 7 hari [1, 3].", 3);
    assert.equal(text, "Pekerja mendapat 18 hari cuti. Baki dibawa ke hadapan, hingga 7 hari.");
    assert.deepEqual(annotations, [
      { index: 29, source: 1 },
      { index: 53, source: 2 },
      { index: 53, source: 3 },
      { index: 68, source: 1 },
      { index: 68, source: 3 },
    ]);
    assert.equal(text.slice(0, 29), "Pekerja mendapat 18 hari cuti");
  });

  it("leaves brackets that are not markers of a source as written", () => {
    assert.equal(stripCitationMarkers("See [4] and [note] and [0] and a[", 3).text, "See [4] and [note] and [0] and a[");
    assert.equal(stripCitationMarkers("Array [1,", 3).text, "Array [1,");
  });

  it("gives the same text and annotations however the stream is cut", () => {
    const piece = fc.constantFrom("Banjir ", "melanda ", "[1]", "[2]", " ", ".", "[", "1", "]", ",", "[1, 2]", "[9]", "x", "  ");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 10 }), (pieces, cuts) => {
        const whole = pieces.join("");
        const expected = stripCitationMarkers(whole, 2);
        const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
        const markers = new CitationMarkers(2);
        let out = "";
        let last = 0;
        for (const p of [...points, whole.length]) {
          out += markers.feed(whole.slice(last, p));
          last = p;
        }
        out += markers.flush();
        assert.equal(out, expected.text);
        assert.deepEqual(markers.annotations, expected.annotations);
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});
