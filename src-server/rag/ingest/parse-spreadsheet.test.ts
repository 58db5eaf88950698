import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { before, describe, it } from "node:test";
import ExcelJS from "exceljs";
import { assertOffsets, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { officeFixtures, WORKBOOK, type OfficeFixtures } from "../../../test/fixtures/office/build-office.js";
import { billionLaughsXlsx, odsRepeatBomb, odsWith, officeZipBomb, sheetXml, undeclaredEntityXlsx, xlsxWith } from "../../../test/fixtures/office/hostile-office.js";
import { fakeDeps, options } from "../../../test/helpers/chunking-documents.js";
import { chunkDocument } from "../chunking/chunk-document.js";
import { parseDocument } from "./parse-document.js";
import { parseOds, parseXlsx } from "./parse-spreadsheet.js";
import { ParseError, type ParsedDocument, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));
const { sales, fact, members } = WORKBOOK;
const SALES_HEADER = `| ${sales.header.join(" | ")} |`;

/** Each table block with the heading just before it. */
function tablesWithHeadings(document: ParsedDocument): { heading: string; sheet: string; table: string }[] {
  const out: { heading: string; sheet: string; table: string }[] = [];
  let sheet = "";
  document.blocks.forEach((block, i) => {
    if (block.kind === "heading" && block.level === 1) sheet = block.text;
    if (block.kind === "table") out.push({ heading: document.blocks[i - 1]!.text, sheet, table: block.text });
  });
  return out;
}

