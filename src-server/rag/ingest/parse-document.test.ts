import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { buildZipBomb } from "../../../test/fixtures/documents/build-zip-bomb.js";
import { assertOffsets, fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { endlessPdf, flateBombPdf, nestedHtml } from "../../../test/fixtures/documents/fixture-documents.js";
import { detectFormat } from "./detect-format.js";
import { parseDocument, ParserPool } from "./parse-document.js";
import { ParseError, type ParseErrorCode } from "./types.js";

/** Every hostile file must fail within this bound (the endless PDF within its own shorter timeout). */
/** A hang guard for hostile input (the requirement is bounded time), not a speed target. */
const HOSTILE_BOUND_MS = 30_000;
const GIB = 1024 ** 3;

async function expectFailure(t: TestContext, bytes: Uint8Array, filename: string, code: ParseErrorCode, options: Parameters<typeof parseDocument>[2] = {}): Promise<number> {
  const format = detectFormat(bytes, filename);
  assert.ok(format, `${filename} has a format`);
  const started = performance.now();
  await assert.rejects(parseDocument(bytes, format, options), (e: unknown) => {
    assert.ok(e instanceof ParseError, `${filename}: ${String(e)}`);
    assert.equal(e.code, code, `${filename}: ${e.message}`);
    assert.ok(e.message.length > 10, "a message a user can read");
    return true;
  });
  const elapsed = performance.now() - started;
  assert.ok(elapsed < HOSTILE_BOUND_MS, `${filename} took ${Math.round(elapsed)} ms`);
  t.diagnostic(`${filename}: ${code} in ${Math.round(elapsed)} ms`);
  return elapsed;
}

describe("parseDocument (worker thread)", () => {
  it("parses every fixture format in a worker, with exact offsets, leaving the caller's bytes intact", async () => {
    for (const [name, format] of [["report.pdf", "pdf"], ["report.docx", "docx"], ["page.html", "html"], ["guide.md", "md"], ["latin1.txt", "txt"], ["laporan-ms.txt", "txt"]] as const) {
      const bytes = fixture(name);
      const copy = Buffer.from(bytes);
      assert.equal(detectFormat(bytes, name), format);
      const document = await parseDocument(bytes, format);
      assertOffsets(document);
      assert.equal(document.format, format);
      assert.ok(Buffer.from(bytes).equals(copy), `${name}: the caller's bytes are untouched`);
    }
    const pdf = await parseDocument(fixture("pdf-named.docx"), detectFormat(fixture("pdf-named.docx"), "pdf-named.docx")!);
    assert.equal(pdf.pageCount, 3, "a PDF named .docx is parsed as the PDF it is");
  });

  it("hands a whole buffer to the worker when asked to transfer, and copies a slice", async () => {
    const whole = new Uint8Array(Buffer.from("# Title\n\nA paragraph long enough to leave the pool.\n".repeat(200)));
    assert.equal(whole.byteOffset, 0);
    const document = await parseDocument(whole, "md", { transfer: true });
    assert.equal(document.format, "md");
    assert.equal(whole.byteLength, 0, "the buffer went to the worker (detached here)");
    const backing = Buffer.from("# Title\n\nText.\n".repeat(500));
    const slice = backing.subarray(10);
    await parseDocument(slice, "md", { transfer: true });
    assert.equal(slice.length, backing.length - 10, "a slice of a larger buffer is copied, the buffer stays usable");
  });

  it("fails an empty file with empty_document without starting a worker", async (t) => {
    await expectFailure(t, fixture("empty.txt"), "empty.txt", "empty_document");
    await expectFailure(t, new Uint8Array(0), "empty.pdf", "empty_document");
  });

  it("refuses DOCX zip bombs (honest and lying directories) with document_too_large", async (t) => {
    await expectFailure(t, buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "honest" }), "bomb.docx", "document_too_large");
    await expectFailure(t, buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "lying" }), "lying-bomb.docx", "document_too_large");
  });

  it("refuses 100 000 nested divs with document_too_complex", async (t) => {
    await expectFailure(t, nestedHtml(100_000), "nested.html", "document_too_complex");
  });

  it("fails damaged and encrypted PDFs with corrupt_document and encrypted_document", async (t) => {
    await expectFailure(t, fixture("truncated.pdf"), "truncated.pdf", "corrupt_document");
    await expectFailure(t, fixture("encrypted.pdf"), "encrypted.pdf", "encrypted_document");
  });

  it("refuses a PDF decompression bomb (2 MB inflating to 2 GiB) with document_too_large", async (t) => {
    await expectFailure(t, flateBombPdf(2048), "flate-bomb.pdf", "document_too_large");
  });

  it("stops a PDF that never ends at the deadline with parse_timeout", async (t) => {
    const elapsed = await expectFailure(t, endlessPdf(), "endless.pdf", "parse_timeout", { timeoutMs: 3000 });
    assert.ok(elapsed >= 3000 && elapsed < 30_000, `terminated after the deadline instead of running on (${Math.round(elapsed)} ms)`);
  });

  it("stops a parse that outgrows its heap limit with document_too_complex", async (t) => {
    const paragraphs = Buffer.from("word\n\n".repeat(8_000_000)); // 48 MB → 8 million blocks
    await expectFailure(t, paragraphs, "many.txt", "document_too_complex", { maxMemoryMb: 128 });
  });

  it("refuses text beyond maxTextChars with document_too_large", async (t) => {
    await expectFailure(t, fixture("laporan-ms.txt"), "laporan-ms.txt", "document_too_large", { maxTextChars: 100 });
  });

  it("rejects with the abort reason when the signal aborts, and stops the worker", async () => {
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(new Error("indexing cancelled")), 200);
    await assert.rejects(parseDocument(endlessPdf(), "pdf", { signal: controller.signal }), /indexing cancelled/);
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    await assert.rejects(parseDocument(fixture("guide.md"), "md", { signal: AbortSignal.abort() }), { name: "AbortError" });
  });

  it("fails hostile files alone: the rest of a concurrent batch is parsed", async () => {
    const batch = [
      parseDocument(buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "lying" }), "docx"),
      parseDocument(nestedHtml(100_000), "html"),
      parseDocument(endlessPdf(), "pdf", { timeoutMs: 2000 }),
      parseDocument(fixture("report.pdf"), "pdf"),
      parseDocument(fixture("report.docx"), "docx"),
    ];
    const results = await Promise.allSettled(batch);
    assert.deepEqual(
      results.map((r) => (r.status === "fulfilled" ? r.value.format : (r.reason as ParseError).code)),
      ["document_too_large", "document_too_complex", "parse_timeout", "pdf", "docx"],
    );
    const open = process.getActiveResourcesInfo();
    assert.ok(!open.includes("Timeout") && !open.includes("MessagePort"), `nothing left open: ${open.join(", ")}`);
  });
});

