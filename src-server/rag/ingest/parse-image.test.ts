import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import sharp from "sharp";
import { ScanWorkshop } from "../../../test/fixtures/ocr/build-scans.js";
import { detectFormat } from "./detect-format.js";
import { parseDocument } from "./parse-document.js";
import { ParseError } from "./types.js";

const OCR = path.resolve(import.meta.dirname, "../../../test/fixtures/ocr");
const NOTICE = path.join(OCR, "notis-air-klang.png");

async function rejection(promise: Promise<unknown>): Promise<ParseError> {
  const error = await promise.then(
    () => assert.fail("expected a ParseError"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ParseError, String(error));
  return error;
}

describe("image files read by OCR", { timeout: 300_000 }, () => {
  let shop: ScanWorkshop;
  before(async () => (shop = await ScanWorkshop.open()));
  after(() => shop?.close());

  it("reads a PNG notice in Malay and English as one page, its title a heading", async () => {
    const bytes = await readFile(NOTICE);
    assert.equal(detectFormat(bytes, "notis.png"), "png");
    const parsed = await parseDocument(bytes, "png");
    assert.equal(parsed.format, "png");
    assert.equal(parsed.pageCount, 1);
    assert.match(parsed.text, /Bekalan air di Klang akan terganggu pada 14 Mac 2024/);
    assert.match(parsed.text, /Water supply in Klang will be interrupted on 14 March 2024/);
    assert.equal(parsed.title, "NOTIS GANGGUAN BEKALAN AIR");
    assert.ok(parsed.blocks.every((b) => b.page === 1));
    const [page] = parsed.ocr!.pages;
    assert.equal(page!.reason, "image");
    assert.deepEqual([page!.width, page!.height], [1100, 560], "boxes refer to the image as it is");
    const klang = page!.words.find((w) => w.text === "Klang")!;
    assert.ok(klang.box[0] > 0 && klang.box[1] > 0 && klang.box[0] + klang.box[2] < 1100);
  });

  it("reads a JPEG, and a TIFF's frames as its pages with progress per page", async () => {
    const jpeg = await readFile(await shop.convert(NOTICE, "notis.jpg", ["-quality", "85"]));
    assert.equal(detectFormat(jpeg, "scan"), "jpeg");
    assert.match((await parseDocument(jpeg, "jpeg")).text, /Syarikat Air Selangor/);

    const tiffPath = await shop.convert(NOTICE, "notis.tif", [NOTICE, "-compress", "lzw"]);
    const tiff = await readFile(tiffPath);
    assert.equal((await sharp(tiff).metadata()).pages, 2, "the fixture holds two frames");
    const progress: [number, number][] = [];
    const parsed = await parseDocument(tiff, "tiff", { onProgress: (done, total) => progress.push([done, total]) });
    assert.equal(parsed.pageCount, 2);
    assert.deepEqual([...new Set(parsed.blocks.map((b) => b.page))], [1, 2]);
    assert.deepEqual(parsed.ocr!.pages.map((p) => p.page), [1, 2]);
    assert.deepEqual(progress, [[0, 2], [1, 2], [2, 2]]);
  });

  it("straightens a photo of a page taken askew, and puts the words' boxes back on the image as it is", async () => {
    const turned = await readFile(await shop.convert(NOTICE, "turned.png", ["-background", "white", "-rotate", "3"]));
    const parsed = await parseDocument(turned, "png");
    const page = parsed.ocr!.pages[0]!;
    assert.ok(Math.abs(Math.abs(page.deskewed ?? 0) - 3) <= 0.3, `straightened by ${page.deskewed}°`);
    const meta = await sharp(turned).metadata();
    assert.deepEqual([page.width, page.height], [meta.width, meta.height]);
    // Each word's box, on the turned image, holds ink: darker than the page as a whole.
    const { data, info } = await sharp(turned).greyscale().raw().toBuffer({ resolveWithObject: true });
    const mean = (x0: number, y0: number, w: number, h: number) => {
      let sum = 0;
      for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) sum += data[y * info.width + x]!;
      return sum / Math.max(1, w * h);
    };
    const pageMean = mean(0, 0, info.width, info.height);
    const long = page.words.filter((w) => w.text.length >= 5);
    assert.ok(long.length > 10);
    const inked = long.filter((w) => mean(...w.box) < pageMean - 10).length;
    assert.ok(inked / long.length > 0.9, `${inked} of ${long.length} boxes hold ink`);
  });

  it("refuses an image of 50,000 × 50,000 pixels from its header, without decoding it", async () => {
    const huge = await readFile(path.join(OCR, "huge-50000x50000.tif"));
    const meta = await sharp(huge, { limitInputPixels: false }).metadata();
    assert.deepEqual([meta.width, meta.height], [50_000, 50_000], "the committed fixture is what it says");
    const before = process.memoryUsage().rss;
    const error = await rejection(parseDocument(huge, "tiff"));
    assert.equal(error.code, "image_too_large");
    assert.match(error.message, /50,000 × 50,000 pixels/);
    assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024, "nothing the size of the image was allocated");
  });

  it("refuses a TIFF of 10,000 pages before reading any", async () => {
    const bytes = await readFile(await shop.convert("xc:white", "many.tif", ["-duplicate", "9999"]));
    const error = await rejection(parseDocument(bytes, "tiff", { timeoutMs: 60_000 }));
    assert.equal(error.code, "document_too_large");
    assert.match(error.message, /10,000 pages/);
  });

  it("fails a damaged image, an image without text, and OCR in a language not installed, each with its code", async () => {
    const png = await readFile(NOTICE);
    assert.equal((await rejection(parseDocument(png.subarray(0, 2000), "png"))).code, "corrupt_document");
    const blank = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#ffffff" } }).png().toBuffer();
    const empty = await rejection(parseDocument(blank, "png"));
    assert.equal(empty.code, "empty_document");
    assert.match(empty.message, /OCR found no text/);
    const unavailable = await rejection(parseDocument(png, "png", { settings: { ocr: true, ocrLanguages: ["eng", "tha"] } }));
    assert.equal(unavailable.code, "ocr_unavailable");
    assert.match(unavailable.message, /tha/);
    const off = await rejection(parseDocument(png, "png", { settings: { ocr: false, ocrLanguages: ["eng"] } }));
    assert.equal(off.code, "ocr_unavailable");
    assert.match(off.message, /turned off/);
  });
});

