/**
 * tesseract.js (WebAssembly) reading the rendered bilingual notice with English and Malay
 * data fetched off a local HTTP server (Debian's tessdata_fast files as the catalog's
 * source): the same page as the native engine reads it, no network beyond that server,
 * bounded in time and memory, clear errors.
 */
import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { crc32, deflateSync } from "node:zlib";
import sharp from "sharp";
import { characterErrorRate, OCR_FIXTURE_TEXT } from "../../../../test/helpers/cer.js";
import { startFileServer, type FileServer } from "../../../../test/helpers/file-server.js";
import { LanguageDataStore } from "./language-data.js";
import { supportedWasmCores, TesseractWasm } from "./tesseract-wasm.js";
import { OcrError, recognise } from "./tesseract.js";

const NOTICE = readFileSync(path.resolve(import.meta.dirname, "../../../../test/fixtures/ocr/notis-air-klang.png"));
const NOTICE_TEXT = OCR_FIXTURE_TEXT["notis-air-klang.png"];

const rejects = async (promise: Promise<unknown>, code: string, message: RegExp) => {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OcrError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
};

/** A PNG that claims `width` x `height` 8-bit grey pixels and holds a few rows: decoding it must allocate the whole image first. */
function claimedPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth; colour type 0 (grey)
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", deflateSync(Buffer.alloc((width + 1) * 16))), chunk("IEND", Buffer.alloc(0))]);
}

