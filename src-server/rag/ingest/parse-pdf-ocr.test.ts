/**
 * Scanned pages inside PDFs: decided per page, read by OCR in the parse worker, refused
 * clearly when OCR cannot run or an image is too large to decode.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ScanWorkshop } from "../../../test/fixtures/ocr/build-scans.js";
import { parseDocument } from "./parse-document.js";
import { ParseError } from "./types.js";

const run = promisify(execFile);
const FIXTURES = path.resolve(import.meta.dirname, "../../../test/fixtures");

describe("scanned pages in PDFs", { timeout: 300_000 }, () => {
  let shop: ScanWorkshop;
  let noticeScan: string;
  let mixed: string;
  before(async () => {
    shop = await ScanWorkshop.open();
    noticeScan = await shop.imagePdf([path.join(FIXTURES, "ocr/notis-air-klang.png")], "notice-scan");
    // A report whose fourth page was scanned in: pdfunite (poppler) joins the two files.
    mixed = path.join(shop.dir, "mixed.pdf");
    await run("pdfunite", [path.join(FIXTURES, "documents/report.pdf"), noticeScan, mixed]);
  });
  after(() => shop?.close());

  it("reads the text layer where there is one and OCR only the page that is a scan", async () => {
    const progress: [number, number][] = [];
    const parsed = await parseDocument(await readFile(mixed), "pdf", { onProgress: (done, total) => progress.push([done, total]) });
    assert.equal(parsed.pageCount, 4);
    assert.deepEqual(parsed.ocr?.pages.map((p) => [p.page, p.reason]), [[4, "no_text_layer"]]);
    assert.deepEqual(progress, [[0, 1], [1, 1]]);
    const page4 = parsed.blocks.filter((b) => b.page === 4).map((b) => b.text).join("\n");
    assert.match(page4, /Bekalan air di Klang akan terganggu/);
    assert.ok(parsed.blocks.some((b) => b.page === 1 && /Annual/i.test(b.text)), "page 1 from its text layer");
    assert.deepEqual(parsed.warnings, []);
  });

  it("with OCR turned off: a scan-only PDF fails saying it is a scan; a mixed one keeps its text pages and says which were skipped", async () => {
    const off = { ocr: false, ocrLanguages: ["eng", "msa"] };
    const error = await parseDocument(await readFile(noticeScan), "pdf", { settings: off }).catch((e: unknown) => e);
    assert.ok(error instanceof ParseError);
    assert.equal(error.code, "ocr_unavailable");
    assert.match(error.message, /is a scan/);
    const parsed = await parseDocument(await readFile(mixed), "pdf", { settings: off });
    assert.equal(parsed.ocr, undefined);
    assert.match(parsed.warnings.join(" "), /Pages 4 are scanned images and were not read: OCR is turned off/);
  });

  it("refuses to render a page whose image is 50,000 × 50,000 pixels", async () => {
    const bomb = path.join(FIXTURES, "ocr/huge-50000x50000.pdf");
    const before = process.memoryUsage().rss;
    const error = await parseDocument(await readFile(bomb), "pdf").catch((e: unknown) => e);
    assert.ok(error instanceof ParseError, String(error));
    assert.equal(error.code, "image_too_large");
    assert.match(error.message, /50000 × 50000 pixels/);
    assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024);
  });
});
