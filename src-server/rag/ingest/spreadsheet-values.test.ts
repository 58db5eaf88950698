import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinFormat, formatKind, isoDateTime, numberText } from "./spreadsheet-values.js";

describe("spreadsheet values", () => {
  it("shows serial numbers as dates and times in both date systems, percentages with their sign, numbers as written", () => {
    assert.equal(numberText("45366.5", "datetime", false), "2024-03-15 12:00");
    assert.equal(numberText("45366", "date", false), "2024-03-15");
    assert.equal(numberText("43904", "date", true), "2024-03-15", "the 1904 date system");
    assert.equal(numberText("1", "date", false), "1900-01-01", "before Excel's phantom 29 February 1900");
    assert.equal(numberText("0.75", "time", false), "18:00");
    assert.equal(numberText("0.125", "percent", false), "12.5%");
    assert.equal(numberText("1234.5", "general", false), "1234.5");
    assert.equal(isoDateTime("2024-03-15T00:00:00"), "2024-03-15");
  });

  it("tells dates, times and percentages from the number format", () => {
    assert.deepEqual(["yyyy-mm-dd", "d/m/yy h:mm", "h:mm:ss", "[h]:mm", "0.00%", '"Day" 0', "#,##0.00", "mmm-yy", "General", "[Red]0.0"].map(formatKind), ["date", "datetime", "time", "time", "percent", "general", "general", "date", "general", "general"]);
    assert.deepEqual([14, 22, 21, 10, 0, 49].map(builtinFormat), ["date", "datetime", "time", "percent", "general", "general"]);
  });
});
