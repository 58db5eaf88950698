import assert from "node:assert/strict";
import { describe, it } from "node:test";
import JSZip from "jszip";
import { buildDocx } from "../../../test/fixtures/documents/build-docx.js";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { buildZipBomb } from "../../../test/fixtures/documents/build-zip-bomb.js";
import { inspectDocxArchive } from "./inspect-docx-archive.js";
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

  it("inspects only the parts mammoth reads: media files may be large", async () => {
    const withPhoto = buildZipBomb({ inflatedBytes: 1.1 * GIB, declare: "honest", bombName: "word/media/photo.png" });
    assert.deepEqual(inspectDocxArchive(withPhoto), { title: null });
    const document = await parseDocx(withPhoto);
    assert.equal(document.text, "Small document.");
  });
});
