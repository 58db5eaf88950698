import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startFileServer, type FileServer } from "../../test/helpers/file-server.js";
import { tinyModel } from "../../test/helpers/models.js";
import { DownloadError, downloadModel } from "./model-download.js";

describe("downloadModel", () => {
  const body = readFileSync(tinyModel("stories260K"));
  const sha256 = createHash("sha256").update(body).digest("hex");
  let server: FileServer;
  before(async () => {
    server = await startFileServer({ "/m.gguf": body });
  });
  after(() => server.close());
  const tmp = () => path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-dl-")), "m.gguf");

  it("downloads, verifies the hash and reports progress up to the total", async () => {
    const dest = tmp();
    const seen: number[] = [];
    const result = await downloadModel({ url: `${server.url}/m.gguf`, dest, expectedSha256: sha256, onProgress: (p) => seen.push(p.received) });
    assert.equal(result.verified, true);
    assert.equal(result.sha256, sha256);
    assert.deepEqual(readFileSync(dest), body);
    assert.equal(seen.at(-1), body.length);
    assert.ok(!existsSync(`${dest}.part`));
  });

  it("resumes a dropped download with a Range request and ends byte-identical", async () => {
    const dest = tmp();
    server.dropNextAfter = 400_000;
    await assert.rejects(downloadModel({ url: `${server.url}/m.gguf`, dest, expectedSha256: sha256 }));
    const partial = statSync(`${dest}.part`).size;
    assert.ok(partial > 0 && partial < body.length, `partial file has ${partial} bytes`);
    server.requests.length = 0;
    const result = await downloadModel({ url: `${server.url}/m.gguf`, dest, expectedSha256: sha256 });
    assert.equal(server.requests[0]?.range, `bytes=${partial}-`);
    assert.equal(result.resumedFrom, partial);
    assert.equal(result.sha256, sha256);
    assert.deepEqual(readFileSync(dest), body);
  });

  it("starts over when the server ignores the range", async () => {
    const dest = tmp();
    server.dropNextAfter = 100_000;
    await assert.rejects(downloadModel({ url: `${server.url}/m.gguf`, dest }));
    server.ignoreRange = true;
    try {
      const result = await downloadModel({ url: `${server.url}/m.gguf`, dest, expectedSha256: sha256 });
      assert.equal(result.resumedFrom, 0);
      assert.deepEqual(readFileSync(dest), body);
    } finally {
      server.ignoreRange = false;
    }
  });

  it("deletes the file and fails on a checksum mismatch", async () => {
    const dest = tmp();
    await assert.rejects(downloadModel({ url: `${server.url}/m.gguf`, dest, expectedSha256: "0".repeat(64) }), (e: unknown) => e instanceof DownloadError && /checksum mismatch/.test(e.message));
    assert.ok(!existsSync(dest) && !existsSync(`${dest}.part`));
  });

  it("fails clearly on HTTP errors", async () => {
    await assert.rejects(downloadModel({ url: `${server.url}/missing.gguf`, dest: tmp() }), (e: unknown) => e instanceof DownloadError && /HTTP 404/.test(e.message));
  });
});
