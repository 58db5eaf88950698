import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { MERGED_TABLE_HTML, PRICE_TABLE, longPriceTableHtml, priceTableHtml } from "../../../test/fixtures/layout/layout-documents.js";
import { chromiumPdf, libreOfficeDocx, libreOfficePdf } from "../../../test/fixtures/layout/real-tools.js";
import { assertValidChunks, fakeDeps, options } from "../../../test/helpers/chunking-documents.js";
import { chunkDocument } from "../chunking/chunk-document.js";
import { markdownTable } from "./markdown-table.js";
import { MAX_TABLE_BLOCK_ROWS } from "./sheet-tables.js";
import { parsePdf } from "./parse-pdf.js";
import { linesToBlocks, runsToLines, type TextRun } from "./pdf-layout.js";

const tables = (document: { blocks: { kind: string; text: string }[] }): string[] => document.blocks.filter((b) => b.kind === "table").map((b) => b.text);

describe("tables in PDFs become Markdown tables", () => {
  it("Chromium's print of an HTML table: header row, delimiter, each cell in its column, missing cells left empty", async () => {
    const document = await parsePdf(await chromiumPdf(priceTableHtml()));
    assertOffsets(document);
    // Numbers are right-aligned under left-aligned headers; four cells are empty.
    assert.deepEqual(tables(document), [markdownTable(PRICE_TABLE.header, PRICE_TABLE.rows)]);
    assert.equal(
      tables(document)[0],
      "| Ikan | Klang | Lumut | Kuantan | Catatan |\n| --- | --- | --- | --- | --- |\n| Kembung | 10.00 | 9.50 | 8.80 | naik |\n| Selar | 7.20 |  | 6.90 | stabil |\n" +
        "| Tenggiri | 28.00 | 26.50 |  |  |\n| Bawal putih |  | 45.00 | 42.00 | musim |\n| Udang harimau | 52.00 | 50.00 | 49.50 | stabil |",
    );
    const after = document.blocks[document.blocks.findIndex((b) => b.kind === "table") + 1];
    assert.deepEqual([after?.kind, after?.text], ["paragraph", "Harga dikumpul oleh pegawai perikanan pada hari Isnin setiap minggu."]);
  });

  it("LibreOffice's PDF of report.docx: the table as a Markdown table, bullets and numbers set off by a tab as lists", async () => {
    const document = await parsePdf(await libreOfficePdf(fixture("report.docx"), "report.docx"));
    assertOffsets(document);
    assert.deepEqual(tables(document), ["| Project | Cost (RM) |\n| --- | --- |\n| Warehouse | 850,000 |\n| Training | 40,000 |"]);
    assert.deepEqual(
      document.blocks.filter((b) => b.kind === "list").map((b) => b.text),
      ["• Open the Port Klang warehouse\n• Train twenty new members\n• Replace the cold-storage units", "1. Board review\n2. Members vote"],
    );
  });

  it("a LibreOffice table with merged cells: the body keeps its columns, a subtotal spanning two columns fills the first", async () => {
    const document = await parsePdf(await libreOfficePdf(await libreOfficeDocx(MERGED_TABLE_HTML), "merged.docx"));
    assertOffsets(document);
    // "Wilayah" (two rows high) and "Hasil (RM)" (two columns wide) are printed on lines of
    // their own above the table, so they stay paragraphs; the "2023 | 2024" line is the header.
    assert.deepEqual(tables(document), ["|  | 2023 | 2024 |\n| --- | --- | --- |\n| Utara | 1,200 | 1,250 |\n| Selatan | 950 |  |\n| Jumlah kecil |  | 2,150 |"]);
  });

  it("a long table: Markdown tables of at most 40 rows, each with the header, page by page, every row once", async () => {
    const { html, rows } = longPriceTableHtml(150);
    const document = await parsePdf(await chromiumPdf(html));
    assertOffsets(document);
    const pieces = document.blocks.filter((b) => b.kind === "table");
    const pages = pieces.map((b) => b.page!);
    assert.deepEqual(pages, [...pages].sort((a, b) => a - b));
    assert.ok(new Set(pages).size >= 3, `the table runs over ${new Set(pages).size} pages`);
    const body = pieces.flatMap((b) => {
      const [header, delimiter, ...lines] = b.text.split("\n");
      assert.equal(header, "| Minggu | Ikan | Klang | Lumut |");
      assert.equal(delimiter, "| --- | --- | --- | --- |");
      assert.ok(lines.length >= 1 && lines.length <= MAX_TABLE_BLOCK_ROWS);
      return lines;
    });
    assert.deepEqual(body, markdownTable(["Minggu", "Ikan", "Klang", "Lumut"], rows).split("\n").slice(2));
  });

  it("keeps whole rows in every chunk, and the header in every chunk when a table piece fits one", async () => {
    const { html } = longPriceTableHtml(150);
    const document = await parsePdf(await chromiumPdf(html));
    const pieces = document.blocks.filter((b) => b.kind === "table");
    for (const [strategy, maxTokens] of [
      ["paragraph", 60],
      ["semantic", 60],
      ["paragraph", 600],
      ["semantic", 600],
    ] as const) {
      const opts = options(strategy, { maxTokens, targetTokens: Math.round(maxTokens * 0.7), overlapTokens: 0 });
      const chunks = await chunkDocument(document, opts, fakeDeps());
      assertValidChunks(document, chunks, opts);
      for (const chunk of chunks.filter((c) => pieces.some((b) => c.start < b.end && c.end > b.start))) {
        for (const piece of pieces.filter((b) => chunk.start < b.end && chunk.end > b.start)) {
          const part = document.text.slice(Math.max(chunk.start, piece.start), Math.min(chunk.end, piece.end));
          for (const line of part.split("\n")) assert.match(line, /^\| .* \|$/, `${strategy} ${maxTokens}: a whole row, not ${JSON.stringify(line)}`);
          if (maxTokens === 600) assert.ok(part.startsWith("| Minggu | Ikan | Klang | Lumut |\n| --- |"), `${strategy}: the chunk has the header`);
        }
      }
    }
  });
});