describe("the built-in OCR engine (tesseract.js), as the desktop app uses it without Tesseract", { timeout: 300_000 }, () => {
  it("reads the notice with language data from the data folder, and names the engine in the report", async () => {
    const { mkdtemp, mkdir, copyFile, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const dataDir = await mkdtemp(path.join(tmpdir(), "pustaka-ocr-data-"));
    try {
      const tessdata = path.join(dataDir, "ocr", "tessdata");
      await mkdir(tessdata, { recursive: true });
      // What the catalog fetches (the same files Debian installs: their checksums are pinned in language-data.ts).
      for (const language of ["eng", "msa"]) await copyFile(`/usr/share/tesseract-ocr/5/tessdata/${language}.traineddata`, path.join(tessdata, `${language}.traineddata`));
      const parsed = await parseDocument(await readFile(NOTICE), "png", { settings: { ocr: true, ocrLanguages: ["eng", "msa"], dataDir, ocrEngine: "builtin" } });
      assert.match(parsed.ocr!.engine, /tesseract\.js|WebAssembly/i);
      assert.match(parsed.text, /Bekalan air di Klang akan terganggu pada 14 Mac 2024/);
      const missing = await parseDocument(await readFile(NOTICE), "png", { settings: { ocr: true, ocrLanguages: ["eng", "tha"], dataDir, ocrEngine: "builtin" } }).catch((e: unknown) => e);
      assert.ok(missing instanceof ParseError);
      assert.equal(missing.code, "ocr_unavailable");
      assert.match(missing.message, /tha/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
