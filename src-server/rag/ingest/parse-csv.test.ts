import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { parseByFormat } from "./parse-by-format.js";
import { parseCsv, sniffDelimiter } from "./parse-csv.js";
import { parseDocument } from "./parse-document.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));
const tables = (text: string) => text.split("\n\n").filter((b) => b.startsWith("|"));

/** `rows` records of "digit,digit\n": 10 million of them are 40 MB, under the upload limit. */
function hugeCsv(rows: number): Buffer {
  const bytes = Buffer.alloc(4 * rows + 4);
  bytes.write("a,b\n", 0, "latin1");
  for (let i = 1; i <= rows; i++) {
    const at = 4 * i;
    bytes[at] = 0x30 + (i % 10);
    bytes[at + 1] = 0x2c;
    bytes[at + 2] = 0x30 + (i % 7);
    bytes[at + 3] = 0x0a;
  }
  return bytes;
}

describe("parseCsv", () => {
  it("reads the first row as the header, quoted fields with commas, quotes and line breaks, and numbers rows as a spreadsheet does", async () => {
    const csv = 'Name,Town,Note\nSiti Aminah,"Kuala Terengganu, Terengganu","She said ""yes"""\n\n"Lim\nMei Ling",Ipoh,\n';
    const document = await parseCsv(Buffer.from(csv));
    assertOffsets(document);
    assert.equal(document.format, "csv");
    assert.equal(document.title, null);
    assert.deepEqual(headings(document), ["2 Rows 2–4"], "no sheet heading; row 3 is empty, row 4 spans two lines");
    assert.equal(document.blocks[1]!.text, '| Name | Town | Note |\n| --- | --- | --- |\n| Siti Aminah | Kuala Terengganu, Terengganu | She said "yes" |\n| Lim Mei Ling | Ipoh |  |');
  });

  it("sniffs semicolons (with decimal commas) and tabs as delimiters", async () => {
    assert.equal(sniffDelimiter("Negeri;Hujan (mm);Suhu\nKelantan;2,5;31,2\nPahang;1,25;30,5\n"), ";");
    assert.equal(sniffDelimiter("a\tb\tc\n1\t2\t3\n"), "\t");
    assert.equal(sniffDelimiter('a,b,"c;d"\n1,2,"3;4"\n'), ",");
    assert.equal(sniffDelimiter("one column\nsecond line\n"), ",");
    const semicolons = await parseCsv(Buffer.from("Negeri;Hujan (mm)\nKelantan;2,5\nPahang;1,25\n"));
    assert.ok(semicolons.text.includes("| Kelantan | 2,5 |"));
    const tabs = await parseCsv(Buffer.from("Item\tQty\nIkan kembung\t12\n"));
    assert.ok(tabs.text.includes("| Ikan kembung | 12 |"));
  });

  it("decodes UTF-16 with a byte-order mark and Windows-1252, saying so for the latter", async () => {
    const malay = "Nama,Catatan\nNurul Izzah,Bayaran diterima — terima kasih\n";
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(malay, "utf16le")]);
    const fromUtf16 = await parseCsv(utf16);
    assert.ok(fromUtf16.text.includes("| Nurul Izzah | Bayaran diterima — terima kasih |"));
    assert.deepEqual(fromUtf16.warnings, []);
    const latin = Buffer.from([...Buffer.from("Caf"), 0xe9, ...Buffer.from(",Price\nCr"), 0xe8, ...Buffer.from("me br"), 0xfb, ...Buffer.from("l"), 0xe9, ...Buffer.from(","), 0x80, ...Buffer.from("4\n")]);
    const fromLatin = await parseCsv(latin);
    assert.ok(fromLatin.text.includes("| Café | Price |") && fromLatin.text.includes("| Crème brûlé | €4 |"), fromLatin.text);
    assert.match(fromLatin.warnings[0]!, /Windows-1252/);
  });

  it("cuts a long file into tables that each repeat the header and name their rows", async () => {
    const lines = ["Date,Branch,Amount (RM)"];
    for (let i = 1; i <= 300; i++) lines.push(`2024-01-${String((i % 28) + 1).padStart(2, "0")},Branch ${i},${i * 10}`);
    const document = await parseCsv(Buffer.from(lines.join("\r\n")));
    const parts = tables(document.text);
    assert.ok(parts.length > 5);
    assert.ok(parts.every((t) => t.startsWith("| Date | Branch | Amount (RM) |\n")));
    assert.match(headings(document).at(-1)!, /^2 Rows? (\d+–)?301$/, "the last table ends at the last row");
  });

  it("refuses empty, malformed and non-tabular files with a clear code", async () => {
    await assert.rejects(parseCsv(Buffer.from("")), failsWith("empty_document"));
    await assert.rejects(parseCsv(Buffer.from("\n\n , \n")), failsWith("empty_document"));
    await assert.rejects(parseCsv(Buffer.from('a,b\n"never closed,2\n')), failsWith("corrupt_document", /Quote Not Closed/i));
    await assert.rejects(parseCsv(Buffer.from(`a,b\n${"x".repeat(1_100_000)},1\n`)), failsWith("document_too_large", /row longer than/));
  });

  it("stops a CSV of 10 million rows at the row limit, in the parse worker too, within its memory", async () => {
    const csv = hugeCsv(10_000_000);
    assert.ok(csv.length < 50 * 1024 * 1024, "small enough to upload");
    await assert.rejects(parseByFormat(csv, "csv"), failsWith("document_too_large", /more than 1,000,000 rows/));
    // The worker's heap is 192 MB: had the rows been collected first, it would have failed as too complex (out of memory).
    const started = performance.now();
    await assert.rejects(parseDocument(csv, "csv"), failsWith("document_too_large", /more than 1,000,000 rows/));
    console.log(`10M-row CSV refused by the parse worker in ${Math.round(performance.now() - started)} ms`);
  });
});
