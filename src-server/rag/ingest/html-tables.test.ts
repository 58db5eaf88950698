import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { MERGED_TABLE_HTML } from "../../../test/fixtures/layout/layout-documents.js";
import { libreOfficeDocx } from "../../../test/fixtures/layout/real-tools.js";
import { assertValidChunks, fakeDeps, options } from "../../../test/helpers/chunking-documents.js";
import { chunkDocument } from "../chunking/chunk-document.js";
import { markdownTable } from "./markdown-table.js";
import { parseDocx } from "./parse-docx.js";
import { parseHtml } from "./parse-html.js";
import { MAX_TABLE_BLOCK_CHARS, MAX_TABLE_BLOCK_ROWS } from "./sheet-tables.js";
import type { ParsedDocument } from "./types.js";

const page = async (body: string): Promise<ParsedDocument> => {
  const document = await parseHtml(new Uint8Array(Buffer.from(`<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>${body}</body></html>`)));
  assertOffsets(document);
  return document;
};
const blocks = (document: ParsedDocument): string[] => document.blocks.map((b) => `${b.kind}: ${b.text}`);

describe("tables in HTML and Word documents become Markdown tables", () => {
  it("page.html's and report.docx's tables: a header row, the delimiter, a row per line", async () => {
    const html = await parseHtml(fixture("page.html"));
    assert.deepEqual(
      html.blocks.filter((b) => b.kind === "table").map((b) => b.text),
      [markdownTable(["Day", "High tide", "Low tide"], [["Monday", "04:12", "10:30"], ["Tuesday", "05:01", "11:15"]])],
    );
    const docx = await parseDocx(fixture("report.docx"));
    assert.deepEqual(
      docx.blocks.filter((b) => b.kind === "table").map((b) => b.text),
      ["| Project | Cost (RM) |\n| --- | --- |\n| Warehouse | 850,000 |\n| Training | 40,000 |"],
    );
  });

  it("merges header rows, repeats a cell spanning rows, names each column under a spanning header, keeps the caption and puts the footer last", async () => {
    const document = await page(`
      <table>
        <caption>Hasil <em>wilayah</em>, 2023–2024</caption>
        <tfoot><tr><td>Jumlah</td><td>2,760</td><td>1,850</td><td></td></tr></tfoot>
        <thead>
          <tr><th rowspan="2">Wilayah</th><th colspan="2">Hasil (RM)</th><th rowspan="2">Catatan</th></tr>
          <tr><th>2023</th><th>2024</th></tr>
        </thead>
        <tbody>
          <tr><td rowspan="2">Utara</td><td>1,200</td><td>1,250</td><td><strong>naik</strong></td></tr>
          <tr><td>300</td><td></td><td>Kedah sahaja</td></tr>
          <tr><td colspan="3">Jumlah kecil</td><td>1,500</td></tr>
          <tr></tr>
          <tr><td>Timur</td><td>610</td></tr>
        </tbody>
      </table>
      <p>Selepas jadual.</p>`);
    assert.deepEqual(blocks(document), [
      "paragraph: Hasil wilayah, 2023–2024",
      "table: | Wilayah | Hasil (RM) 2023 | Hasil (RM) 2024 | Catatan |\n| --- | --- | --- | --- |\n| Utara | 1,200 | 1,250 | naik |\n| Utara | 300 |  | Kedah sahaja |\n" +
        "| Jumlah kecil |  |  | 1,500 |\n| Timur | 610 |  |  |\n| Jumlah | 2,760 | 1,850 |  |",
      "paragraph: Selepas jadual.",
    ]);
  });

  it("takes leading rows of header cells as the header without <thead>, else the first row; a table of header cells only is data", async () => {
    const withTh = await page("<table><tr><th>Ikan</th><th>Harga</th></tr><tr><td>Kembung</td><td>10.00</td></tr></table>");
    assert.deepEqual(blocks(withTh), ["table: | Ikan | Harga |\n| --- | --- |\n| Kembung | 10.00 |"]);
    const plain = await page("<table><tr><td>Ikan</td><td>Harga</td></tr><tr><td>Selar</td><td>7.20</td></tr></table>");
    assert.deepEqual(blocks(plain), ["table: | Ikan | Harga |\n| --- | --- |\n| Selar | 7.20 |"]);
    const onlyTh = await page("<table><tr><th>A</th><th>B</th></tr><tr><th>C</th><th>D</th></tr></table>");
    assert.deepEqual(blocks(onlyTh), ["table: | A | B |\n| --- | --- |\n| C | D |"]);
  });

  it("flattens a table nested in a cell to text in that cell", async () => {
    const document = await page(
      "<table><tr><th>Wilayah</th><th>Pecahan</th></tr><tr><td>Utara</td><td><table><tr><td>Kedah</td><td>800</td></tr><tr><td>Perlis</td><td>400</td></tr></table></td></tr></table>",
    );
    assert.deepEqual(blocks(document), ["table: | Wilayah | Pecahan |\n| --- | --- |\n| Utara | Kedah / 800; Perlis / 400 |"]);
    // Through a layout table in between, too; while a data table inside a layout table (an
    // e-mail template) stays a table.
    const deep = await page("<table><tr><th>A</th><th>B</th></tr><tr><td>x</td><td><table role='presentation'><tr><td><table><tr><td>p*</td><td>q*</td></tr></table></td></tr></table></td></tr></table>");
    assert.deepEqual(blocks(deep), ["table: | A | B |\n| --- | --- |\n| x | p* / q* |"]);
    const template = await page("<table role='presentation'><tr><td><p>Salam,</p><table><tr><th>Ikan</th><th>Harga</th></tr><tr><td>Selar</td><td>7.20</td></tr></table></td></tr></table>");
    assert.deepEqual(blocks(template), ["paragraph: Salam,", "table: | Ikan | Harga |\n| --- | --- |\n| Selar | 7.20 |"]);
  });

  it("reads cells as plain text: inline markup resolved, literal pipes, backslashes and markup characters kept exactly", async () => {
    const document = await page(
      "<table><tr><th>Kod</th><th>Nota</th></tr><tr><td><code>a|b</code></td><td><a href='/x'>pautan</a> and <b>bold</b>, <h3>tajuk</h3> C:\\dir, 2*3*4, *x*, __init__, [1], `y`, &lt;z&gt;</td></tr></table>",
    );
    assert.deepEqual(blocks(document), ["table: | Kod | Nota |\n| --- | --- |\n| a\\|b | pautan and bold, tajuk C:\\dir, 2*3*4, *x*, __init__, [1], `y`, <z> |"]);
  });

  it("reads layout tables (role=presentation, one cell per row) as the blocks they hold, not as a grid", async () => {
    const document = await page(
      "<table role='presentation'><tr><td><h2>Berita</h2><p>Perenggan pertama.</p></td><td><p>Perenggan kedua.</p></td></tr></table><table><tr><td><p>Satu lajur</p></td></tr><tr><td><p>sahaja.</p></td></tr></table>",
    );
    assert.deepEqual(blocks(document), ["heading: Berita", "paragraph: Perenggan pertama.", "paragraph: Perenggan kedua.", "paragraph: Satu lajur", "paragraph: sahaja."]);
  });

  it("a Word document LibreOffice made with merged header cells (mammoth reads them as <thead>, colspan, rowspan)", async () => {
    const document = await parseDocx(await libreOfficeDocx(MERGED_TABLE_HTML));
    assertOffsets(document);
    assert.deepEqual(blocks(document), [
      "heading: Laporan Hasil",
      "paragraph: Jadual hasil mengikut wilayah.",
      "table: | Wilayah | Hasil (RM) 2023 | Hasil (RM) 2024 |\n| --- | --- | --- |\n| Utara | 1,200 | 1,250 |\n| Selatan | 950 |  |\n| Jumlah kecil |  | 2,150 |",
      "paragraph: Selepas jadual.",
    ]);
  });

  it("stays bounded on hostile tables: spans of 1 000 on every row, one row of thousands of cells over thousands of one-cell rows", async () => {
    const started = performance.now();
    const spans = await page(`<table>${"<tr><td colspan='5000' rowspan='0'>x</td><td>y</td></tr>".repeat(3000)}</table>`);
    assert.ok(spans.blocks.every((b) => b.kind === "table" && b.text.startsWith("| x | y |\n| --- | --- |\n")));
    const rows = spans.blocks.flatMap((b) => b.text.split("\n").slice(2));
    assert.equal(rows.length, 2999, "a row per row: the spans were ignored, not filled");
    assert.ok(rows.every((row) => row === "| x | y |"));
    const wide = await page(`<table><tr>${"<td>w</td>".repeat(20_000)}</tr>${"<tr><td>n</td></tr>".repeat(20_000)}</table>`);
    assert.ok(wide.text.length < 400_000, `no padded grid (${wide.text.length} characters)`);
    assert.match(wide.text, /^w \/ w \/ w/);
    assert.ok(performance.now() - started < 60_000 /* hang guard, not a speed target */);
  });

  it("cuts a long table into tables of at most 40 rows, each with the header; chunks keep whole rows, and the header when a piece fits", async () => {
    const rows = Array.from({ length: 120 }, (_, i) => [`Minggu ${i + 1}`, i % 2 === 0 ? "Kembung" : "Selar", `${(5 + i / 10).toFixed(2)}`]);
    const document = await page(`<h1>Harga</h1><table><thead><tr><th>Minggu</th><th>Ikan</th><th>Harga</th></tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("")}</tbody></table>`);
    const pieces = document.blocks.filter((b) => b.kind === "table");
    assert.ok(pieces.length >= 3);
    const body = pieces.flatMap((b) => {
      const [header, delimiter, ...lines] = b.text.split("\n");
      assert.deepEqual([header, delimiter], ["| Minggu | Ikan | Harga |", "| --- | --- | --- |"]);
      assert.ok(lines.length <= MAX_TABLE_BLOCK_ROWS && b.text.length <= MAX_TABLE_BLOCK_CHARS + 100);
      return lines;
    });
    assert.deepEqual(body, markdownTable(["Minggu", "Ikan", "Harga"], rows).split("\n").slice(2));
    for (const [strategy, maxTokens] of [
      ["paragraph", 50],
      ["semantic", 50],
      ["paragraph", 600],
      ["semantic", 600],
    ] as const) {
      const opts = options(strategy, { maxTokens, targetTokens: Math.round(maxTokens * 0.7), overlapTokens: 0 });
      const chunks = await chunkDocument(document, opts, fakeDeps());
      assertValidChunks(document, chunks, opts);
      for (const chunk of chunks) {
        for (const piece of pieces.filter((b) => chunk.start < b.end && chunk.end > b.start)) {
          const part = document.text.slice(Math.max(chunk.start, piece.start), Math.min(chunk.end, piece.end));
          for (const line of part.split("\n")) assert.match(line, /^\| .* \|$/, `${strategy} ${maxTokens}: a whole row, not ${JSON.stringify(line)}`);
          if (maxTokens === 600) assert.ok(part.startsWith("| Minggu | Ikan | Harga |\n"), `${strategy}: the chunk has the header`);
        }
      }
    }
  });
});
