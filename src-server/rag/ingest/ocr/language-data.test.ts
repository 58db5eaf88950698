/**
 * OCR language data fetched like a model, against a local HTTP server that serves Debian's
 * tessdata_fast files (tesseract-ocr-eng, -msa) as the catalog's source: pinned checksums,
 * resume after a dropped connection, a tampered file refused and deleted, status for the UI,
 * and nothing fetched again once installed (offline).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startFileServer, type FileServer } from "../../../../test/helpers/file-server.js";
import { DEFAULT_LANGUAGE_DATA_URL, LanguageDataError, LanguageDataStore, languageDataCatalog, type LanguageDataStatus } from "./language-data.js";

const DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata";
const debianFile = (language: string) => readFileSync(path.join(DEBIAN_TESSDATA, `${language}.traineddata`));
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const tempDataDir = () => mkdtempSync(path.join(os.tmpdir(), "pustaka-ocr-data-"));

const failsWith = (code: string, message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof LanguageDataError, String(error));
  assert.equal(error.code, code);
  assert.match(error.message, message);
  return true;
};

describe("OCR language data", () => {
  let eng: Buffer;
  let msa: Buffer;
  let server: FileServer;
  before(async () => {
    eng = debianFile("eng");
    msa = debianFile("msa");
    server = await startFileServer({ "/eng.traineddata": eng, "/msa.traineddata": msa });
  });
  after(() => server.close());

  it("pins each catalog file to the bytes Debian's tessdata_fast packages install, under a commit-pinned default URL", () => {
    const catalog = languageDataCatalog();
    assert.deepEqual(
      catalog.map((e) => e.language),
      ["eng", "msa"],
    );
    for (const entry of catalog) {
      const file = debianFile(entry.language);
      assert.equal(entry.bytes, file.length, `${entry.language} size`);
      assert.equal(entry.sha256, sha256(file), `${entry.language} checksum`);
      assert.equal(entry.url, `${DEFAULT_LANGUAGE_DATA_URL}/${entry.file}`);
    }
    assert.match(DEFAULT_LANGUAGE_DATA_URL, /^https:\/\/raw\.githubusercontent\.com\/tesseract-ocr\/tessdata_fast\/[0-9a-f]{40}$/);
    // A mirror replaces the base, not the checksums.
    const mirror = languageDataCatalog("http://mirror.example.test/ocr/");
    assert.equal(mirror[0]!.url, "http://mirror.example.test/ocr/eng.traineddata");
    assert.equal(mirror[0]!.sha256, catalog[0]!.sha256);
    assert.throws(() => languageDataCatalog("file:///etc"), failsWith("invalid_source", /HTTP\(S\), not file:/));
    assert.throws(() => languageDataCatalog("not a url"), failsWith("invalid_source", /not a URL/));
  });

  it("fetches from the configured source, reports fetching with bytes, installs verified files, and works offline after", async () => {
    const dataDir = tempDataDir();
    const store = new LanguageDataStore({ dataDir, baseUrl: server.url });
    assert.deepEqual(
      store.status().map((s) => [s.language, s.state, s.received]),
      [
        ["eng", "missing", 0],
        ["msa", "missing", 0],
      ],
    );
    server.requests.length = 0;
    const seen: LanguageDataStatus[][] = [];
    const progress: number[] = [];
    await store.fetch(["eng", "msa"], {
      onProgress: (p) => {
        progress.push(p.received);
        seen.push(store.status());
      },
    });
    assert.equal(progress.at(-1), eng.length + msa.length);
    assert.ok(
      progress.every((p, i) => i === 0 || p >= progress[i - 1]!),
      "progress only grows",
    );
    const fetchingEng = seen.flat().filter((s) => s.language === "eng" && s.state === "fetching");
    assert.ok(fetchingEng.length > 0, "eng was shown as fetching");
    assert.ok(fetchingEng.some((s) => s.received > 0 && s.received <= eng.length));
    assert.deepEqual(
      store.status().map((s) => [s.language, s.state, s.received]),
      [
        ["eng", "installed", eng.length],
        ["msa", "installed", msa.length],
      ],
    );
    assert.deepEqual(readFileSync(path.join(dataDir, "ocr", "tessdata", "eng.traineddata")), eng);
    assert.deepEqual(readFileSync(store.file("msa")), msa);
    assert.deepEqual(readdirSync(store.dir).sort(), ["eng.traineddata", "msa.traineddata"], "no partial files left");
    assert.equal(server.requests.length, 2);

    // Installed: asking again sends nothing, even with the source gone.
    const offline = new LanguageDataStore({ dataDir, baseUrl: "http://127.0.0.1:9/unreachable" });
    await offline.fetch(["eng", "msa"]);
    assert.ok(offline.installed("eng") && offline.installed("msa"));
    assert.equal(server.requests.length, 2);
  });

  it("resumes a download cut midway with a Range request and ends byte-identical", async () => {
    const store = new LanguageDataStore({ dataDir: tempDataDir(), baseUrl: server.url });
    server.dropNextAfter = 1_000_000;
    await assert.rejects(store.fetch(["eng"]), failsWith("download_failed", /English OCR data \(eng\.traineddata\)/));
    const partial = statSync(path.join(store.dir, "eng.traineddata.part")).size;
    assert.ok(partial > 0 && partial < eng.length, `partial file has ${partial} bytes`);
    assert.deepEqual(
      store.status().find((s) => s.language === "eng"),
      { language: "eng", name: "English", file: "eng.traineddata", bytes: eng.length, state: "missing", received: partial },
    );
    server.requests.length = 0;
    await store.fetch(["eng"]);
    assert.deepEqual(server.requests, [{ range: `bytes=${partial}-` }]);
    assert.deepEqual(readFileSync(store.file("eng")), eng);
    assert.ok(!existsSync(path.join(store.dir, "eng.traineddata.part")));
  });

  it("refuses a file whose checksum differs and leaves nothing behind", async () => {
    const tampered = Buffer.from(eng);
    tampered[tampered.length >> 1]! ^= 0xff; // same size, one byte changed
    const bad = await startFileServer({ "/eng.traineddata": tampered });
    try {
      const store = new LanguageDataStore({ dataDir: tempDataDir(), baseUrl: bad.url });
      await assert.rejects(store.fetch(["eng"]), failsWith("checksum_mismatch", /English OCR data from http:\/\/127\.0\.0\.1:\d+\/eng\.traineddata is not the file the catalog names.*deleted/));
      assert.deepEqual(readdirSync(store.dir), []);
      assert.equal(store.installed("eng"), false);
      assert.deepEqual(
        store.status().map((s) => [s.language, s.state, s.received]),
        [
          ["eng", "missing", 0],
          ["msa", "missing", 0],
        ],
      );
    } finally {
      await bad.close();
    }
  });

  it("joins a second fetch of the same file to the first (one download), from the same store or another on the folder", async () => {
    const dataDir = tempDataDir();
    const store = new LanguageDataStore({ dataDir, baseUrl: server.url });
    const other = new LanguageDataStore({ dataDir, baseUrl: server.url });
    server.requests.length = 0;
    const first = store.fetch(["msa"]);
    assert.equal(other.status().find((s) => s.language === "msa")!.state, "fetching");
    await Promise.all([first, store.fetch(["msa"]), other.fetch(["msa"])]);
    assert.equal(server.requests.length, 1);
    assert.ok(store.installed("msa") && other.installed("msa"));
  });

  it("refuses languages outside the catalog, codes that are not codes, and a source that fails", async () => {
    const store = new LanguageDataStore({ dataDir: tempDataDir(), baseUrl: server.url });
    await assert.rejects(store.fetch(["tha"]), failsWith("unknown_language", /no OCR language data for 'tha' in the catalog \(it has eng \(English\), msa \(Malay\)\)/));
    assert.throws(() => store.file("../../etc/passwd"), failsWith("unknown_language", /not a Tesseract language code/));
    assert.equal(store.installed("../eng"), false);
    const missing = new LanguageDataStore({ dataDir: tempDataDir(), baseUrl: `${server.url}/nowhere` });
    await assert.rejects(missing.fetch(["eng"]), failsWith("download_failed", /HTTP 404/));
    const closed = new LanguageDataStore({ dataDir: tempDataDir(), baseUrl: "http://127.0.0.1:1" });
    await assert.rejects(closed.fetch(["msa"]), failsWith("download_failed", /Malay OCR data/));
  });
});