describe("ParserPool (workers kept between documents)", () => {
  it("parses one document after another in the same worker, with the same results as a worker of their own", async (t) => {
    const pool = new ParserPool();
    t.after(() => pool.close());
    for (const name of ["report.pdf", "report.docx", "page.html", "guide.md", "laporan-ms.txt", "report.pdf"]) {
      const bytes = fixture(name);
      const format = detectFormat(bytes, name)!;
      assert.deepEqual(await pool.parse(bytes, format), await parseDocument(bytes, format), name);
    }
    assert.equal(pool.stats().started, 1, "one worker parsed all six");
  });

  it("fails a hostile document alone and replaces the worker it took down; the next document parses", async (t) => {
    const pool = new ParserPool();
    t.after(() => pool.close());
    await assert.rejects(pool.parse(endlessPdf(), "pdf", { timeoutMs: 1500 }), { code: "parse_timeout" });
    await assert.rejects(pool.parse(nestedHtml(100_000), "html"), { code: "document_too_complex" });
    await assert.rejects(pool.parse(buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "lying" }), "docx"), { code: "document_too_large" });
    assert.equal((await pool.parse(fixture("report.pdf"), "pdf")).format, "pdf");
    // The timeout stopped the first worker; a refused document leaves its worker usable.
    assert.equal(pool.stats().started, 2);
  });

  it("tries a document that runs out of memory in a used worker once more in a fresh one, then fails it", async (t) => {
    const pool = new ParserPool({ maxMemoryMb: 128 });
    t.after(() => pool.close());
    await pool.parse(fixture("guide.md"), "md");
    await assert.rejects(pool.parse(Buffer.from("word\n\n".repeat(8_000_000)), "txt"), { code: "document_too_complex" });
    assert.equal(pool.stats().started, 2, "the first worker, then a fresh one for the retry");
    assert.equal((await pool.parse(fixture("guide.md"), "md")).format, "md");
    assert.equal(pool.stats().started, 3, "the retry's worker died too; the next document gets a new one");
  });

  it("replaces a worker after maxJobsPerWorker documents and lets an idle one exit", async (t) => {
    const pool = new ParserPool({ maxJobsPerWorker: 2, idleMs: 200 });
    t.after(() => pool.close());
    for (let i = 0; i < 5; i++) await pool.parse(fixture("guide.md"), "md");
    assert.equal(pool.stats().started, 3);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(pool.stats().running, 0, "the idle worker exited");
    await pool.parse(fixture("guide.md"), "md");
    assert.equal(pool.stats().started, 4);
  });

  it("parses up to `size` documents at once and queues the rest in order", async (t) => {
    const pool = new ParserPool({ size: 2 });
    t.after(() => pool.close());
    const names = ["report.pdf", "report.docx", "page.html", "guide.md", "laporan-ms.txt"];
    const results = await Promise.all(names.map((name) => pool.parse(fixture(name), detectFormat(fixture(name), name)!)));
    assert.deepEqual(results.map((r) => r.format), ["pdf", "docx", "html", "md", "txt"]);
    assert.equal(pool.stats().started, 2);
  });

  it("drops a queued document whose signal aborts, without touching the running one; close rejects the rest", async () => {
    const pool = new ParserPool();
    const running = pool.parse(fixture("report.pdf"), "pdf");
    const controller = new AbortController();
    const queued = pool.parse(fixture("guide.md"), "md", { signal: controller.signal });
    controller.abort(new Error("upload cancelled"));
    await assert.rejects(queued, /upload cancelled/);
    assert.equal((await running).format, "pdf");
    const outcomes = Promise.allSettled([pool.parse(endlessPdf(), "pdf"), pool.parse(fixture("guide.md"), "md")]);
    await pool.close();
    assert.deepEqual((await outcomes).map((o) => (o.status === "rejected" ? (o.reason as Error).message : "parsed")), ["The parser pool is closed.", "The parser pool is closed."]);
    await assert.rejects(pool.parse(fixture("guide.md"), "md"), /closed/);
  });
});
