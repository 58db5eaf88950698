import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keywordQuery } from "./keyword-query.js";

describe("keywordQuery", () => {
  it("keeps the subject words of English and Malay questions, and codes intact", () => {
    assert.equal(keywordQuery("What was the ridership of the Laluan Bayu LRT line in Q2 2024?"), "ridership laluan bayu lrt line q2 2024");
    assert.equal(keywordQuery("Berapakah jumlah mangsa yang ditempatkan di PPS-SGT-017?"), "jumlah mangsa ditempatkan pps-sgt-017");
  });

  it("falls back to the question when only function words remain", () => {
    assert.equal(keywordQuery("What is it?"), "What is it?");
  });
});
