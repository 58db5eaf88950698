import assert from "node:assert/strict";
import { describe, it } from "node:test";
import JSZip from "jszip";
import { officeZipBomb, pptxWith, slideXml } from "../../../test/fixtures/office/hostile-office.js";
import { buildZipBomb } from "../../../test/fixtures/documents/build-zip-bomb.js";
import { OfficeArchive, readRelationships, resolvePart } from "./office-archive.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));

describe("OfficeArchive", () => {
  it("reads entries whole, as text and as XML events, matching part names without regard to case", async () => {
    const bytes = await new JSZip().file("Doc/Part.xml", '<?xml version="1.0"?><a:root xmlns:a="urn:x"><a:item r:id="rId1" id="7">Kuala <![CDATA[Lumpur]]></a:item></a:root>').generateAsync({ type: "uint8array", compression: "DEFLATE" });
    const archive = OfficeArchive.open(bytes, "test file");
    assert.ok(archive.has("doc/part.xml"));
    assert.ok(!archive.has("doc/other.xml"));
    assert.match(await archive.text("Doc/Part.xml"), /Kuala/);
    const events: string[] = [];
    await archive.readXml("doc/part.xml", {
      open: (name, attributes) => events.push(`open ${name} ${JSON.stringify(attributes)}`),
      text: (text) => events.push(`text ${text}`),
      close: (name) => events.push(`close ${name}`),
    });
    assert.deepEqual(events, ['open root {"xmlns:a":"urn:x"}', 'open item {"r:id":"rId1","id":"7"}', "text Kuala ", "text Lumpur", "close item", "close root"]);
  });

  it("resolves relationship targets relative to their part, and drops external and escaping ones", async () => {
    assert.equal(resolvePart("ppt/presentation.xml", "slides/slide1.xml"), "ppt/slides/slide1.xml");
    assert.equal(resolvePart("ppt/slides/slide1.xml", "../notesSlides/notesSlide1.xml"), "ppt/notesSlides/notesSlide1.xml");
    assert.equal(resolvePart("xl/workbook.xml", "/xl/worksheets/sheet%201.xml"), "xl/worksheets/sheet 1.xml");
    assert.equal(resolvePart("OEBPS/toc.xhtml", "text/c1.xhtml#part2"), "OEBPS/text/c1.xhtml");
    assert.equal(resolvePart("ppt/slides/slide1.xml", "https://example.com/x"), null);
    assert.equal(resolvePart("a.xml", "../../etc/passwd"), null);
    const bytes = await pptxWith(slideXml("x"));
    const relationships = await readRelationships(OfficeArchive.open(bytes, "presentation"), "ppt/presentation.xml");
    assert.deepEqual([...relationships], [["rId1", { target: "ppt/slides/slide1.xml", type: "slide" }]]);
  });

  it("refuses a bomb whose directory declares 1.1 GB before inflating anything", () => {
    for (const kind of ["pptx", "xlsx"] as const) {
      const bomb = officeZipBomb(kind, "honest");
      assert.ok(bomb.length < 2 * 1024 * 1024, "the bomb itself is small");
      assert.throws(() => OfficeArchive.open(bomb, kind), failsWith("document_too_large", /1\.1 GB/));
    }
  });

  it("stops inflating a bomb that lies about its size once it passes what it declared", async () => {
    const bomb = officeZipBomb("xlsx", "lying");
    const archive = OfficeArchive.open(bomb, "workbook");
    const before = process.memoryUsage().rss;
    await assert.rejects(archive.readXml("xl/worksheets/sheet1.xml", {}), failsWith("document_too_large", /decompression bomb/));
    assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024, "no gigabyte was inflated");
  });

  it("caps what one entry may inflate to, whatever it declares", async () => {
    const bytes = await new JSZip().file("big.xml", "x".repeat(3 * 1024 * 1024)).generateAsync({ type: "uint8array", compression: "DEFLATE" });
    await assert.rejects(OfficeArchive.open(bytes, "file").read("big.xml", 1024 * 1024), failsWith("document_too_large", /more than 1 MB/));
  });

  it("refuses archives with too many entries, an unreadable directory, or an entry compressed beyond the ratio limit", async () => {
    const many = new JSZip();
    for (let i = 0; i < 30; i++) many.file(`e${i}.xml`, "<x/>");
    const bytes = await many.generateAsync({ type: "uint8array" });
    assert.throws(() => OfficeArchive.open(bytes, "file", { maxEntries: 20, maxEntryBytes: 1e6, maxTotalBytes: 1e7, maxRatio: 200 }), failsWith("document_too_large", /30 entries/));
    assert.throws(() => OfficeArchive.open(bytes.subarray(0, bytes.length - 10), "file"), failsWith("corrupt_document"));
    const docxBomb = buildZipBomb({ inflatedBytes: 8 * 1024 * 1024, declare: "honest" });
    assert.throws(() => OfficeArchive.open(docxBomb, "file"), failsWith("document_too_large", /decompression bomb/), "8 MB from a few KB is beyond the ratio limit");
  });
});
