import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ndcgAt, recallAt } from "./ir-metrics.js";

describe("ranking metrics", () => {
  it("computes binary nDCG@k against the ideal ranking", () => {
    assert.equal(ndcgAt(["a", "b"], new Set(["a"]), 10), 1);
    // Relevant at rank 2 of 1 relevant: (1/log2 3) / 1.
    assert.equal(ndcgAt(["x", "a"], new Set(["a"]), 10), 1 / Math.log2(3));
    // Two relevant, one found at rank 1: 1 / (1 + 1/log2 3).
    assert.equal(ndcgAt(["a", "x"], new Set(["a", "b"]), 10), 1 / (1 + 1 / Math.log2(3)));
    assert.equal(ndcgAt(["x", "y", "a"], new Set(["a"]), 2), 0, "beyond k counts nothing");
    assert.equal(ndcgAt([], new Set(), 10), 0);
  });
  it("computes recall@k", () => {
    assert.equal(recallAt(["a", "x", "b"], new Set(["a", "b", "c", "d"]), 100), 0.5);
    assert.equal(recallAt(["a", "x", "b"], new Set(["a", "b"]), 2), 0.5);
  });
});
