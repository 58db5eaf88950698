import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { buildPdf } from "../../../test/fixtures/documents/build-pdf.js";
import { assertOffsets, fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { TWO_COLUMN_ARTICLE, THREE_COLUMN_ARTICLE, articleHtml, articleSentences, priceTableHtml, type Article } from "../../../test/fixtures/layout/layout-documents.js";
import { assertReadInOrder, pdfRuns } from "../../../test/fixtures/layout/pdf-runs.js";
import { chromiumPdf, libreOfficePdf } from "../../../test/fixtures/layout/real-tools.js";
import { parsePdf } from "./parse-pdf.js";
import { detectColumns, readingOrder } from "./pdf-columns.js";
import { linesToBlocks, runsToLines, type TextRun } from "./pdf-layout.js";
import type { ParsedDocument } from "./types.js";

/** The body's paragraphs (headings aside), each of which must come out as one block. */
const paragraphsOf = (article: Article): string[] => article.body.flat().filter((part) => !part.startsWith("## "));
const blockTexts = (document: ParsedDocument): string[] => document.blocks.map((b) => b.text);

/** Column (0, 1, 2…) of the first run holding `text`, by the page's detected columns. */
function columnOfText(runs: readonly TextRun[], text: string): number {
  const bands = detectColumns(runs) ?? [];
  const run = runs.find((r) => r.text.includes(text));
  assert.ok(run, `a run holds "${text}"`);
  const band = bands.find((b) => b.columns.length > 1 && run.y <= b.top + 0.5 && run.y >= b.bottom - 0.5);
  assert.ok(band, `"${text}" is in a band set in columns`);
  return band.columns.findIndex((c) => run.x >= c.left - 1 && run.x <= c.right);
}

describe("multi-column PDF pages (Chromium, CSS columns)", () => {
  const pdfs = new Map<string, Uint8Array>();
  before(async () => {
    // Printed once for the whole suite: Chromium takes a few seconds per page on a busy machine.
    for (const [name, article, drawing] of [
      ["two", TWO_COLUMN_ARTICLE, "flowing"],
      ["three", THREE_COLUMN_ARTICLE, "flowing"],
      ["two out of order", TWO_COLUMN_ARTICLE, "out of order"],
      ["three out of order", THREE_COLUMN_ARTICLE, "out of order"],
    ] as const) {
      pdfs.set(name, await chromiumPdf(articleHtml(article, drawing)));
    }
  });

  it("finds two columns under a full-width title and standfirst, above a full-width footer", async () => {
    const [runs] = await pdfRuns(pdfs.get("two")!);
    const bands = detectColumns(runs!);
    assert.ok(bands, "columns found");
    // Full-width bands (the title and standfirst; the footer's lines), the columns between them.
    const counts = bands.map((b) => b.columns.length);
    assert.equal(counts[0], 1);
    assert.equal(counts[1], 2);
    assert.ok(counts.length >= 3 && counts.slice(2).every((n) => n === 1), `bands: ${counts.join(", ")}`);
    const [title, columns, footer] = bands;
    assert.ok(runs!.some((r) => r.text === TWO_COLUMN_ARTICLE.title && r.y <= title!.top + 0.5 && r.y >= title!.bottom - 0.5));
    assert.ok(runs!.some((r) => TWO_COLUMN_ARTICLE.footer.startsWith(r.text) && r.text.length > 20 && Math.abs(r.y - footer!.top) < 0.5));
    assert.ok(columns!.columns[1]!.left - columns!.columns[0]!.right > 15, "a gutter of some 9 mm between them");
    assert.equal(columnOfText(runs!, "The cooperative opened"), 0);
    assert.equal(columnOfText(runs!, "Ahli lembaga bermesyuarat"), 1);
  });

  it("reads a two-column page column by column, English then Malay, with a paragraph that runs on into the next column kept whole", async () => {
    const bytes = pdfs.get("two")!;
    const document = await parsePdf(bytes);
    assertOffsets(document);
    assertReadInOrder(document.text, articleSentences(TWO_COLUMN_ARTICLE));
    assert.equal(document.blocks[0]!.kind, "heading");
    assert.equal(document.blocks[0]!.text, TWO_COLUMN_ARTICLE.title);
    assert.equal(document.blocks.at(-1)!.text, TWO_COLUMN_ARTICLE.footer);
    for (const paragraph of paragraphsOf(TWO_COLUMN_ARTICLE)) assert.ok(blockTexts(document).includes(paragraph), `one block: ${paragraph.slice(0, 50)}`);
    // Chromium balanced the columns by breaking "Koperasi telah membuka…" across them (so the
    // test above really joined a paragraph over the gutter).
    const [runs] = await pdfRuns(bytes);
    assert.equal(columnOfText(runs!, "Koperasi telah membuka"), 0);
    assert.equal(columnOfText(runs!, "kegunaan ahli"), 1);
  });

  it("reads a three-column page column by column, each column's heading first", async () => {
    const document = await parsePdf(pdfs.get("three")!);
    assertOffsets(document);
    assertReadInOrder(document.text, articleSentences(THREE_COLUMN_ARTICLE));
    assert.deepEqual(
      document.blocks.filter((b) => b.kind === "heading").map((b) => `${b.level} ${b.text}`),
      ["1 Buletin Nelayan Pantai Barat", "2 Cuaca dan laut", "2 Harga ikan", "2 Bantuan kerajaan"],
    );
    for (const paragraph of paragraphsOf(THREE_COLUMN_ARTICLE)) assert.ok(blockTexts(document).includes(paragraph), `one block: ${paragraph.slice(0, 50)}`);
    const [runs] = await pdfRuns(pdfs.get("three")!);
    assert.deepEqual(
      ["Jabatan Meteorologi", "Harga ikan kembung", "Kerajaan negeri"].map((text) => columnOfText(runs!, text)),
      [0, 1, 2],
    );
  });

  it("reads the columns in order when the PDF draws the last column first and the title last", async () => {
    for (const [name, article] of [
      ["two out of order", TWO_COLUMN_ARTICLE],
      ["three out of order", THREE_COLUMN_ARTICLE],
    ] as const) {
      const bytes = pdfs.get(name)!;
      const [runs] = await pdfRuns(bytes);
      // The drawing order really is another order: the title comes last, the last column first.
      const drawn = runs!.filter((r) => r.text.trim() !== "");
      assert.equal(drawn.at(-1)!.text, article.title, `${name}: title drawn last`);
      const firstBody = drawn.findIndex((r) => article.body.flat().some((part) => part.replace(/^## /, "").startsWith(r.text)));
      assert.equal(columnOfText(runs!, drawn[firstBody]!.text), article.columns - 1, `${name}: the last column is drawn first`);
      const document = await parsePdf(bytes);
      assertOffsets(document);
      assertReadInOrder(document.text, articleSentences(article));
      assert.equal(document.blocks[0]!.text, article.title, `${name}: the title is read first`);
      for (const paragraph of paragraphsOf(article)) assert.ok(blockTexts(document).includes(paragraph), `${name}: one block: ${paragraph.slice(0, 50)}`);
    }
  });

  it("reads a page drawn line by line across the columns (each row left to right) column by column", async () => {
    const [runs] = await pdfRuns(pdfs.get("two")!);
    // The same lines, at the same places, drawn row by row across the gutter: a real PDF
    // written by the project's PDF writer, read back through pdf.js.
    const lines = runsToLines(runs!);
    const rowMajor = [...lines].sort((p, q) => q.y - p.y || p.x - q.x);
    const bytes = buildPdf([{ texts: rowMajor.map((l) => ({ x: l.x, y: l.y, size: l.size, text: l.text })) }]);
    const [drawn] = await pdfRuns(bytes);
    assert.notDeepEqual(readingOrder(drawn!), drawn, "the drawing order is not the reading order");
    const document = await parsePdf(bytes);
    assertOffsets(document);
    assertReadInOrder(document.text, articleSentences(TWO_COLUMN_ARTICLE));
    for (const paragraph of paragraphsOf(TWO_COLUMN_ARTICLE)) assert.ok(blockTexts(document).includes(paragraph), `one block: ${paragraph.slice(0, 50)}`);
    assert.ok(!document.blocks.some((b) => b.kind === "table"), "lines side by side are not table rows");

    // The same with the runs Chromium drew, sorted row by row.
    const rowRuns = runs!.filter((r) => r.text.trim() !== "").sort((p, q) => q.y - p.y || p.x - q.x);
    const blocks = linesToBlocks(runsToLines(rowRuns), 10, () => 1).map((b) => b.text);
    assertReadInOrder(blocks.join("\n\n"), articleSentences(TWO_COLUMN_ARTICLE));
  });
});

describe("pages without columns are read as before", () => {
  it("leaves the runs of single-column pages and of tables untouched (the very same array)", async () => {
    const pages = [
      ...(await pdfRuns(fixture("report.pdf"))),
      ...(await pdfRuns(await chromiumPdf(priceTableHtml()))),
      ...(await pdfRuns(await libreOfficePdf(fixture("report.docx"), "report.docx"))),
    ];
    assert.ok(pages.length >= 5);
    for (const [i, runs] of pages.entries()) {
      assert.equal(detectColumns(runs), null, `page ${i}`);
      assert.equal(readingOrder(runs), runs, `page ${i}`);
    }
  });

  it("does not take a table of short cells, an indented list, or a diagram's two boxes for columns", () => {
    const line = (text: string, x: number, y: number, width: number): TextRun => ({ text, x, y, width, size: 10, hasEOL: false });
    // A price list: two columns of short cells with a wide gap between them.
    const table = Array.from({ length: 20 }, (_, i) => [line(`Item ${i}`, 72, 700 - i * 14, 40), line(`${i * 3}.50`, 300, 700 - i * 14, 25)]).flat();
    assert.equal(detectColumns(table), null);
    // Bullets far from their text.
    const list = Array.from({ length: 20 }, (_, i) => [line("•", 72, 700 - i * 14, 5), line("An item of the list that runs across the page width.", 108, 700 - i * 14, 400)]).flat();
    assert.equal(detectColumns(list), null);
    // Two narrow boxes side by side, and most of the page's text in one column above them.
    const prose = Array.from({ length: 30 }, (_, i) => line("A line of ordinary prose that fills the width of the single column.", 72, 740 - i * 13, 460));
    const boxes = Array.from({ length: 4 }, (_, i) => [line("Box one text here fills", 72, 300 - i * 13, 200), line("Box two text here fills", 330, 300 - i * 13, 200)]).flat();
    assert.equal(detectColumns([...prose, ...boxes]), null);
  });

  it("copes with hostile pages: no runs, blank runs, zero widths, 100 000 runs at random places", () => {
    assert.deepEqual(readingOrder([]), []);
    const blanks: TextRun[] = Array.from({ length: 50 }, (_, i) => ({ text: " ", x: i, y: i, width: 0, size: 10, hasEOL: true }));
    assert.equal(readingOrder(blanks), blanks);
    const zero: TextRun[] = Array.from({ length: 50 }, (_, i) => ({ text: "word", x: (i % 2) * 300, y: 700 - Math.floor(i / 2) * 12, width: 0, size: 0, hasEOL: false }));
    assert.equal(readingOrder(zero).length, zero.length);
    let seed = 7;
    const random = (): number => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const noise: TextRun[] = Array.from({ length: 100_000 }, () => ({ text: "x", x: random() * 600, y: random() * 800, width: random() * 30, size: 1 + random() * 20, hasEOL: random() < 0.1 }));
    const started = performance.now();
    const ordered = readingOrder(noise);
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    assert.equal(ordered.length, noise.length, "every run is read once");
    assert.ok(runsToLines(noise).length > 0);
  });
});
