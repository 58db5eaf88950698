import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { citedIndexes, groundedMessages, looksMalay, notInCorpusAnswer } from "./grounded-prompt.js";

describe("grounded prompt", () => {
  it("numbers the sources with where they come from, and asks for [n] citations", () => {
    const [system, user] = groundedMessages("Bila banjir?", [
      { index: 1, filename: "a.pdf", pageStart: 3, pageEnd: 3, headingPath: ["Laporan", "Banjir"], text: "Banjir pada Disember." },
      { index: 2, filename: "b.md", pageStart: null, pageEnd: null, headingPath: [], text: "Other." },
      { index: 3, filename: "c.pdf", pageStart: 1, pageEnd: 2, headingPath: [], text: "Across." },
    ]);
    assert.match(system!.content as string, /\[1\]/);
    assert.match(user!.content as string, /\[1\] \(a\.pdf, page 3, Laporan > Banjir\)\nBanjir pada Disember\.\n\n\[2\] \(b\.md\)\nOther\.\n\n\[3\] \(c\.pdf, pages 1–2\)\nAcross\.\n\nQuestion: Bila banjir\?$/);
  });

  it("finds the sources an answer cites, ignoring numbers out of range", () => {
    assert.deepEqual([...citedIndexes("Floods came in December [1][3], then again [2, 3]. See [9] and [0].", 3)].sort(), [1, 2, 3]);
    assert.equal(citedIndexes("No citations here.", 3).size, 0);
  });

  it("answers 'not in the corpus' in the question's language", () => {
    assert.ok(looksMalay("Siapakah pengarang novel Salina?"));
    assert.ok(looksMalay("Berapakah jumlah mangsa banjir di Kelantan pada tahun 2022?"));
    assert.ok(!looksMalay("What is the melting point of tungsten?"));
    // Few function words, many names and numbers: the earlier marker count called this English.
    assert.ok(looksMalay("Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?"));
    assert.match(notInCorpusAnswer("Apakah resipi kek ini?"), /^Korpus ini tidak mengandungi/);
    assert.match(notInCorpusAnswer("Who wrote this?"), /^The corpus does not contain/);
  });
});
