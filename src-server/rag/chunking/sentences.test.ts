import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sentenceSpans } from "./sentences.js";

const split = (text: string): string[] => sentenceSpans(text).map((s) => text.slice(s.start, s.end));

describe("sentenceSpans", () => {
  it("splits English sentences and trims surrounding whitespace", () => {
    assert.deepEqual(split("  The river rose.  Was anyone hurt? No one was hurt!\n"), ["The river rose.", "Was anyone hurt?", "No one was hurt!"]);
  });

  it("returns offsets shifted by the given base", () => {
    const text = "One sentence here. Another one there.";
    const spans = sentenceSpans(text, 100);
    assert.deepEqual(spans, [
      { start: 100, end: 118 },
      { start: 119, end: 137 },
    ]);
  });

  it("keeps English abbreviations, initials and decimals inside sentences", () => {
    assert.deepEqual(split("Dr. Smith met Mr. Tan at 3.30 p.m. on Jan. 5. J. R. Tolkien was not there. Prices rose 2.5 percent."), [
      "Dr. Smith met Mr. Tan at 3.30 p.m. on Jan. 5.",
      "J. R. Tolkien was not there.",
      "Prices rose 2.5 percent.",
    ]);
  });

  it("keeps Malay abbreviations inside sentences", () => {
    const text =
      "Dr. Ahmad bin Hj. Ali tinggal di No. 5, Jln. Ampang, Kuala Lumpur. Beliau bekerja di Syarikat Maju Sdn. Bhd. sejak tahun 2010. " +
      "Bil. 3 mesyuarat dipengerusikan oleh Dato' Seri Hjh. Aminah, Tel. 03-1234567. Adakah beliau hadir?";
    assert.deepEqual(split(text), [
      "Dr. Ahmad bin Hj. Ali tinggal di No. 5, Jln. Ampang, Kuala Lumpur.",
      "Beliau bekerja di Syarikat Maju Sdn. Bhd. sejak tahun 2010.",
      "Bil. 3 mesyuarat dipengerusikan oleh Dato' Seri Hjh. Aminah, Tel. 03-1234567.",
      "Adakah beliau hadir?",
    ]);
  });

  it("glues very short segments to the next sentence", () => {
    assert.deepEqual(split("Ya. Saya setuju dengan cadangan itu. 1. Langkah pertama."), ["Ya. Saya setuju dengan cadangan itu.", "1. Langkah pertama."]);
  });

  it("joins wrapped lines but never glues across a blank line", () => {
    assert.deepEqual(split("The river rose\nafter the storm. Nobody\r\nwas hurt."), ["The river rose\nafter the storm.", "Nobody\r\nwas hurt."]);
    assert.deepEqual(split("Ringkasan.\n1. Pertama.\n\nDr.\n\nAhmad"), ["Ringkasan.", "1. Pertama.", "Dr.", "Ahmad"]);
    assert.deepEqual(split("Dr.\nAhmad datang. Ya.\nSaya setuju."), ["Dr.\nAhmad datang.", "Ya.", "Saya setuju."]);
  });

  it("stays linear on long runs of wrapped lines without punctuation", () => {
    const text = Array.from({ length: 5000 }, (_, i) => `baris ${i} tanpa tanda baca sama sekali`).join("\n");
    const spans = sentenceSpans(text);
    assert.deepEqual(spans, [{ start: 0, end: text.length }]);
  });

  it("returns nothing for blank text and one span for text without punctuation", () => {
    assert.deepEqual(sentenceSpans(" \n\t "), []);
    assert.deepEqual(split("tiada tanda baca di sini"), ["tiada tanda baca di sini"]);
  });
});
