/**
 * Tesseract (Debian's, with English and Malay data) reading a rendered bilingual notice:
 * the words in reading order with boxes inside the page and their confidence, bounded in
 * time, and clear errors for what it cannot do. Missing Tesseract fails loudly: `apt-get
 * install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa` (.ci/run does).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { OcrError, parseTesseractTsv, recognise, tesseractInfo } from "./tesseract.js";

const NOTICE = readFileSync(path.resolve(import.meta.dirname, "../../../../test/fixtures/ocr/notis-air-klang.png"));
const rejects = async (promise: Promise<unknown>, code: string, message: RegExp) => {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OcrError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
};

describe("Tesseract OCR", () => {
  before(async () => {
    const info = await tesseractInfo();
    assert.ok(info, "Tesseract is not installed: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa (.ci/run does)");
    assert.ok(info.languages.includes("eng") && info.languages.includes("msa"), `English and Malay data: ${info.languages.join(", ")}`);
  });

  it("reads a bilingual notice in reading order, with word boxes inside the page and high confidence", async () => {
    const page = await recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 60_000 });
    assert.equal(page.width, 1100);
    assert.equal(page.height, 560);
    const lines = page.text.split("\n");
    assert.equal(lines[0], "NOTIS GANGGUAN BEKALAN AIR");
    assert.match(page.text, /Bekalan air di Klang akan terganggu pada 14 Mac 2024/);
    assert.match(page.text, /penyelenggaraan paip utama\./);
    assert.match(page.text, /Water supply in Klang will be interrupted on 14 March 2024/);
    // Malay before English, as on the page; paragraphs apart.
    assert.ok(page.text.indexOf("Bekalan air") < page.text.indexOf("Water supply"));
    assert.match(page.text, /utama\.\n\nWater/);
    assert.ok(page.confidence > 80, `mean confidence ${page.confidence}`);
    const title = page.words.filter((w) => w.line === 0).map((w) => w.text);
    assert.deepEqual(title, ["NOTIS", "GANGGUAN", "BEKALAN", "AIR"]);
    for (const w of page.words) {
      assert.ok(w.box.left >= 0 && w.box.top >= 0 && w.box.left + w.box.width <= page.width && w.box.top + w.box.height <= page.height, JSON.stringify(w));
      assert.ok(w.confidence >= 0 && w.confidence <= 100);
    }
    // Words of a line sit left to right.
    const first = page.words.filter((w) => w.line === 0);
    for (let i = 1; i < first.length; i++) assert.ok(first[i]!.box.left > first[i - 1]!.box.left);
  });

  it("stops a page at its deadline, and says so", async () => {
    await rejects(recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 1 }), "ocr_timeout", /longer than 1 ms and was stopped/);
  });

  it("refuses what is not an image, an unknown or missing language, and a missing Tesseract, each with what to do", async () => {
    await rejects(recognise(Buffer.from("%PDF-1.4 not an image"), { languages: ["eng"], timeoutMs: 30_000 }), "ocr_failed", /could not read the image/);
    await rejects(recognise(Buffer.alloc(0), { languages: ["eng"], timeoutMs: 30_000 }), "ocr_failed", /could not read the image/);
    await rejects(recognise(NOTICE, { languages: ["tha"], timeoutMs: 30_000 }), "ocr_language_missing", /no data for tha \(Debian: apt-get install tesseract-ocr-tha\)/);
    await rejects(recognise(NOTICE, { languages: ["eng; rm -rf /"], timeoutMs: 30_000 }), "ocr_language_missing", /not a Tesseract language code/);
    await rejects(recognise(NOTICE, { languages: ["eng"], timeoutMs: 30_000, binary: "/nonexistent/tesseract" }), "ocr_unavailable", /apt-get install tesseract-ocr/);
  });

  it("parses TSV rows: the page size, words only (not empty or unconfident cells), lines and paragraphs", () => {
    const header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext";
    const rows = [
      "1\t1\t0\t0\t0\t0\t0\t0\t800\t600\t-1\t",
      "5\t1\t1\t1\t1\t1\t10\t10\t50\t20\t96.5\tCuti",
      "5\t1\t1\t1\t1\t2\t70\t10\t60\t20\t91\ttahunan",
      "5\t1\t1\t1\t2\t1\t10\t40\t40\t20\t88\t18",
      "5\t1\t1\t1\t2\t2\t60\t40\t10\t20\t-1\t ",
      "5\t1\t1\t2\t1\t1\t10\t90\t50\t20\t90\tAnnual",
      "broken row",
    ];
    const page = parseTesseractTsv([header, ...rows].join("\n"));
    assert.equal(page.width, 800);
    assert.equal(page.text, "Cuti tahunan\n18\n\nAnnual");
    assert.deepEqual(page.words.map((w) => [w.text, w.line]), [["Cuti", 0], ["tahunan", 0], ["18", 1], ["Annual", 2]]);
    assert.equal(page.confidence, (96.5 + 91 + 88 + 90) / 4);
    assert.deepEqual(parseTesseractTsv(""), { text: "", words: [], confidence: 0, width: 0, height: 0 });
  });
});
