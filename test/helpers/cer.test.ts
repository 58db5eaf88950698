import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { characterErrorRate, editDistance, normaliseText, wordErrorRate } from "./cer.js";

describe("OCR error rates", () => {
  it("normalises: NFC, whitespace runs to one space, trimmed", () => {
    // "é" as e + combining acute becomes the one code point.
    assert.equal(normaliseText("  Caf\u0065\u0301\n\n\tdi  Klang \r\n"), "Caf\u00e9 di Klang");
    assert.equal(normaliseText("\n \t"), "");
  });

  it("counts insertions, deletions and substitutions", () => {
    const chars = (s: string) => Array.from(s);
    assert.equal(editDistance(chars("kitten"), chars("sitting")), 3);
    assert.equal(editDistance(chars("sitting"), chars("kitten")), 3);
    assert.equal(editDistance(chars(""), chars("air")), 3);
    assert.equal(editDistance(chars("air"), chars("air")), 0);
    assert.equal(editDistance(["air", "di", "Klang"], ["air", "Klang"]), 1);
  });

  it("divides by the reference's length, after normalising both sides", () => {
    assert.equal(characterErrorRate("Bekalan air", "Bekalan  air\n"), 0);
    assert.equal(characterErrorRate("Bekalan air", "Bekalan alr"), 1 / 11);
    // Code points, not UTF-16 units: an emoji is one character.
    assert.equal(characterErrorRate("a😀", "a"), 1 / 2);
    assert.equal(characterErrorRate("abc", "abcdefghi"), 2);
    assert.equal(wordErrorRate("water supply in Klang", "water suppiy in\nKlang"), 1 / 4);
    assert.equal(wordErrorRate("water supply", "supply"), 1 / 2);
  });

  it("an empty reference: 0 when nothing was read, 1 when something was", () => {
    assert.equal(characterErrorRate(" ", ""), 0);
    assert.equal(characterErrorRate("", "noise"), 1);
    assert.equal(wordErrorRate("", ""), 0);
    assert.equal(wordErrorRate("\n", "noise"), 1);
  });
});
