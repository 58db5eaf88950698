import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { analyzeChunk, analyzeQuery, detectLanguage, tokenize } from "./keyword-analysis.js";
import { malayStem } from "./malay-stemmer.js";

describe("Malay light stemmer", () => {
  it("conflates a root with its inflections", () => {
    const cases: Record<string, string[]> = {
      banjir: ["banjir", "kebanjiran", "dibanjiri", "banjirnya"],
      besar: ["besar", "diperbesarkan", "terbesar"],
      ajar: ["mengajar", "pelajar", "belajar", "pengajaran"],
      kerja: ["bekerja", "pekerja", "kerjanya"],
      sapu: ["menyapu", "sapu"],
      tani: ["pertanian"],
      raja: ["kerajaan"],
      selamat: ["menyelamatkan", "selamat"],
      buat: ["dibuat", "buat", "buatlah"],
    };
    for (const [root, words] of Object.entries(cases)) for (const word of words) assert.equal(malayStem(word), root, word);
  });

  it("leaves short words, codes and numbers alone", () => {
    for (const word of ["dia", "diri", "mangsa", "ke", "pps", "q2", "2024"]) assert.equal(malayStem(word), word);
  });
});

describe("keyword analysis", () => {
  it("tokenizes to folded lower-case words and drops possessives", () => {
    assert.deepEqual(tokenize("Malaysia's naïve PPS-SGT-017 (Q2, 2024)"), ["malaysia", "naive", "pps", "sgt", "017", "q2", "2024"]);
  });

  it("tells Malay from English by function words, English when there are none", () => {
    assert.equal(detectLanguage(tokenize("Banjir besar melanda Kelantan pada bulan Disember dan ramai mangsa dipindahkan")), "ms");
    assert.equal(detectLanguage(tokenize("The floods displaced thousands of residents in Kelantan")), "en");
    assert.equal(detectLanguage(tokenize("KLX-2291 Kelantan 2014")), "en");
  });

  it("stems a chunk in its own language and drops function words", () => {
    assert.deepEqual(analyzeChunk("The flooding displaced residents of the villages"), { terms: "flood displac resid villag", language: "en" });
    assert.deepEqual(analyzeChunk("Mangsa banjir yang dipindahkan ke pusat pemindahan"), { terms: "mangsa banjir pindah pusat indah", language: "ms" });
  });

  it("asks for both stems of a question's words unless its language is clear", () => {
    assert.deepEqual(analyzeQuery("flooding"), ["flood", "flooding"]);
    assert.deepEqual(analyzeQuery("How many residents were displaced by flooding?"), ["resid", "displac", "flood"]);
    assert.deepEqual(analyzeQuery("Berapakah jumlah mangsa yang dipindahkan?"), ["jumlah", "mangsa", "pindah"]);
    assert.deepEqual(analyzeQuery("What is it?"), [], "only function words: nothing to match on");
  });

  it("matches a question to chunks across inflections, in both languages", () => {
    const chunk = analyzeChunk("Kebanjiran di Kelantan menyebabkan ribuan penduduk dipindahkan").terms.split(" ");
    for (const term of analyzeQuery("banjir pindah")) if (term === "banjir" || term === "pindah") assert.ok(chunk.includes(term), term);
    const english = analyzeChunk("Residents were evacuated after the river flooded").terms.split(" ");
    assert.ok(analyzeQuery("evacuation of residents").every((t) => english.includes(t) || !["evacu", "resid"].includes(t)));
    assert.ok(english.includes("evacu") && analyzeQuery("evacuation").includes("evacu"));
  });
});