describe("parseXlsx and parseOds", () => {
  let fixtures: OfficeFixtures;
  let xlsx: ParsedDocument;
  before(async () => {
    fixtures = await officeFixtures();
    xlsx = await parseXlsx(fixtures.xlsx);
  });

  it("heads each sheet with its name, in workbook order, and takes the title from the document properties", () => {
    assertOffsets(xlsx);
    assert.equal(xlsx.format, "xlsx");
    assert.equal(xlsx.title, WORKBOOK.title);
    assert.equal(xlsx.pageCount, null);
    assert.deepEqual(xlsx.blocks.filter((b) => b.kind === "heading" && b.level === 1).map((b) => b.text), [sales.name, members.name]);
    assert.equal(xlsx.blocks[1]!.text, WORKBOOK.caption, "the caption above the header is a paragraph");
    assert.ok(xlsx.blocks.every((b) => b.page === null));
  });

  it("repeats the header row in every table block, headed by the spreadsheet rows it holds", () => {
    const tables = tablesWithHeadings(xlsx);
    const salesTables = tables.filter((t) => t.sheet === sales.name);
    assert.ok(salesTables.length >= 10, `${salesTables.length} tables for 120 rows`);
    let next = sales.firstRow;
    for (const { heading, table } of salesTables) {
      assert.ok(table.startsWith(`${SALES_HEADER}\n`), table.slice(0, 80));
      const [first, last] = heading.replace(/^Rows? /, "").split("–").map(Number);
      assert.equal(first, next, "ranges follow each other");
      assert.equal(table.split("\n").length - 2, last! - first + 1, `${heading}: one line per row`);
      next = last! + 1;
    }
    assert.equal(next, sales.firstRow + sales.rows + 1, "to the total row");
    for (const { table } of tables.filter((t) => t.sheet === members.name)) assert.ok(table.startsWith(`| ${members.header.join(" | ")} |\n`));
  });

  it("shows values as the sheet does: dates by their number format, percentages, TRUE/FALSE, formula results, Malay text", () => {
    const withFact = tablesWithHeadings(xlsx).find((t) => t.table.includes(fact.branch))!;
    assert.ok(withFact.table.includes(`| ${fact.date} | ${fact.branch} | ${fact.product} | ${fact.quantity} | ${fact.amount} | 12.5% | FALSE |`), withFact.table);
    const [first, last] = withFact.heading.replace(/^Rows? /, "").split("–").map(Number);
    assert.ok(first! <= fact.row && fact.row <= last!, `${withFact.heading} holds row ${fact.row}`);
    assert.match(xlsx.text, /\| {2}\| {2}\| Total \| \d+ \|/, "the SUM's cached result");
    assert.ok(xlsx.text.includes(`| ${members.fact.name} | ${members.fact.state} | ${members.fact.date} | 125 |`), "a dd/mm/yyyy date shown as an ISO date");
  });

  it("reads LibreOffice's ODS of the same workbook to the same text", async () => {
    const ods = await parseOds(fixtures.ods);
    assertOffsets(ods);
    assert.equal(ods.format, "ods");
    assert.equal(ods.text, xlsx.text, "Calc's million repeated empty rows and 16 000 empty columns are skipped");
  });

  it("gives every passage the sheet and rows as its heading path and keeps each table whole with its header", async () => {
    for (const strategy of ["semantic", "paragraph"] as const) {
      const chunks = await chunkDocument(xlsx, options(strategy, { targetTokens: 200, maxTokens: 480 }), fakeDeps());
      const withTables = chunks.filter((c) => /^\| --- \|/m.test(c.text));
      assert.equal(withTables.length, tablesWithHeadings(xlsx).length, `${strategy}: one passage per table block`);
      for (const chunk of withTables) {
        assert.equal(chunk.text.match(/^\| --- \|/gm)?.length, 1, `${strategy}: a passage never holds two tables`);
        const [sheet, rows] = chunk.headingPath;
        assert.ok(sheet === sales.name || sheet === members.name, chunk.headingPath.join(" › "));
        assert.match(rows!, /^Rows? \d+(–\d+)?$/);
        assert.ok(chunk.text.includes(sheet === sales.name ? SALES_HEADER : `| ${members.header.join(" | ")} |`), "the header travels with the rows");
      }
    }
  });

  it("reads inline strings (phonetic guides left out), formula strings, errors, booleans, ISO dates, and numbers without float noise", async () => {
    const cells =
      '<c r="A1" t="inlineStr"><is><r><t>Rich </t></r><r><t>text</t></r><rPh><t>ふりがな</t></rPh></is></c><c r="B1" t="str"><f>A1&amp;"!"</f><v>Rich text!</v></c>' +
      '<c r="D1" t="e"><v>#DIV/0!</v></c><c r="E1" t="b"><v>1</v></c><c r="F1"><v>0.30000000000000004</v></c><c r="G1" t="d"><v>2024-03-15T13:45:00</v></c>';
    const document = await parseXlsx(await xlsxWith(sheetXml(cells)));
    assert.equal(document.blocks.at(-1)!.text, "| Rich text | Rich text! | #DIV/0! | TRUE | 0.3 | 2024-03-15 13:45 |\n| --- | --- | --- | --- | --- | --- |");
  });

  it("refuses XLSX zip bombs, entity expansion, deep nesting and ODS repeat bombs with clear codes, in the parse worker too", async () => {
    await assert.rejects(parseXlsx(officeZipBomb("xlsx", "honest")), failsWith("document_too_large", /1\.1 GB/));
    await assert.rejects(parseXlsx(officeZipBomb("xlsx", "lying")), failsWith("document_too_large", /decompression bomb/));
    await assert.rejects(parseXlsx(await billionLaughsXlsx()), failsWith("corrupt_document", /entities/));
    await assert.rejects(parseXlsx(await undeclaredEntityXlsx()), failsWith("corrupt_document"));
    await assert.rejects(parseXlsx(await xlsxWith(sheetXml(`${"<x>".repeat(50_000)}`))), failsWith("document_too_complex"));
    await assert.rejects(parseXlsx(await xlsxWith(sheetXml(`<c r="A1" t="inlineStr"><is><t>${"x".repeat(200_000)}</t></is></c>`))), failsWith("document_too_large", /cell longer/));
    const started = performance.now();
    await assert.rejects(parseOds(await odsRepeatBomb("columns")), failsWith("document_too_large", /wider than 16,384 columns/));
    await assert.rejects(parseOds(await odsRepeatBomb("rows")), failsWith("document_too_large", /repeats a row 1,000,000,000 times/));
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    const emptyRuns = await odsWith('<table:table-row table:number-rows-repeated="1000000000"><table:table-cell table:number-columns-repeated="1000000000"/></table:table-row><table:table-row><table:table-cell office:value-type="string"><text:p>a</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>b</text:p></table:table-cell></table:table-row>');
    assert.deepEqual(headings(await parseOds(emptyRuns)), ["1 Data", "2 Row 1000000001"], "empty runs only move the position");
    for (const [bytes, format, code] of [
      [officeZipBomb("xlsx", "lying"), "xlsx", "document_too_large"],
      [await billionLaughsXlsx(), "xlsx", "corrupt_document"],
      [await odsRepeatBomb("rows"), "ods", "document_too_large"],
    ] as const) {
      await assert.rejects(parseDocument(bytes, format), failsWith(code), `${format} in the worker`);
    }
  });

  it("parses a 50,000-row workbook in the parse worker, within its memory", async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk));
    const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: true, useStyles: true });
    const sheet = book.addWorksheet("Ledger");
    sheet.addRow(["Date", "Branch", "Member", "Quantity", "Price (RM)", "Paid"]).commit();
    const branches = ["Port Klang", "Kuantan", "Kuala Terengganu", "Johor Bahru", "Kota Kinabalu"];
    for (let i = 0; i < 50_000; i++) {
      const row = sheet.addRow([new Date(Date.UTC(2024, 0, 1 + (i % 365))), branches[i % 5], `Ahli ${i % 977}`, i % 17, (i % 89) * 1.25, i % 3 === 0]);
      row.getCell(1).numFmt = "yyyy-mm-dd";
      row.commit();
    }
    sheet.commit();
    await book.commit();
    const started = performance.now();
    const document = await parseDocument(Buffer.concat(chunks), "xlsx");
    console.log(`50,000-row XLSX parsed in the worker in ${Math.round(performance.now() - started)} ms (${document.text.length.toLocaleString("en")} characters, ${document.blocks.length.toLocaleString("en")} blocks)`);
    const ranges = document.blocks.filter((b) => b.kind === "heading" && b.level === 2).map((b) => b.text);
    assert.equal(ranges[0]!.startsWith("Rows 2–"), true);
    assert.match(ranges.at(-1)!, /–50001$|^Row 50001$/);
    assert.ok(document.text.includes("| 2024-12-30 | Kota Kinabalu | Ahli 364 |"), "a date late in the year, as a date");
  });
});
