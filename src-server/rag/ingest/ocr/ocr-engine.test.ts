/**
 * Choosing the OCR engine: Debian's Tesseract where it is installed with the languages, the
 * built-in tesseract.js where it is not (a nonexistent binary path stands for a machine
 * without it) and the data folder holds the languages, and a clear `ocr_unavailable`
 * saying what to install or fetch when neither can read them. Both engines read one page.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import sharp from "sharp";
import { characterErrorRate, OCR_FIXTURE_TEXT } from "../../../../test/helpers/cer.js";
import { tessdataDir } from "./language-data.js";
import { chooseOcrEngine, nativeTesseract, wasmTesseract, type OcrEngine } from "./ocr-engine.js";
import { OcrError, recognise } from "./tesseract.js";

const NOTICE = readFileSync(path.resolve(import.meta.dirname, "../../../../test/fixtures/ocr/notis-air-klang.png"));
const NOTICE_TEXT = OCR_FIXTURE_TEXT["notis-air-klang.png"];
const NO_TESSERACT = "/nonexistent/tesseract";

/** A data folder whose built-in engine has these languages (Debian's tessdata_fast files, as the catalog fetches them). */
function dataDirWith(languages: string[]): string {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-ocr-choose-"));
  const dir = tessdataDir(dataDir);
  mkdirSync(dir, { recursive: true });
  for (const l of languages) copyFileSync(`/usr/share/tesseract-ocr/5/tessdata/${l}.traineddata`, path.join(dir, `${l}.traineddata`));
  return dataDir;
}

const unavailable = (message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof OcrError, String(error));
  assert.equal(error.code, "ocr_unavailable");
  assert.match(error.message, message);
  return true;
};

async function using<T>(engine: OcrEngine, use: (engine: OcrEngine) => Promise<T>): Promise<T> {
  try {
    return await use(engine);
  } finally {
    await engine.close();
  }
}

describe("chooseOcrEngine", () => {
  it("picks the installed Tesseract when it has the languages", async () => {
    await using(await chooseOcrEngine({ languages: ["eng", "msa"], dataDir: dataDirWith([]) }), async (engine) => {
      assert.equal(engine.kind, "native");
      assert.match(await engine.describe(), /^tesseract 5\./);
      const page = await engine.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 60_000 });
      assert.ok(characterErrorRate(NOTICE_TEXT, page.text) < 0.02, page.text);
    });
  });

  it("picks the built-in WebAssembly engine where no Tesseract is installed and the data folder has the languages", async () => {
    const dataDir = dataDirWith(["eng", "msa"]);
    await using(await chooseOcrEngine({ languages: ["eng", "msa"], dataDir, binary: NO_TESSERACT }), async (engine) => {
      assert.equal(engine.kind, "wasm");
      assert.match(await engine.describe(), /^tesseract\.js 7\./);
      const page = await engine.recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 120_000 });
      assert.ok(characterErrorRate(NOTICE_TEXT, page.text) < 0.02, page.text);
      assert.equal(page.width, 1100);
    });
  });

  it("fails clearly, saying what to install or fetch, when neither engine has the languages", async () => {
    const empty = dataDirWith([]);
    await assert.rejects(
      chooseOcrEngine({ languages: ["eng", "msa"], dataDir: empty, binary: NO_TESSERACT }),
      unavailable(
        new RegExp(
          "^No OCR engine can read eng\\+msa: Tesseract is not installed \\(Debian: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa\\), " +
            `and the built-in engine has no language data for eng, msa \\(fetch English \\(eng\\.traineddata, 4\\.1 MB\\) and Malay \\(msa\\.traineddata, 1\\.7 MB\\) into ${tessdataDir(empty).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\)\\.$`,
        ),
      ),
    );
    // Only what is missing is named.
    await assert.rejects(chooseOcrEngine({ languages: ["eng", "msa"], dataDir: dataDirWith(["eng"]), binary: NO_TESSERACT }), unavailable(/no language data for msa \(fetch Malay \(msa\.traineddata, 1\.7 MB\)/));
    // Tesseract is installed, without Thai; the data folder has no Thai either (nor does the catalog).
    await assert.rejects(
      chooseOcrEngine({ languages: ["eng", "tha"], dataDir: dataDirWith(["eng"]) }),
      unavailable(/the installed Tesseract has no data for tha \(Debian: apt-get install tesseract-ocr-tha\), and the built-in engine has no language data for tha \(fetch tha\.traineddata \(not in the OCR language catalog/),
    );
    for (const languages of [[], ["eng; rm -rf /"], ["../../eng"]]) {
      await assert.rejects(chooseOcrEngine({ languages, dataDir: empty }), (error: unknown) => error instanceof OcrError && error.code === "ocr_language_missing");
    }
  });

  it("reads only the first page of a multi-page TIFF, with either engine, Deflate-compressed too", async () => {
    const second = await sharp({ text: { text: "HALAMAN KEDUA SAHAJA", dpi: 300 } })
      .extend({ top: 100, left: 100, right: 100, bottom: 100, background: "white" })
      .flatten({ background: "white" })
      .resize(1100, 560, { fit: "contain", background: "white" })
      .png()
      .toBuffer();
    const tiff = await sharp([NOTICE, second], { join: { animated: true } })
      .tiff({ compression: "deflate" })
      .toBuffer();
    assert.equal((await sharp(tiff).metadata()).pages, 2);
    const alone = await recognise(NOTICE, { languages: ["eng", "msa"], timeoutMs: 60_000 });
    // Tesseract's command line reads every page of a TIFF into one result…
    const whole = await recognise(tiff, { languages: ["eng", "msa"], timeoutMs: 60_000 });
    assert.ok(whole.words.length > alone.words.length, `${whole.words.length} words from both pages`);
    // …the engines hand it one page.
    const native = await using(nativeTesseract(), (e) => e.recognise(tiff, { languages: ["eng", "msa"], timeoutMs: 60_000 }));
    assert.equal(native.text, alone.text);
    const wasm = await using(wasmTesseract({ tessdataDir: tessdataDir(dataDirWith(["eng", "msa"])) }), (e) => e.recognise(tiff, { languages: ["eng", "msa"], timeoutMs: 120_000 }));
    assert.equal(wasm.text, alone.text);
    await assert.rejects(
      using(nativeTesseract(), (e) => e.recognise(Buffer.from("II*\0 a broken TIFF"), { languages: ["eng"], timeoutMs: 60_000 })),
      (error: unknown) => error instanceof OcrError && error.code === "ocr_failed" && /TIFF image could not be read/.test(error.message),
    );
  });
});
