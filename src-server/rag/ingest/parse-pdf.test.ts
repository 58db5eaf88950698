import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deflateSync } from "node:zlib";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import { buildPdf } from "../../../test/fixtures/documents/build-pdf.js";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { flateBombPdf } from "../../../test/fixtures/documents/fixture-documents.js";
import { hiddenEndstreamBomb, imageAsContentPdf, lzwBomb, manyStreamsPdf, pdfWithForms, zlibBomb } from "../../../test/fixtures/documents/hostile-documents.js";
import { MAX_PDF_INFLATED_BYTES, MAX_PDF_STREAM_BYTES, inspectPdfStreams } from "./inspect-pdf-streams.js";
import { lzwDecode } from "./pdf-filters.js";
import { parsePdf } from "./parse-pdf.js";
import { joinLines, runsToLines } from "./pdf-layout.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode) => (e: unknown) => e instanceof ParseError && e.code === code;

describe("parsePdf", () => {
  it("reads every page, with page numbers on blocks and the page count", async () => {
    const document = await parsePdf(fixture("report.pdf"));
    assertOffsets(document);
    assert.equal(document.format, "pdf");
    assert.equal(document.pageCount, 3);
    const pageOf = (text: string): number | null | undefined => document.blocks.find((b) => b.text.includes(text))?.page;
    assert.equal(pageOf("Harbour Cooperative"), 1);
    assert.equal(pageOf("thousands of ringgit"), 2);
    assert.equal(pageOf("secretary"), 3);
    assert.ok(document.blocks.every((b) => b.page !== null && b.page >= 1 && b.page <= 3));
    assert.ok(!document.blocks.some((b) => /^\d$/.test(b.text)), "page-number footers are not blocks");
  });

  it("finds headings by font size, levels ranked by size, and the title from the first heading", async () => {
    const document = await parsePdf(fixture("report.pdf"));
    assert.deepEqual(headings(document), ["1 Annual Report 2024", "2 1. Introduction", "2 2. Regional Revenue", "3 2.1 Northern Region", "2 3. Outlook"]);
    assert.equal(document.title, "Annual Report 2024");
  });

  it("joins hyphenated line breaks and merges lines into paragraphs by vertical gaps", async () => {
    const document = await parsePdf(fixture("report.pdf"));
    const paragraphs = document.blocks.filter((b) => b.kind === "paragraph" && b.page === 1).map((b) => b.text);
    assert.deepEqual(paragraphs, [
      "This report describes the year of the Harbour Cooperative. It collects information from all four regions and compares it with the previous year.",
      "Membership grew steadily. The board met eleven times and approved the new warehouse in Port Klang.",
    ]);
  });

  it("makes the table a Markdown table (header, delimiter, a row per line) and the bullets a list", async () => {
    const document = await parsePdf(fixture("report.pdf"));
    assert.equal(document.blocks.find((b) => b.kind === "table")?.text, "| Region | Revenue | Growth |\n| --- | --- | --- |\n| North | 1,200 | 4% |\n| South | 950 | 7% |\n| East | 610 | -2% |");
    assert.equal(document.blocks.find((b) => b.kind === "list")?.text, "• open the Port Klang warehouse,\n• train twenty new members,\n• replace the cold-storage units.");
  });

  it("fails a password-protected PDF with encrypted_document (the fixture really is encrypted: the password opens it)", async () => {
    const bytes = fixture("encrypted.pdf");
    await assert.rejects(parsePdf(bytes), failsWith("encrypted_document"));
    const pdf = await getDocument({ data: new Uint8Array(bytes), password: "rahsia", verbosity: 0, isEvalSupported: false }).promise;
    const page = await pdf.getPage(1);
    const text = (await page.getTextContent()).items.map((item) => ("str" in item ? item.str : "")).join(" ");
    assert.match(text, /Annual Report 2024/);
    await pdf.destroy();
  });

  it("fails truncated and non-PDF bytes with corrupt_document", async () => {
    await assert.rejects(parsePdf(fixture("truncated.pdf")), failsWith("corrupt_document"));
    await assert.rejects(parsePdf(Buffer.from("%PDF-1.7\nthis is not really a PDF\n")), failsWith("corrupt_document"));
    await assert.rejects(parsePdf(Buffer.from("hello")), failsWith("corrupt_document"));
  });

  it("fails a PDF without a text layer with empty_document", async () => {
    await assert.rejects(parsePdf(buildPdf([{ texts: [] }, { texts: [] }])), (e: unknown) => failsWith("empty_document")(e) && /OCR/.test((e as Error).message));
  });

  it("warns about pages without text instead of failing the document", async () => {
    const document = await parsePdf(buildPdf([{ texts: [{ x: 72, y: 700, size: 11, text: "Only page one has text." }] }, { texts: [] }]));
    assert.equal(document.pageCount, 2);
    assert.deepEqual(document.warnings, ["Pages 2 hold no text."]);
  });
});

