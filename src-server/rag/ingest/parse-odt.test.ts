import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { officeFixtures } from "../../../test/fixtures/office/build-office.js";
import { odtWith } from "../../../test/fixtures/office/hostile-office.js";
import { parseDocument } from "./parse-document.js";
import { parseDocx } from "./parse-docx.js";
import { parseOdt } from "./parse-odt.js";
import { ParseError, type ParsedDocument, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));

describe("parseOdt", () => {
  let report: ParsedDocument;
  before(async () => {
    report = await parseOdt((await officeFixtures()).odt);
  });

  it("reads Writer's ODT of report.docx with the same structure as the DOCX parser gives", async () => {
    assertOffsets(report);
    assert.equal(report.format, "odt");
    assert.equal(report.title, "Harbour Cooperative Plan 2025", "dc:title from meta.xml");
    assert.deepEqual(headings(report), ["1 Harbour Cooperative Plan", "2 Projects", "2 Budget", "3 Approval"]);
    const docx = await parseDocx(fixture("report.docx"));
    assert.deepEqual(
      report.blocks.map((b) => [b.kind, b.text]),
      docx.blocks.map((b) => [b.kind, b.text]),
    );
    assert.ok(report.blocks.some((b) => b.kind === "table" && b.text === "| Project | Cost (RM) |\n| --- | --- |\n| Warehouse | 850,000 |\n| Training | 40,000 |"));
  });

  it("keeps nested lists, header rows, notes after their paragraph, spaces, and leaves out tracked deletions, comments and indexes", async () => {
    const body =
      '<text:table-of-content><text:index-body><text:p>Contents 1</text:p></text:index-body></text:table-of-content>' +
      '<text:p text:style-name="Title">Laporan tahunan</text:p>' +
      '<text:h text:outline-level="2">Ringkasan</text:h>' +
      "<text:p>Hasil<text:s text:c=\"2\"/>tangkapan naik<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>Sumber: Jabatan Perikanan.</text:p></text:note-body></text:note> tahun ini.<office:annotation><text:p>check this</text:p></office:annotation></text:p>" +
      "<text:tracked-changes><text:changed-region><text:deletion><text:p>deleted words</text:p></text:deletion></text:changed-region></text:tracked-changes>" +
      "<text:list><text:list-item><text:p>Ikan</text:p><text:list><text:list-item><text:p>Kembung</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>Udang</text:p></text:list-item></text:list>" +
      "<table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>Negeri</text:p></table:table-cell><table:table-cell><text:p>Tan</text:p></table:table-cell></table:table-row></table:table-header-rows>" +
      '<table:table-row><table:table-cell><text:p>Kelantan</text:p></table:table-cell><table:table-cell><text:p>1,200</text:p></table:table-cell><table:table-cell table:number-columns-repeated="1000000"/></table:table-row></table:table>';
    const document = await parseOdt(await odtWith(body));
    assertOffsets(document);
    assert.deepEqual(
      document.blocks.map((b) => [b.kind, b.text]),
      [
        ["heading", "Laporan tahunan"],
        ["heading", "Ringkasan"],
        ["paragraph", "Hasil tangkapan naik tahun ini."],
        ["paragraph", "Sumber: Jabatan Perikanan."],
        ["list", "- Ikan\n  - Kembung\n- Udang"],
        ["table", "| Negeri | Tan |\n| --- | --- |\n| Kelantan | 1,200 |"],
      ],
    );
    assert.equal(document.title, "Laporan tahunan", "no dc:title: the first level-1 heading (a Title paragraph)");
  });

  it("refuses repeat bombs in tables, deep nesting and damaged packages, in the parse worker too", async () => {
    const wide = await odtWith('<table:table><table:table-row><table:table-cell table:number-columns-repeated="1000000000"><text:p>x</text:p></table:table-cell></table:table-row></table:table>');
    await assert.rejects(parseOdt(wide), failsWith("document_too_large", /wider than/));
    const tall = await odtWith('<table:table><table:table-row table:number-rows-repeated="1000000000"><table:table-cell><text:p>x</text:p></table:table-cell></table:table-row></table:table>');
    await assert.rejects(parseOdt(tall), failsWith("document_too_large", /more than 200,000 rows/));
    const deep = await odtWith(`${"<text:section>".repeat(10_000)}<text:p>deep</text:p>${"</text:section>".repeat(10_000)}`);
    await assert.rejects(parseOdt(deep), failsWith("document_too_complex"));
    await assert.rejects(parseOdt(await odtWith("")), failsWith("empty_document"));
    await assert.rejects(parseDocument(tall, "odt"), failsWith("document_too_large"));
    await assert.rejects(parseDocument(deep, "odt"), failsWith("document_too_complex"));
  });
});
