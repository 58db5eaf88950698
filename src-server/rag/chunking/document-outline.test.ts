import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DocumentOutline } from "./document-outline.js";
import { h, makeDocument, p } from "../../../test/helpers/chunking-documents.js";

describe("DocumentOutline", () => {
  it("tracks heading paths by level, popping deeper and equal levels", () => {
    const doc = makeDocument([h(1, "# A"), h(3, "### A.x.1"), p("one"), h(2, "## A.2 ##"), p("two"), h(1, "B"), p("three")]);
    const outline = new DocumentOutline(doc);
    const pathAt = (needle: string) => {
      const at = doc.text.indexOf(needle);
      return outline.headingPath(at, at + needle.length);
    };
    assert.deepEqual(pathAt("one"), ["A", "A.x.1"]);
    assert.deepEqual(pathAt("two"), ["A", "A.2"]);
    assert.deepEqual(pathAt("three"), ["B"]);
    assert.deepEqual(outline.headingPath(0, doc.text.length), ["A", "A.x.1"], "a range opening with headings takes the path at its first content");
  });

  it("defaults a missing heading level to 1 and ignores whitespace between blocks", () => {
    const doc = makeDocument([{ kind: "heading", text: "Tanpa aras" }, p("isi")]);
    const outline = new DocumentOutline(doc);
    assert.equal(outline.blocks[0]!.level, 1);
    assert.deepEqual(outline.headingPath(doc.text.length - 3, doc.text.length), ["Tanpa aras"]);
    assert.deepEqual(outline.pages(0, doc.text.length), { pageStart: null, pageEnd: null });
  });

  it("sorts, trims and de-overlaps blocks, dropping empty ones", () => {
    const text = "  Satu.  \n\nDua.\n\n   ";
    const outline = new DocumentOutline({
      format: "txt",
      text,
      blocks: [
        { kind: "paragraph", text: "Dua.", page: null, start: 11, end: 15 },
        { kind: "paragraph", text: text.slice(0, 13), page: null, start: 0, end: 13 },
        { kind: "paragraph", text: "   ", page: null, start: 17, end: 20 },
      ],
      pageCount: null,
      title: null,
      warnings: [],
    });
    assert.deepEqual(
      outline.blocks.map((b) => text.slice(b.start, b.end)),
      ["Satu.  \n\nDu", "a."],
    );
  });

  it("reports the page range of the blocks a range overlaps", () => {
    const doc = makeDocument([p("satu", 1), p("dua", 2), p("tiga", 4)], "pdf");
    const outline = new DocumentOutline(doc);
    assert.deepEqual(outline.pages(0, doc.text.length), { pageStart: 1, pageEnd: 4 });
    assert.deepEqual(outline.pages(doc.text.indexOf("dua"), doc.text.indexOf("dua") + 2), { pageStart: 2, pageEnd: 2 });
    assert.deepEqual(outline.pages(doc.text.indexOf("dua"), doc.text.indexOf("tiga") + 1), { pageStart: 2, pageEnd: 4 });
  });

  it("records where each page begins inside a range", () => {
    const doc = makeDocument([p("satu", 1), p("satu lagi", 1), p("dua", 2), p("tiga", 4)], "pdf");
    const outline = new DocumentOutline(doc);
    const from = doc.text.indexOf("lagi");
    assert.deepEqual(outline.pageBreaks(from, doc.text.length), [
      [0, 1],
      [doc.text.indexOf("dua") - from, 2],
      [doc.text.indexOf("tiga") - from, 4],
    ]);
    assert.deepEqual(outline.pageBreaks(doc.text.indexOf("dua"), doc.text.indexOf("dua") + 3), [[0, 2]]);
    assert.deepEqual(new DocumentOutline(makeDocument([p("tiada halaman")])).pageBreaks(0, 5), []);
  });
});
