import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bestSetting, crossValidate, documentRanking, settingKey, tuningCandidates } from "./search-tuning.js";

describe("search tuning", () => {
  it("tries the settings in force first, then both single modes and the convex grid, each once", () => {
    const inForce = { search: "hybrid" as const, fusion: { method: "convex" as const, vectorWeight: 0.67 } };
    const all = tuningCandidates(inForce);
    assert.equal(settingKey(all[0]!), "hybrid:convex:0.67:auto");
    assert.equal(all.length, 1 + 2 + 9 * 5);
    assert.equal(new Set(all.map(settingKey)).size, all.length);
    // Settings in force that the grid holds are not tried twice (an unset trust is `auto`).
    assert.equal(tuningCandidates({ search: "hybrid", fusion: { method: "convex", vectorWeight: 0.5 } }).length, 2 + 45);
    assert.equal(tuningCandidates({ search: "keyword", fusion: null }).length, 2 + 45);
    assert.equal(tuningCandidates({ search: "hybrid", fusion: { method: "rrf", vectorWeight: 0.5 } }).length, 3 + 45, "another method is its own setting");
  });

  it("chooses the best mean, keeping the first on a tie", () => {
    const scores = [
      [0.5, 0.5, 0.5, 0.5],
      [1, 0, 0.5, 0.5],
      [0, 1, 1, 0],
    ];
    assert.equal(bestSetting(scores, [0, 1, 2, 3]), 0, "all three tie at 0.5: the settings in force stay");
    assert.equal(bestSetting(scores, [0]), 1);
    assert.equal(bestSetting(scores, [1, 2]), 2);
  });

  it("scores the choice on the half it was not made on", () => {
    // Setting 1 wins on even questions and fails on odd ones; setting 2 the reverse: each
    // half's choice is wrong on the other, so held out, tuning loses to the settings in force.
    const overfit = [
      [0.6, 0.6, 0.6, 0.6],
      [1, 0, 1, 0],
      [0, 1, 0, 1],
    ];
    assert.deepEqual(crossValidate(overfit), { tuned: 0, current: 0.6 });
    // A setting better everywhere is chosen on both halves and holds.
    const real = [
      [0.5, 0.4, 0.5, 0.4],
      [0.9, 0.8, 0.7, 0.6],
    ];
    const held = crossValidate(real);
    assert.ok(Math.abs(held.tuned - 0.75) < 1e-12);
    assert.ok(Math.abs(held.current - 0.45) < 1e-12);
  });

  it("ranks documents by their best passage", () => {
    assert.deepEqual(documentRanking([{ documentId: "b" }, { documentId: "a" }, { documentId: "b" }, { documentId: "c" }]), ["b", "a", "c"]);
  });
});
