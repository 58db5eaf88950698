import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CONTEXT_MAX_TOKENS, fitContext, passageContext, withContext } from "./passage-context.js";

const words = (text: string) => (text ? text.split(/\s+/).length : 0);

describe("passageContext", () => {
  it("gives a passage the title and its enclosing headings, outermost first", () => {
    assert.equal(passageContext("Laporan Banjir Kelantan 2022", ["Laporan Banjir Kelantan 2022", "3. Pemindahan", "Pusat pemindahan"], "Seramai 1,200 mangsa ditempatkan di 14 buah sekolah."), "Laporan Banjir Kelantan 2022 › 3. Pemindahan › Pusat pemindahan");
  });

  it("lowers a title or heading written in capitals, each on its own, and keeps short acronym headings", () => {
    assert.equal(
      passageContext("LAPORAN BANJIR KELANTAN 2022", ["BAB 3", "PUSAT PEMINDAHAN SEMENTARA DI KOTA BHARU", "Sekolah"], "Seramai 1,200 mangsa ditempatkan di 14 buah sekolah."),
      "laporan banjir kelantan 2022 › BAB 3 › pusat pemindahan sementara di kota bharu",
    );
  });

  it("leaves out what the passage already says: the opening passage's title, a section's own heading", () => {
    assert.equal(passageContext("Flood relief plan", [], "Flood relief plan\n\nShelters open at 6 pm."), "");
    assert.equal(passageContext("Flood relief plan", ["Shelters"], "Shelters\n\nThe  school halls   open at 6 pm."), "Flood relief plan");
    // Case and spacing do not matter for that test.
    assert.equal(passageContext("Flood  Relief plan", [], "FLOOD RELIEF PLAN. Shelters open."), "");
  });

  it("is empty for a passage of a document with neither title nor headings", () => {
    assert.equal(passageContext(null, [], "Any text."), "");
    assert.equal(passageContext("  ", ["", " "], "Any text."), "");
  });
});

describe("fitContext", () => {
  it("keeps a context that fits, drops the innermost headings first, then words from the end", () => {
    assert.equal(fitContext("Title › Section › Part", 10, words), "Title › Section › Part");
    assert.equal(fitContext("Title › Section › Part", 3, words), "Title › Section");
    assert.equal(fitContext("A long title of seven words here › Section", 4, words), "A long title of");
    assert.equal(fitContext("Title", 0, words), "");
    assert.equal(fitContext("", CONTEXT_MAX_TOKENS, words), "");
  });

  it("never returns more tokens than allowed, whatever the tokenizer", () => {
    const chars = (text: string) => text.length;
    for (let max = 1; max < 40; max++) assert.ok(chars(fitContext("Annual report 2024 › Finance and operations › Capital spending", max, chars)) <= max);
  });
});

describe("withContext", () => {
  it("puts the context line and a blank line before the text, or leaves the text alone", () => {
    assert.equal(withContext("Title › Section", "Body."), "Title › Section\n\nBody.");
    assert.equal(withContext("", "Body."), "Body.");
    assert.equal(withContext(undefined, "Body."), "Body.");
  });
});
