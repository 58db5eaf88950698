import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { attributesOf, matchesFilter, type AttributeFilter } from "./attribute-filter.js";

const doc = { lang: "ms", year: 2023, draft: false, date: "2024-03-01" };

describe("attribute filters", () => {
  it("compares by type and value, an absent attribute matching only ne and nin", () => {
    const yes: AttributeFilter[] = [
      { type: "eq", key: "lang", value: "ms" },
      { type: "ne", key: "lang", value: "en" },
      { type: "eq", key: "draft", value: false },
      { type: "gt", key: "year", value: 2022 },
      { type: "gte", key: "year", value: 2023 },
      { type: "lt", key: "date", value: "2024-12-31" },
      { type: "lte", key: "year", value: 2023 },
      { type: "in", key: "year", value: [2022, 2023] },
      { type: "nin", key: "lang", value: ["en", "zh"] },
      { type: "ne", key: "missing", value: "x" },
      { type: "nin", key: "missing", value: ["x"] },
    ];
    for (const f of yes) assert.equal(matchesFilter(f, doc), true, JSON.stringify(f));
    const no: AttributeFilter[] = [
      { type: "eq", key: "year", value: "2023" },
      { type: "gt", key: "year", value: "2000" },
      { type: "gt", key: "draft", value: true },
      { type: "eq", key: "missing", value: "x" },
      { type: "lt", key: "missing", value: 1 },
      { type: "in", key: "missing", value: ["x"] },
      { type: "in", key: "lang", value: ["en"] },
    ];
    for (const f of no) assert.equal(matchesFilter(f, doc), false, JSON.stringify(f));
  });

  it("combines with and / or, nested", () => {
    const f: AttributeFilter = {
      type: "and",
      filters: [
        { type: "eq", key: "lang", value: "ms" },
        { type: "or", filters: [{ type: "gt", key: "year", value: 2030 }, { type: "eq", key: "draft", value: false }] },
      ],
    };
    assert.equal(matchesFilter(f, doc), true);
    assert.equal(matchesFilter(f, { ...doc, draft: true }), false);
  });

  it("takes only scalar metadata as attributes", () => {
    assert.deepEqual(attributesOf({ a: "x", b: 1, c: true, d: null, e: { f: 1 }, g: [1], h: Number.NaN }), { a: "x", b: 1, c: true });
  });
});