describe("inspectPdfStreams (PDF decompression bombs)", () => {
  it("refuses a 2 MB PDF whose content stream inflates to 1 GiB, without inflating it", async () => {
    const bomb = flateBombPdf(1024);
    assert.ok(bomb.length < 3 * 1024 * 1024);
    const before = process.memoryUsage().rss;
    const started = performance.now();
    await assert.rejects(parsePdf(bomb), failsWith("document_too_large"));
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    assert.ok(process.memoryUsage().rss - before < 300 * 1024 * 1024, "no more than the 128 MB cap was inflated");
  });

  it("sees through a double FlateDecode chain", async () => {
    const inner = Buffer.from(flateBombPdf(512)).toString("latin1");
    const bombStream = inner.slice(inner.indexOf("stream\n", inner.indexOf("/FlateDecode")) + 7, inner.lastIndexOf("\nendstream"));
    const outer = deflateSync(Buffer.from(bombStream, "latin1")).toString("latin1");
    const pdf = buildPdf([{ texts: [{ x: 72, y: 700, size: 11, text: "Hi" }] }], {
      extraObjects: [`<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Filter [/FlateDecode /FlateDecode] >>\nstream\n${outer}`],
    });
    await assert.rejects(inspectPdfStreams(pdf), failsWith("document_too_large"));
  });

  it("refuses streams each under the cap that together pass the total", async () => {
    const pdf = manyStreamsPdf(Math.ceil(MAX_PDF_INFLATED_BYTES / MAX_PDF_STREAM_BYTES) + 1, MAX_PDF_STREAM_BYTES / 1024 ** 2 - 1);
    await assert.rejects(inspectPdfStreams(pdf), (e: unknown) => failsWith("document_too_large")(e) && /in all/.test((e as Error).message));
  });

  it("sees bombs behind other filters: ASCIIHex-wrapped, LZW, an indirect /Filter, a /Length hiding a fake endstream", async () => {
    const bomb = zlibBomb(1024);
    const cases: [string, Uint8Array][] = [
      ["[/AHx /Fl]", pdfWithForms([Buffer.from(`${bomb.toString("hex")}>`)], { filter: "[/AHx /Fl]" })],
      ["/LZWDecode", pdfWithForms([lzwBomb(200)], { filter: "/LZWDecode" })],
      ["indirect /Filter", pdfWithForms([bomb], { filter: "8 0 R", extraObjects: ["[/FlateDecode]"] })],
      ["endstream inside the data", pdfWithForms([hiddenEndstreamBomb(1024)])],
    ];
    for (const [name, pdf] of cases) await assert.rejects(inspectPdfStreams(pdf), failsWith("document_too_large"), name);
    assert.equal(lzwDecode(Buffer.from("800B6050220C0C8501", "hex"), 100).toString(), "-----A---B", "the LZW example of ISO 32000-1 §7.4.4.2");
  });

  it("refuses a bomb in a PDF encrypted with an empty user password (pdf.js opens those)", async () => {
    const pdf = pdfWithForms([zlibBomb(1024)], { userPassword: "" });
    await assert.rejects(inspectPdfStreams(pdf), failsWith("document_too_large"));
    const small = pdfWithForms([zlibBomb(2)], { userPassword: "" });
    assert.match((await parsePdf(small)).text, /Hostile/, "an encrypted PDF within the limits still opens");
  });

  it("never inflates an image stream, even one a page names as its content (nor when the page is rendered for OCR)", async () => {
    const pdf = imageAsContentPdf(2048);
    const before = process.memoryUsage().rss;
    // No text: the page is rendered for OCR, and the image's data, far more than its pixels hold, is refused first.
    await assert.rejects(parsePdf(pdf), failsWith("document_too_large"));
    assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024, "the 2 GiB image was not inflated");
  });

  it("lets ordinary compressed streams through and reads them", async () => {
    const pdf = flateBombPdf(2); // 2 MiB of spaces: large but legitimate
    await inspectPdfStreams(pdf);
    assert.equal((await parsePdf(pdf)).text, "Hello");
  });
});

describe("pdf layout", () => {
  it("joins hyphenated words only before a lower-case continuation", () => {
    assert.equal(joinLines("informa-", "tion here"), "information here");
    assert.equal(joinLines("see 2024-", "2025"), "see 2024- 2025");
    assert.equal(joinLines("Kuala-", "Lumpur"), "Kuala- Lumpur");
    assert.equal(joinLines("soft\u00AD", "hyphen"), "softhyphen");
    assert.equal(joinLines("end.", "Next"), "end. Next");
  });

  it("splits a line into cells at wide gaps and joins close runs with spaces", () => {
    const lines = runsToLines([
      { text: "Name", x: 72, y: 700, width: 30, size: 10, hasEOL: false },
      { text: "Value", x: 200, y: 700, width: 30, size: 10, hasEOL: true },
      { text: "one", x: 72, y: 686, width: 18, size: 10, hasEOL: false },
      { text: "two", x: 92, y: 686, width: 18, size: 10, hasEOL: false },
    ]);
    assert.deepEqual(lines.map((l) => [l.text, l.cells]), [["Name | Value", 2], ["one two", 1]]);
  });
});