describe("table layout from positioned runs", () => {
  const run = (text: string, x: number, y: number, width: number, size = 10): TextRun => ({ text, x, y, width, size, hasEOL: false });
  const blocks = (runs: TextRun[]): { kind: string; text: string }[] => linesToBlocks(runsToLines(runs), 10, () => 1);

  it("a row with one cell filled, between rows, stays in the table in its own column", () => {
    const runs = [
      ...[["Region", "Revenue", "Growth"], ["North", "1,200", "4%"]].flatMap((row, r) => row.map((c, i) => run(c, 72 + i * 120, 700 - r * 14, 40))),
      run("1,050", 192, 672, 30),
      ...["East", "610", "-2%"].map((c, i) => run(c, 72 + i * 120, 658, 30)),
    ];
    assert.deepEqual(blocks(runs), [{ kind: "table", text: "| Region | Revenue | Growth |\n| --- | --- | --- |\n| North | 1,200 | 4% |\n|  | 1,050 |  |\n| East | 610 | -2% |" }]);
  });

  it("one line with a wide gap is not a table of one row; a bullet before a tab is a list item", () => {
    assert.deepEqual(blocks([run("Chapter 2: Structures", 72, 760, 120), run("3", 520, 760, 6)]), [{ kind: "table", text: "Chapter 2: Structures | 3" }]);
    const list = blocks([run("•", 72, 700, 5), run("Open the warehouse", 108, 700, 100), run("•", 72, 686, 5), run("Train the members", 108, 686, 100)]);
    assert.deepEqual(list, [{ kind: "list", text: "• Open the warehouse\n• Train the members" }]);
  });

  it("falls back to rows of cells when the cells do not line up (a page of stray gaps, not a grid), quickly", () => {
    // 3 000 lines of two narrow cells, each line's at other places: aligning them would pad a 3 000 × 6 000 grid.
    const runs = Array.from({ length: 3000 }, (_, i) => [run(`a${i}`, 72 + i * 0.1, 700 - i * 0.2, 0.05), { ...run(`b${i}`, 400 + i * 0.1, 700 - i * 0.2, 0.05), hasEOL: true }]).flat();
    const started = performance.now();
    const found = blocks(runs);
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    assert.deepEqual(found, [{ kind: "table", text: Array.from({ length: 3000 }, (_, i) => `a${i} | b${i}`).join("\n") }]);
  });
});
