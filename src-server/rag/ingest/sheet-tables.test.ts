import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { DocumentBuilder } from "./document-builder.js";
import { columnIndex, columnLetter, MAX_TABLE_BLOCK_CHARS, SHEET_LIMITS, SheetTableWriter, tableBlocks, tableText } from "./sheet-tables.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && message.test(e.message);

function write(sheets: [name: string | null, rows: [number, (string | undefined)[]][]][], limits = SHEET_LIMITS) {
  const builder = new DocumentBuilder();
  const writer = new SheetTableWriter(builder, "workbook", limits);
  for (const [name, rows] of sheets) {
    writer.startSheet(name);
    for (const [number, cells] of rows) writer.row(number, cells);
    writer.endSheet();
  }
  return builder.build({ format: "xlsx" });
}

describe("SheetTableWriter", () => {
  it("heads each sheet with its name and each table with its rows, repeating the header in every table", () => {
    const rows: [number, string[]][] = [[1, ["Branch", "Amount"]]];
    for (let n = 2; n <= 200; n++) rows.push([n, [`Branch number ${n}`, String(n * 100)]]);
    const document = write([["Jualan", rows], ["Empty", []], ["Ahli", [[1, ["Nama", "Negeri"]], [2, ["Siti", "Terengganu"]]]]]);
    assertOffsets(document);
    const tables = document.blocks.filter((b) => b.kind === "table");
    assert.ok(tables.length > 5, "the sheet is cut into several tables");
    for (const table of tables.slice(0, -1)) {
      assert.ok(table.text.startsWith("| Branch | Amount |\n| --- | --- |\n"), "every table of the sheet repeats its header");
      assert.ok(table.text.length <= MAX_TABLE_BLOCK_CHARS, "and stays within the block size");
    }
    const heads = headings(document);
    assert.equal(heads[0], "1 Jualan");
    assert.match(heads[1]!, /^2 Rows 2–\d+$/);
    // Row ranges follow each other without gaps or overlaps, to the last row.
    const ranges = heads.filter((h) => h.startsWith("2 Rows")).map((h) => h.slice(7).split("–").map(Number));
    for (let i = 1; i < ranges.length; i++) assert.equal(ranges[i]![0], ranges[i - 1]![1]! + 1);
    assert.equal(ranges.at(-1)![1], 200);
    assert.deepEqual(heads.slice(-2), ["1 Ahli", "2 Row 2"], "an empty sheet gets no heading; a single data row is 'Row 2'");
  });

  it("reads one-cell rows above the header as captions, skips empty rows, and drops empty columns", () => {
    const document = write([
      [
        "Sales",
        [
          [1, ["Quarterly sales, 2024"]],
          [3, [undefined, "Branch", "", "Amount", "  "]],
          [4, [undefined, "Kuantan", "", "10"]],
          [5, ["", "", ""]],
          [7, [undefined, "Johor Bahru", "", "", "", "late"]],
        ],
      ],
    ]);
    assert.deepEqual(
      document.blocks.map((b) => [b.kind, b.text]),
      [
        ["heading", "Sales"],
        ["paragraph", "Quarterly sales, 2024"],
        ["heading", "Rows 4–7"],
        ["table", "| Branch | Amount | F |\n| --- | --- | --- |\n| Kuantan | 10 |  |\n| Johor Bahru |  | late |"],
      ],
    );
  });

  it("takes the first row as the header of a one-column sheet, and writes a lone row as a header-only table", () => {
    const column = write([[null, [1, 2, 3, 4, 5, 6, 7].map((n) => [n, [`item ${n}`]] as [number, string[]])]]);
    assert.equal(column.blocks[0]!.text, "Rows 2–7", "a CSV (no sheet name) has no sheet heading");
    assert.ok(column.blocks[1]!.text.startsWith("| item 1 |\n| --- |\n| item 2 |"));
    const lone = write([["Only", [[4, ["a", "b"]]]]]);
    assert.deepEqual(lone.blocks.map((b) => b.text), ["Only", "Row 4", "| a | b |\n| --- | --- |"]);
  });

  it("stops at the row, cell, column and text limits with document_too_large", () => {
    const rows = (count: number, width = 2): [number, string[]][] => Array.from({ length: count }, (_, i) => [i + 1, Array.from({ length: width }, () => "x")]);
    assert.throws(() => write([["S", rows(11)]], { ...SHEET_LIMITS, maxRows: 10 }), failsWith("document_too_large", /more than 10 rows/));
    assert.throws(() => write([["S", rows(6, 4)]], { ...SHEET_LIMITS, maxCells: 20 }), failsWith("document_too_large", /more than 20 filled cells/));
    assert.throws(() => write([["S", rows(1, 30)]], { ...SHEET_LIMITS, maxColumns: 16 }), failsWith("document_too_large", /wider than 16 columns/));
    assert.throws(() => write([["S", rows(500)]], { ...SHEET_LIMITS, maxTextChars: 2000 }), failsWith("document_too_large", /more than 2,000 characters/));
  });

  it("cuts a document's table into blocks that each repeat the header", () => {
    const body = Array.from({ length: 100 }, (_, i) => [`row ${i}`, "value"]);
    const blocks = tableBlocks(["Name", "Value"], body, 300);
    assert.ok(blocks.length > 3);
    assert.ok(blocks.every((b) => b.startsWith("| Name | Value |\n| --- | --- |")));
    assert.equal(blocks.join("\n").match(/\| row \d+ \|/g)?.length, 100, "every row once");
    assert.equal(tableText(["a", "", "c"], [["1", "", "3"]]), "| a | c |\n| --- | --- |\n| 1 | 3 |");
  });

  it("converts between column letters and indexes", () => {
    for (const [letters, index] of [["A", 0], ["Z", 25], ["AA", 26], ["AZ", 51], ["XFD", 16383]] as const) {
      assert.equal(columnLetter(index), letters);
      assert.equal(columnIndex(`${letters}12`), index);
    }
    assert.equal(columnIndex("12"), -1);
  });
});
