import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { convexScoreFusion } from "./score-fusion.js";

describe("convexScoreFusion", () => {
  it("normalises each list and weighs them", () => {
    const fused = convexScoreFusion(
      [{ id: "a", score: 0.9 }, { id: "b", score: 0.8 }, { id: "c", score: 0.7 }],
      [{ id: "c", score: 12 }, { id: "d", score: 3 }],
      0.7,
    );
    const byId = Object.fromEntries(fused.map((f) => [f.id, f.score]));
    assert.ok(Math.abs(byId.a! - 0.7) < 1e-9);
    assert.ok(Math.abs(byId.b! - 0.35) < 1e-9);
    assert.ok(Math.abs(byId.c! - 0.3) < 1e-9, "bottom of the vector list, top of the keyword list");
    assert.equal(byId.d, 0);
    assert.equal(fused[0]?.id, "a");
  });

  it("copes with empty and single-item lists", () => {
    assert.deepEqual(convexScoreFusion([], [], 0.5), []);
    assert.deepEqual(convexScoreFusion([{ id: "x", score: 0.2 }], [], 0.5), [{ id: "x", score: 0.5 }]);
  });
});