describe("tesseract.js OCR (WebAssembly)", () => {
  let server: FileServer;
  let tessdataDir: string;
  let engine: TesseractWasm;
  // Every connection this process opens (fetch, http): only the local catalog server may be one.
  const contacted: string[] = [];
  const onFetch = (message: unknown) => contacted.push((message as { request: { origin: string } }).request.origin);
  const onHttp = (message: unknown) => contacted.push(`http://${(message as { request: { host: string } }).request.host}`);

  before(async () => {
    diagnostics.subscribe("undici:request:create", onFetch);
    diagnostics.subscribe("http.client.request.start", onHttp);
    server = await startFileServer({
      "/eng.traineddata": readFileSync("/usr/share/tesseract-ocr/5/tessdata/eng.traineddata"),
      "/msa.traineddata": readFileSync("/usr/share/tesseract-ocr/5/tessdata/msa.traineddata"),
    });
    const store = new LanguageDataStore({ dataDir: mkdtempSync(path.join(os.tmpdir(), "pustaka-wasm-ocr-")), baseUrl: server.url });
    await store.fetch(["eng", "msa"]);
    tessdataDir = store.dir;
    engine = new TesseractWasm({ tessdataDir });
  });
  after(async () => {
    await engine.close();
    await server.close();
    diagnostics.unsubscribe("undici:request:create", onFetch);
    diagnostics.unsubscribe("http.client.request.start", onHttp);
  });

  it("reads the bilingual notice with eng+msa from the fetched data, as the native engine does", async () => {
    const requestsBefore = server.requests.length;
    const page = await engine.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 120_000 });
    assert.equal(page.width, 1100);
    assert.equal(page.height, 560);
    assert.equal(page.text.split("\n")[0], "NOTIS GANGGUAN BEKALAN AIR");
    assert.match(page.text, /utama\.\n\nWater/, "paragraphs apart, Malay before English as on the page");
    const cer = characterErrorRate(NOTICE_TEXT, page.text);
    assert.ok(cer < 0.02, `CER ${cer}`);
    assert.ok(page.confidence > 80, `mean confidence ${page.confidence}`);
    assert.deepEqual(
      page.words.filter((w) => w.line === 0).map((w) => w.text),
      ["NOTIS", "GANGGUAN", "BEKALAN", "AIR"],
    );
    for (const w of page.words) {
      assert.ok(w.box.left >= 0 && w.box.top >= 0 && w.box.left + w.box.width <= page.width && w.box.top + w.box.height <= page.height, JSON.stringify(w));
      assert.ok(w.confidence >= 0 && w.confidence <= 100);
    }
    // The same models read the same words on the same lines as Debian's tesseract, in the same
    // places within a few pixels (tesseract.js builds another Tesseract 5 release).
    const native = await recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 120_000 });
    assert.equal(page.text, native.text);
    assert.deepEqual(
      page.words.map((w) => [w.text, w.line]),
      native.words.map((w) => [w.text, w.line]),
    );
    page.words.forEach((w, i) => {
      const n = native.words[i]!.box;
      const edges = [w.box.left - n.left, w.box.top - n.top, w.box.left + w.box.width - (n.left + n.width), w.box.top + w.box.height - (n.top + n.height)];
      assert.ok(Math.max(...edges.map(Math.abs)) <= 4, `${w.text}: ${JSON.stringify(w.box)} against ${JSON.stringify(n)}`);
      assert.ok(Math.abs(w.confidence - native.words[i]!.confidence) < 15, `${w.text}: confidence ${w.confidence} against ${native.words[i]!.confidence}`);
    });
    // Reading touched no server: the data was already on disk.
    assert.equal(server.requests.length, requestsBefore);
    assert.match(await engine.describe(), /^tesseract\.js 7\.\d+\.\d+ \(Tesseract 5\.[^,]+, (lstm|simd-lstm|relaxedsimd-lstm)\)$/);
  });

  it("keeps one worker warm between pages and between language sets", async () => {
    const started = engine.stats().workersStarted;
    const english = await engine.recognise(NOTICE, { languages: ["eng"], timeoutMs: 120_000 });
    assert.match(english.text, /Water supply in Klang/);
    await engine.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 120_000 });
    assert.equal(engine.stats().workersStarted, started);
  });

  it("stops a page at its deadline by ending its worker, and reads the next page in a fresh one", async () => {
    const started = engine.stats().workersStarted;
    await rejects(engine.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 1 }), "ocr_timeout", /longer than 1 ms and was stopped/);
    const page = await engine.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 120_000 });
    assert.match(page.text, /Bekalan air di Klang/);
    assert.equal(engine.stats().workersStarted, started + 1);
  });

  it("is cancelled by its signal, mid-page or before its turn", async () => {
    // The notice at four times its size takes seconds to read: cancelled well before the end.
    const large = await sharp(NOTICE).resize(4400, 2240).png().toBuffer();
    const controller = new AbortController();
    const reading = engine.recognise(large, { languages: ["eng"], timeoutMs: 120_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await rejects(reading, "ocr_failed", /cancelled/);
    await rejects(engine.recognise(NOTICE, { languages: ["eng"], timeoutMs: 120_000, signal: controller.signal }), "ocr_failed", /cancelled/);
    assert.match((await engine.recognise(NOTICE, { languages: ["eng"], timeoutMs: 120_000 })).text, /Water supply/);
  });

  it("bounds memory: a page needing more heap than the cap fails, so does an image claiming 50,000 x 50,000 pixels, and the engine reads on", async () => {
    const bounded = new TesseractWasm({ tessdataDir, maxMemoryMb: 64 });
    try {
      // The notice at four times its size: some 120 MiB of heap to read.
      const large = await sharp(NOTICE).resize(4400, 2240).png().toBuffer();
      await rejects(bounded.recognise(large, { languages: ["eng"], timeoutMs: 120_000 }), "ocr_failed", /more than 64 MiB of memory and was stopped/);
      // Leptonica may refuse such a header before allocating, or the cap stops it: either way a clear failure.
      await rejects(bounded.recognise(claimedPng(50_000, 50_000), { languages: ["eng"], timeoutMs: 120_000 }), "ocr_failed", /more than 64 MiB of memory|could not read the image/);
      const page = await bounded.recognise(NOTICE, { languages: ["eng"], timeoutMs: 120_000 });
      assert.match(page.text, /Water supply/);
      assert.ok(bounded.stats().heapBytes > 0 && bounded.stats().heapBytes <= 64 * 1024 * 1024, String(bounded.stats().heapBytes));
    } finally {
      await bounded.close();
    }
  });

  it("refuses what is not an image, an empty file, a missing or malformed language, and work after close", async () => {
    await rejects(engine.recognise(Buffer.from("%PDF-1.4 not an image"), { languages: ["eng"], timeoutMs: 60_000 }), "ocr_failed", /could not read the image/);
    await rejects(engine.recognise(Buffer.alloc(0), { languages: ["eng"], timeoutMs: 60_000 }), "ocr_failed", /could not read the image/);
    await rejects(engine.recognise(NOTICE, { languages: ["tha"], timeoutMs: 60_000 }), "ocr_language_missing", /no data for tha: fetch the OCR language data \(tha\.traineddata\)/);
    await rejects(engine.recognise(NOTICE, { languages: ["../eng"], timeoutMs: 60_000 }), "ocr_language_missing", /not a Tesseract language code/);
    await rejects(engine.recognise(NOTICE, { languages: [], timeoutMs: 60_000 }), "ocr_language_missing", /at least one language/);
    // The worker survived the unreadable files.
    assert.match((await engine.recognise(NOTICE, { languages: ["eng"], timeoutMs: 60_000 })).text, /Water supply/);
    // Language data that is not (a file put there by hand, damaged).
    const damaged = mkdtempSync(path.join(os.tmpdir(), "pustaka-wasm-damaged-"));
    writeFileSync(path.join(damaged, "eng.traineddata"), Buffer.alloc(4096, 7));
    const broken = new TesseractWasm({ tessdataDir: damaged });
    try {
      await rejects(broken.recognise(NOTICE, { languages: ["eng"], timeoutMs: 60_000 }), "ocr_failed", /could not load its language data for eng/);
    } finally {
      await broken.close();
    }
    const closing = new TesseractWasm({ tessdataDir });
    await closing.close();
    await closing.close();
    await rejects(closing.recognise(NOTICE, { languages: ["eng"], timeoutMs: 60_000 }), "ocr_failed", /closed/);
  });

  it("never reached the network: no refused attempt inside the worker, and no connection here but the catalog server's", async () => {
    assert.equal(engine.stats().networkAttempts, 0);
    assert.ok(contacted.length >= 2, "the catalog fetch was seen");
    assert.deepEqual([...new Set(contacted)], [server.url]);
  });

  it("runs each core this runtime supports (the plain one everywhere)", async () => {
    const cores = await supportedWasmCores();
    assert.equal(cores[0], "lstm");
    for (const core of cores) {
      const one = new TesseractWasm({ tessdataDir, core });
      try {
        const page = await one.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 120_000 });
        assert.ok(characterErrorRate(NOTICE_TEXT, page.text) < 0.02, core);
        assert.match(await one.describe(), new RegExp(`, ${core}\\)$`));
      } finally {
        await one.close();
      }
    }
  });
});
