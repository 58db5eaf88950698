/**
 * Scans and images over the API (issue 34): what the server can read (`GET /v1/rag/ocr`), a
 * corpus's OCR languages (checked against what is installed), a scanned PDF and image files
 * indexed with per-page progress, the document's OCR report, a search citing the scanned
 * page, the words and boxes of an OCR'd page, a page of an image as an image, and the
 * built-in engine's language data fetched from a local catalog mirror.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import sharp from "sharp";
import { ScanWorkshop } from "../fixtures/ocr/build-scans.js";
import { startFileServer, type FileServer } from "../helpers/file-server.js";
import { testModel } from "../helpers/models.js";
import { collectEvents, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const OCR = path.resolve(import.meta.dirname, "../fixtures/ocr");
const NOTICE = path.join(OCR, "notis-air-klang.png");

describe("OCR over the API", { timeout: 600_000 }, () => {
  let t: TestServer;
  let shop: ScanWorkshop;
  let mirror: FileServer;
  let corpusId: string;

  before(async () => {
    shop = await ScanWorkshop.open();
    // A mirror of the built-in engine's language data: the catalog's files, served on loopback.
    mirror = await startFileServer({ "/msa.traineddata": await readFile("/usr/share/tesseract-ocr/5/tessdata/msa.traineddata") });
    t = await startTestServer({
      bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2"), "svc-embed-1024": testModel("embed-1024") },
      config: { rag: { ocr: { languageDataUrl: mirror.url } } },
    });
  });
  after(async () => {
    await t?.close();
    await mirror?.close();
    await shop?.close();
  });

  it("says what it can read: Tesseract with English and Malay, and the built-in engine's catalog", async () => {
    const res = await t.call("GET", "/v1/rag/ocr");
    assert.equal(res.status, 200);
    assert.equal(res.json.object, "rag.ocr");
    assert.equal(res.json.available, true);
    assert.equal(res.json.engine, "tesseract");
    assert.match(res.json.version, /^5\./);
    assert.ok(["eng", "msa"].every((l) => res.json.languages.includes(l)));
    assert.ok(!res.json.languages.includes("osd"), "orientation data is not a language");
    assert.deepEqual(res.json.default_languages, ["eng", "msa"]);
    assert.equal(res.json.reason, null);
  });

  it("creates a corpus with OCR languages checked against what is installed", async () => {
    const bad = await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "minilm", ocr_languages: ["english"] });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, "invalid_ocr_languages");
    const missing = await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "minilm", ocr_languages: ["eng", "tha"] });
    assert.equal(missing.status, 400);
    assert.match(missing.json.error.message, /tha.*tesseract-ocr-tha/);
    const twice = await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "minilm", ocr_languages: ["eng", "eng"] });
    assert.equal(twice.status, 400);
    const plain = await t.call("POST", "/v1/rag/corpora", { name: "Default", embedding_model: "minilm" });
    assert.deepEqual(plain.json.ocr_languages, ["eng", "msa"], "the default: English and Malay");
    const created = await t.call("POST", "/v1/rag/corpora", { name: "Notis", embedding_model: "minilm", ocr_languages: ["msa"] });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.deepEqual(created.json.ocr_languages, ["msa"]);
    corpusId = created.json.id;
    const patched = await t.call("PATCH", `/v1/rag/corpora/${corpusId}`, { ocr_languages: ["msa", "eng"] });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.json.ocr_languages, ["msa", "eng"]);
    assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.ocr_languages, ["msa", "eng"]);
  });

  it("indexes a scanned PDF and image files, reporting pages read and progress page by page", async () => {
    const scan = await shop.scan(await shop.imagePdf([NOTICE, NOTICE], "two-notices"), { dpi: 200, skew: 2, noise: 0.3 });
    const tiff = await readFile(await shop.convert(NOTICE, "notis.tif", [NOTICE, "-compress", "lzw"]));
    const jpeg = await readFile(await shop.convert(NOTICE, "notis.jpg", ["-quality", "85"]));
    const events: any[] = [];
    const listening = collectEvents(`${t.url}/v1/rag/corpora/${corpusId}/events`, t.key, (e) => {
      events.push(e);
      return e.object === "rag.corpus.snapshot" && e.corpus.status === "ready";
    });
    const res = await upload(t, corpusId, [
      { name: "notis-imbasan.pdf", content: await readFile(scan) },
      { name: "notis.png", content: await readFile(NOTICE) },
      { name: "notis.tif", content: tiff },
      { name: "notis.jpg", content: jpeg },
    ]);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.deepEqual(res.json.rejected, []);
    const corpus = await waitForStatus(t, corpusId);
    assert.equal(corpus.document_counts.indexed, 4, JSON.stringify(corpus));
    await listening;
    const pdf = res.json.documents[0].id;
    const parsing = events.filter((e) => e.object === "rag.document.progress" && e.document_id === pdf && e.stage === "parsing").map((e) => [e.done, e.total, e.ocr]);
    // The indexer's opening "0 of 1", then each page OCR reads, marked as OCR's.
    assert.deepEqual(parsing, [[0, 1, false], [0, 2, true], [1, 2, true], [2, 2, true]], `pages read one by one: ${JSON.stringify(parsing)}`);

    const docs = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?limit=10`)).json.data;
    const byName = Object.fromEntries(docs.map((d: any) => [d.filename, d]));
    const scanned = byName["notis-imbasan.pdf"];
    assert.equal(scanned.page_count, 2);
    assert.deepEqual(scanned.ocr.languages, ["msa", "eng"]);
    assert.match(scanned.ocr.engine, /^tesseract 5/);
    assert.deepEqual(scanned.ocr.pages.map((p: any) => [p.page, p.reason]), [[1, "no_text_layer"], [2, "no_text_layer"]]);
    assert.ok(scanned.ocr.pages.every((p: any) => p.confidence > 80 && p.words > 40 && Math.abs(Math.abs(p.deskewed) - 2) < 0.4), JSON.stringify(scanned.ocr));
    assert.deepEqual(byName["notis.tif"].ocr.pages.map((p: any) => [p.page, p.reason]), [[1, "image"], [2, "image"]]);
    assert.equal(byName["notis.jpg"].page_count, 1);
    assert.equal(byName["notis.jpg"].content_type, "image/jpeg");
  });

  it("finds the scanned text and cites its page; the page's words come with their boxes", async () => {
    const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "bekalan air Klang terganggu 14 Mac", top_k: 10 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const hit = res.json.data.find((h: any) => h.filename === "notis-imbasan.pdf");
    assert.ok(hit, JSON.stringify(res.json.data.map((h: any) => h.filename)));
    assert.ok([1, 2].includes(hit.page_start), "the citation names a scanned page");
    assert.match(hit.text, /Bekalan air di Klang/);

    const page = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${hit.document_id}/pages/${hit.page_start}/ocr`);
    assert.equal(page.status, 200, JSON.stringify(page.json));
    assert.equal(page.json.object, "rag.ocr_page");
    const klang = page.json.words.filter((w: any) => w.text === "Klang");
    assert.equal(klang.length, 2, "Klang twice on the notice");
    for (const w of page.json.words) {
      const [left, top, width, height] = w.box;
      assert.ok(left >= 0 && top >= 0 && width > 0 && height > 0 && left + width <= page.json.width && top + height <= page.json.height, JSON.stringify(w));
    }
    // The boxes are on the page as it was scanned (turned 2°): the page image is that size.
    assert.ok(page.json.width > 1000 && page.json.height > 500);

    const notOcr = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${hit.document_id}/pages/3/ocr`);
    assert.equal(notOcr.status, 404);
    assert.equal(notOcr.json.error.code, "page_not_ocr");
    const badPage = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${hit.document_id}/pages/0/ocr`);
    assert.equal(badPage.status, 400);
    assert.equal(badPage.json.error.code, "invalid_page");
  });

  it("shows a page of an image document as an image, a TIFF frame as PNG", async () => {
    const docs = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?limit=10`)).json.data;
    const tiff = docs.find((d: any) => d.filename === "notis.tif");
    const res = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/documents/${tiff.id}/pages/2/image`, { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.match(res.headers.get("content-security-policy") ?? "", /sandbox/);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ["png", 1100, 560]);
    const beyond = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${tiff.id}/pages/3/image`);
    assert.equal(beyond.status, 400);
    assert.equal(beyond.json.error.code, "page_out_of_range");
    const pdf = docs.find((d: any) => d.filename === "notis-imbasan.pdf");
    const notImage = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${pdf.id}/pages/1/image`);
    assert.equal(notImage.status, 400);
    assert.equal(notImage.json.error.code, "document_not_image");
  });

  it("fetches the built-in engine's language data from the catalog mirror, checked against its sha256", async () => {
    const before = (await t.call("GET", "/v1/rag/ocr")).json;
    const entry = before.language_data.find((l: any) => l.language === "msa");
    assert.equal(entry.state, "missing");
    const fetched = await t.call("POST", "/v1/rag/ocr/languages/msa");
    assert.equal(fetched.status, 200, JSON.stringify(fetched.json));
    assert.equal(fetched.json.language_data.find((l: any) => l.language === "msa").state, "installed");
    const stored = await readFile(path.join(t.dataDir, "ocr", "tessdata", "msa.traineddata"));
    assert.equal(createHash("sha256").update(stored).digest("hex"), createHash("sha256").update(await readFile("/usr/share/tesseract-ocr/5/tessdata/msa.traineddata")).digest("hex"));
    const unknown = await t.call("POST", "/v1/rag/ocr/languages/klingon");
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.error.code, "unknown_ocr_language");
    const failed = await t.call("POST", "/v1/rag/ocr/languages/eng");
    assert.equal(failed.status, 502, "the mirror does not hold it");
    assert.equal(failed.json.error.code, "ocr_data_fetch_failed");
  });
});
