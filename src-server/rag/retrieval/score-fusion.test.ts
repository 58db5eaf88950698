import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fuseScores, type FusionCandidate } from "./score-fusion.js";

const candidates: FusionCandidate[] = [
  { id: "a", similarity: 0.9, keyword: 0 },
  { id: "b", similarity: 0.8, keyword: 6 },
  { id: "c", similarity: 0.7, keyword: 12 },
  { id: "d", similarity: 0.7, keyword: 0 },
];
const scores = (fused: { id: string; score: number }[]) => Object.fromEntries(fused.map((f) => [f.id, f.score]));

describe("fuseScores", () => {
  it("convex: similarity min–max scaled, BM25 over the best, weighed", () => {
    const s = scores(fuseScores(candidates, { method: "convex", vectorWeight: 0.7 }));
    assert.ok(Math.abs(s.a! - 0.7) < 1e-9);
    assert.ok(Math.abs(s.b! - (0.7 * 0.5 + 0.3 * 0.5)) < 1e-9);
    assert.ok(Math.abs(s.c! - 0.3) < 1e-9, "bottom on similarity, top on keywords");
    assert.equal(s.d, 0);
  });

  it("weight 1 ranks by similarity alone, weight 0 by keywords alone", () => {
    assert.deepEqual(fuseScores(candidates, { method: "convex", vectorWeight: 1 }).map((f) => f.id).slice(0, 2), ["a", "b"]);
    assert.deepEqual(fuseScores(candidates, { method: "convex", vectorWeight: 0 }).map((f) => f.id).slice(0, 2), ["c", "b"]);
    assert.deepEqual(fuseScores(candidates, { method: "dbsf", vectorWeight: 0 }).map((f) => f.id).slice(0, 2), ["c", "b"]);
  });

  it("rrf: rewards a candidate high in both over one high in a single list", () => {
    const fused = fuseScores(candidates.map((c) => (c.id === "c" ? { ...c, similarity: 0.6 } : c)), { method: "rrf", vectorWeight: 0.5 });
    assert.equal(fused[0]!.id, "b");
    assert.ok(Math.abs(fused[0]!.score - (1 / 62 + 1 / 62)) < 1e-12);
  });

  it("dbsf: scales each signal by its spread into [0, 1]", () => {
    const fused = fuseScores(candidates, { method: "dbsf", vectorWeight: 0.5 });
    assert.ok(fused.every((f) => f.score >= 0 && f.score <= 1));
    assert.equal(scores(fused).d! < scores(fused).b!, true);
  });

  it("copes with no candidates and with one", () => {
    assert.deepEqual(fuseScores([], { method: "convex", vectorWeight: 0.5 }), []);
    assert.deepEqual(fuseScores([{ id: "x", similarity: 0.2, keyword: 0 }], { method: "convex", vectorWeight: 0.5 }), [{ id: "x", score: 0.5 }]);
  });
});
