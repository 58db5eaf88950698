import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import JSZip from "jszip";
import { buildDocx } from "../../../test/fixtures/documents/build-docx.js";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { buildZipBomb } from "../../../test/fixtures/documents/build-zip-bomb.js";
import { denseDocx, manyEntriesDocx, relsBombDocx } from "../../../test/fixtures/documents/hostile-documents.js";
import { MAX_DOCX_ENTRIES, MAX_DOCX_RATIO, inspectDocxArchive } from "./inspect-docx-archive.js";
import { parseDocx } from "./parse-docx.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const GIB = 1024 ** 3;
const failsWith = (code: ParseErrorCode) => (e: unknown) => e instanceof ParseError && e.code === code;

describe("parseDocx", () => {
  it("maps Word heading styles to heading levels and takes the title from the document properties", async () => {
    const document = await parseDocx(fixture("report.docx"));
    assertOffsets(document);
    assert.equal(document.format, "docx");
    assert.deepEqual(headings(document), ["1 Harbour Cooperative Plan", "2 Projects", "2 Budget", "3 Approval"]);
    assert.equal(document.title, "Harbour Cooperative Plan 2025");
    assert.equal(document.blocks[1]!.text, "This plan sets out the three projects for next year.", "bold run read as plain text");
  });

  it("keeps bullet and numbered lists and tables readable", async () => {
    const document = await parseDocx(fixture("report.docx"));
    const lists = document.blocks.filter((b) => b.kind === "list").map((b) => b.text);
    assert.deepEqual(lists, ["- Open the Port Klang warehouse\n- Train twenty new members\n- Replace the cold-storage units", "1. Board review\n2. Members vote"]);
    const table = document.blocks.find((b) => b.kind === "table");
    assert.equal(table?.text, "| Project | Cost (RM) |\n| --- | --- |\n| Warehouse | 850,000 |\n| Training | 40,000 |");
  });

  it("falls back to the first heading 1 for the title", async () => {
    const document = await parseDocx(await buildDocx([{ heading: 1, text: "Laporan Suku Tahun" }, { paragraph: "Jualan meningkat." }]));
    assert.equal(document.title, "Laporan Suku Tahun");
  });

  it("refuses a zip bomb whose directory declares 1.1 GB, before anything inflates it", async () => {
    const bomb = buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "honest" });
    assert.ok(bomb.length < 2 * 1024 * 1024, "the bomb itself is small");
    const started = performance.now();
    await assert.rejects(parseDocx(bomb), (e: unknown) => failsWith("document_too_large")(e) && /1\.1 GB/.test((e as Error).message));
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
  });

  it("refuses a zip bomb whose directory lies about its size, inflating no more than it declared", async () => {
    const bomb = buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "lying" });
    const before = process.memoryUsage().rss;
    await assert.rejects(parseDocx(bomb), failsWith("document_too_large"));
    assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024, "no gigabyte was inflated");
  });

  it("reports damaged archives as corrupt_document", async () => {
    const docx = fixture("report.docx");
    await assert.rejects(parseDocx(docx.subarray(0, docx.length - 30)), failsWith("corrupt_document"), "truncated directory");
    const notWord = await new JSZip().file("content.xml", "<x/>").generateAsync({ type: "uint8array" });
    await assert.rejects(parseDocx(notWord), failsWith("corrupt_document"), "a ZIP that is not a Word document");
    const badXml = await new JSZip().file("word/document.xml", "<w:document><not-closed").file("[Content_Types].xml", "<Types/>").generateAsync({ type: "uint8array" });
    await assert.rejects(parseDocx(badXml), failsWith("corrupt_document"), "malformed XML");
  });

  it("refuses a bomb that _rels/.rels names as the main document outside the usual parts (word/media/doc.xml)", async () => {
    for (const declare of ["honest", "lying"] as const) {
      const bomb = relsBombDocx(1024, declare);
      assert.ok(bomb.length < 2 * 1024 * 1024, "the bomb itself is small");
      const before = process.memoryUsage().rss;
      const started = performance.now();
      await assert.rejects(parseDocx(bomb), (e: unknown) => failsWith("document_too_large")(e) && /word\/media\/doc\.xml/.test((e as Error).message), declare);
      assert.ok(process.memoryUsage().rss - before < 100 * 1024 * 1024, `${declare}: nothing near a gigabyte was inflated`);
      assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    }
  });

  it("checks every entry, media included, but lets real images through", async () => {
    const withPhoto = buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "honest", bombName: "word/media/photo.png" });
    await assert.rejects(inspectDocxArchive(withPhoto), failsWith("document_too_large"), "a 1.1 GB 'photo' is a bomb too");
    const photo = randomBytes(3 * 1024 * 1024); // incompressible, like a real photo
    const zip = new JSZip().file("[Content_Types].xml", "<Types/>").file("word/document.xml", '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>With a photo.</w:t></w:r></w:p></w:body></w:document>');
    zip.file("word/media/photo.png", photo);
    const docx = await zip.generateAsync({ type: "uint8array", compression: "DEFLATE" });
    assert.deepEqual(await inspectDocxArchive(docx), { title: null });
    assert.equal((await parseDocx(docx)).text, "With a photo.");
  });

  it("refuses archives with too many entries, or a high compression ratio, or a directory readers would see differently", async (t) => {
    await assert.rejects(parseDocx(manyEntriesDocx(MAX_DOCX_ENTRIES + 1)), (e: unknown) => failsWith("document_too_large")(e) && /entries/.test((e as Error).message));
    const dense = denseDocx(8, false); // one paragraph repeated, 8 MiB: far beyond the ratio
    await assert.rejects(inspectDocxArchive(dense), (e: unknown) => failsWith("document_too_large")(e) && new RegExp(`limit is ${MAX_DOCX_RATIO} times`).test((e as Error).message));
    // A gap between the directory and the end record makes JSZip shift every offset by the gap
    // (it would read another directory than the one checked): refused as damaged.
    const report = Buffer.from(fixture("report.docx"));
    const eocd = report.length - 22;
    assert.equal(report.readUInt32LE(eocd), 0x06054b50, "the fixture has no archive comment");
    const gapped = Buffer.concat([report.subarray(0, eocd), Buffer.alloc(32), report.subarray(eocd)]);
    await assert.rejects(inspectDocxArchive(gapped), failsWith("corrupt_document"));
    t.diagnostic("gapped directory refused");
  });
});
