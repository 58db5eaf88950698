import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pageAt } from "./page-at.js";

describe("pageAt", () => {
  const chunk = { pageStart: 1, pageEnd: 3, pageBreaks: [[0, 1], [40, 2], [90, 3]] as [number, number][] };

  it("answers the page a position of the chunk text is on", () => {
    assert.equal(pageAt(chunk, 0), 1);
    assert.equal(pageAt(chunk, 39), 1);
    assert.equal(pageAt(chunk, 40), 2);
    assert.equal(pageAt(chunk, 89), 2);
    assert.equal(pageAt(chunk, 90), 3);
    assert.equal(pageAt(chunk, 10_000), 3);
    assert.equal(pageAt(chunk, -5), 1);
  });

  it("answers null without pages, and the first page for chunks stored before page breaks", () => {
    assert.equal(pageAt({ pageStart: null, pageEnd: null, pageBreaks: [] }, 3), null);
    assert.equal(pageAt({ pageStart: null, pageEnd: null }, 3), null);
    assert.equal(pageAt({ pageStart: 4, pageEnd: 5 }, 100), 4);
  });
});
