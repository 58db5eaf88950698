import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chunkDocument } from "./chunk-document.js";
import { assertValidChunks, englishReport, fakeCountTokens, fakeDeps, fakeEmbed, h, makeDocument, malayReport, options, p } from "../../../test/helpers/chunking-documents.js";
import type { ChunkingStrategy } from "./types.js";

const STRATEGIES: ChunkingStrategy[] = ["semantic", "fixed", "paragraph"];

/** A deterministic ~`chars`-character document of headed sections, mixing English and Malay. */
function bigDocument(chars: number) {
  const words = "banjir Kelantan hujan sungai harga minyak sawit eksport river flood price export market rubber padi rice nelayan fishermen".split(" ");
  let seed = 7;
  const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const sentence = (): string => {
    const n = 6 + rand(14);
    const ws = Array.from({ length: n }, () => words[rand(words.length)]!);
    return `${ws.join(" ").replace(/^./u, (c) => c.toUpperCase())}${rand(5) === 0 ? ", kata Dr. Ahmad" : ""}.`;
  };
  const specs = [];
  let size = 0;
  for (let s = 0; size < chars; s++) {
    specs.push(h(2, `Section ${s}`, 1 + Math.floor(s / 3)));
    for (let k = 0; k < 4; k++) {
      const text = Array.from({ length: 3 + rand(6) }, sentence).join(" ");
      specs.push(p(text, 1 + Math.floor(s / 3)));
      size += text.length + 2;
    }
  }
  return makeDocument(specs, "pdf");
}

describe("chunkDocument", () => {
  for (const strategy of STRATEGIES) {
    it(`${strategy}: keeps the contract on an English Markdown report`, async () => {
      const doc = englishReport();
      const opts = options(strategy, { maxTokens: 60, targetTokens: 40, overlapTokens: 8 });
      const chunks = await chunkDocument(doc, opts, fakeDeps());
      assertValidChunks(doc, chunks, opts);
      assert.ok(chunks.length > 3);
      for (const c of chunks) assert.equal(c.pageStart, null);
      assert.deepEqual(chunks[0]!.headingPath, ["Annual Report 2023"]);
    });

    it(`${strategy}: keeps the contract on a Malay PDF report`, async () => {
      const doc = malayReport();
      const opts = options(strategy, { maxTokens: 60, targetTokens: 40, overlapTokens: 8 });
      const chunks = await chunkDocument(doc, opts, fakeDeps());
      assertValidChunks(doc, chunks, opts);
      assert.equal(chunks[0]!.pageStart, 1);
      assert.equal(chunks.at(-1)!.pageEnd, 3);
      for (const c of chunks) assert.ok(c.pageStart !== null && c.pageEnd !== null && c.pageStart <= c.pageEnd);
    });

    it(`${strategy}: a one-block document gives one chunk`, async () => {
      const doc = makeDocument([p("Sebuah dokumen ringkas. Hanya dua ayat.")]);
      const opts = options(strategy);
      const chunks = await chunkDocument(doc, opts, fakeDeps());
      assertValidChunks(doc, chunks, opts);
      assert.equal(chunks.length, 1);
      assert.deepEqual(chunks[0], { index: 0, text: doc.text, start: 0, end: doc.text.length, pageStart: null, pageEnd: null, pageBreaks: [], headingPath: [], tokenCount: 8 });
    });

    it(`${strategy}: a blank document gives no chunks`, async () => {
      assert.deepEqual(await chunkDocument(makeDocument([]), options(strategy), fakeDeps()), []);
      assert.deepEqual(await chunkDocument({ ...makeDocument([]), text: " \n\n " }, options(strategy), fakeDeps()), []);
    });

    it(`${strategy}: a document without blocks is chunked as one paragraph`, async () => {
      const doc = { ...makeDocument([]), text: "  Teks tanpa struktur. Namun ia tetap dipotong.  " };
      const chunks = await chunkDocument(doc, options(strategy), fakeDeps());
      assert.equal(chunks.length, 1);
      assert.equal(chunks[0]!.text, "Teks tanpa struktur. Namun ia tetap dipotong.");
    });

    it(`${strategy}: chunks 200k characters quickly, counting each character only a few times`, async () => {
      const doc = bigDocument(200_000);
      const opts = options(strategy, { maxTokens: 512, targetTokens: 256, overlapTokens: 32 });
      const deps = fakeDeps();
      const chunks = await chunkDocument(doc, opts, deps);
      assertValidChunks(doc, chunks, opts);
      assert.ok(deps.countedChars < 4 * doc.text.length, `tokenized ${deps.countedChars} characters for ${doc.text.length}`);
      assert.ok(deps.embedCalls <= 10, `${deps.embedCalls} embed calls`);
    });
  }

  it("gives heading paths from block levels, outermost first", async () => {
    const doc = englishReport();
    const opts = options("paragraph", { maxTokens: 60, targetTokens: 40 });
    const chunks = await chunkDocument(doc, opts, fakeDeps());
    const pathOf = (needle: string) => chunks.find((c) => c.text.includes(needle))?.headingPath;
    assert.deepEqual(pathOf("This report describes"), ["Annual Report 2023"]);
    assert.deepEqual(pathOf("Mr. Tan"), ["Annual Report 2023", "Operations"]);
    assert.deepEqual(pathOf("Palm oil prices rose"), ["Annual Report 2023", "Finance", "Revenue"]);
    assert.deepEqual(pathOf("Costs grew"), ["Annual Report 2023", "Finance", "Costs"]);
  });

  it("records page ranges of chunks that cross pages", async () => {
    const doc = makeDocument(
      [h(1, "Bab 1", 1), p("Ayat pertama di halaman satu.", 1), p("Ayat kedua di halaman dua.", 2), h(1, "Bab 2", 3), p("Ayat di halaman tiga.", 3)],
      "pdf",
    );
    const chunks = await chunkDocument(doc, options("paragraph"), fakeDeps());
    assert.deepEqual(
      chunks.map((c) => [c.headingPath, c.pageStart, c.pageEnd]),
      [
        [["Bab 1"], 1, 2],
        [["Bab 2"], 3, 3],
      ],
    );
    // Where page 2 begins inside the first chunk, so a citation of its second sentence says page 2.
    const first = chunks[0]!;
    assert.deepEqual(first.pageBreaks, [
      [0, 1],
      [first.text.indexOf("Ayat kedua"), 2],
    ]);
    assert.deepEqual(chunks[1]!.pageBreaks, [[0, 3]]);
  });

  it("rejects unknown strategies and impossible sizes", async () => {
    const doc = englishReport();
    await assert.rejects(chunkDocument(doc, { ...options("fixed"), strategy: "nope" as ChunkingStrategy }, fakeDeps()), RangeError);
    await assert.rejects(chunkDocument(doc, options("semantic", { targetTokens: 200, maxTokens: 100 }), fakeDeps()), RangeError);
    await assert.rejects(chunkDocument(doc, options("paragraph", { maxTokens: 0 }), fakeDeps()), RangeError);
    await assert.rejects(chunkDocument(doc, options("fixed", { overlapTokens: -1 }), fakeDeps()), RangeError);
    const heavy = { countTokens: (t: string) => 4 + t.length, embed: fakeEmbed };
    await assert.rejects(chunkDocument(doc, options("fixed", { maxTokens: 4, targetTokens: 4, overlapTokens: 0 }), heavy), /no room/);
  });

  it("keeps the contract on random documents, sizes and tokenizers", async () => {
    let seed = 42;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const vocab = ["banjir", "Kelantan", "harga", "sawit", "Dr.", "Sdn.", "Bhd.", "No.", "5,", "x".repeat(70), "日本語のテキスト", "😀😀", "river", "(RM)", "3.5"];
    const sentence = () => `${Array.from({ length: 1 + rand(25) }, () => vocab[rand(vocab.length)]).join(" ")}${[".", "?", "!", ""][rand(4)]}`;
    const kinds = ["paragraph", "paragraph", "heading", "list", "table", "code"] as const;
    // Additive, and BOS/EOS plus a token per line break: sums under-count whole chunks.
    const tokenizers = [fakeCountTokens, (t: string) => 2 + Math.ceil(t.replace(/\s+/gu, " ").length / 4) + (t.match(/\n/gu)?.length ?? 0)];
    for (let round = 0; round < 150; round++) {
      const specs = Array.from({ length: 1 + rand(12) }, () => {
        const kind = kinds[rand(kinds.length)]!;
        const text = Array.from({ length: 1 + rand(kind === "heading" ? 1 : 8) }, sentence).join(kind === "paragraph" || kind === "heading" ? " " : "\n");
        return { kind, text, level: 1 + rand(4), page: 1 + rand(3) };
      });
      const doc = makeDocument(specs.sort((a, b) => a.page - b.page), rand(2) === 0 ? "pdf" : "md");
      const maxTokens = 12 + rand(80);
      const targetTokens = 4 + rand(maxTokens - 3);
      const countTokens = tokenizers[round % 2]!;
      for (const strategy of STRATEGIES) {
        const opts = { strategy, maxTokens, targetTokens, overlapTokens: rand(targetTokens) };
        const chunks = await chunkDocument(doc, opts, { countTokens, embed: fakeEmbed });
        for (const c of chunks) assert.equal(c.tokenCount, countTokens(c.text));
        assert.ok(chunks.length > 0, `round ${round} ${strategy}`);
      }
    }
  });

  it("never exceeds maxTokens with a tokenizer whose counts are not additive", async () => {
    // BOS + EOS on every call, and a token per line break: piece sums under-count chunks.
    const countTokens = (t: string) => 2 + (t.match(/\S+/gu)?.length ?? 0) + (t.match(/\n/gu)?.length ?? 0);
    const deps = { countTokens, embed: fakeEmbed };
    for (const strategy of STRATEGIES) {
      const doc = malayReport();
      const opts = options(strategy, { maxTokens: 30, targetTokens: 30, overlapTokens: 5 });
      const chunks = await chunkDocument(doc, opts, deps);
      for (const c of chunks) assert.ok(countTokens(c.text) <= 30 && c.tokenCount === countTokens(c.text), `${strategy} chunk ${c.index}`);
    }
  });
});
