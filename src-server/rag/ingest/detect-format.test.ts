import assert from "node:assert/strict";
import { describe, it } from "node:test";
import JSZip from "jszip";
import { fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { HTML_PAGE, PNG_BYTES } from "../../../test/fixtures/documents/fixture-documents.js";
import { detectFormat } from "./detect-format.js";

const text = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));

describe("detectFormat", () => {
  it("recognises each committed fixture by content and extension", () => {
    assert.equal(detectFormat(fixture("report.pdf"), "report.pdf"), "pdf");
    assert.equal(detectFormat(fixture("report.docx"), "report.docx"), "docx");
    assert.equal(detectFormat(fixture("page.html"), "page.html"), "html");
    assert.equal(detectFormat(fixture("guide.md"), "guide.md"), "md");
    assert.equal(detectFormat(fixture("latin1.txt"), "latin1.txt"), "txt");
    assert.equal(detectFormat(fixture("utf16le.txt"), "utf16le.txt"), "txt", "UTF-16 NUL bytes are not binary when a BOM says UTF-16");
    assert.equal(detectFormat(fixture("laporan-ms.txt"), "laporan-ms.txt"), "txt");
  });

  it("lets content decide binary formats whatever the name says", () => {
    assert.equal(detectFormat(fixture("pdf-named.docx"), "pdf-named.docx"), "pdf");
    assert.equal(detectFormat(fixture("report.pdf"), "notes.txt"), "pdf");
    assert.equal(detectFormat(fixture("report.docx"), "report.pdf"), "docx");
    assert.equal(detectFormat(fixture("report.docx"), "REPORT"), "docx");
    assert.equal(detectFormat(Buffer.concat([Buffer.from("junk before header\n"), fixture("report.pdf")]), "x.pdf"), "pdf");
  });

  it("refuses executables and other archives named as text; images are images", async () => {
    assert.equal(detectFormat(fixture("image-named.txt"), "image-named.txt"), "png", "a PNG named .txt is a PNG");
    assert.equal(detectFormat(PNG_BYTES, "photo.md"), "png", "an image is an image whatever its name (it is read by OCR)");
    assert.equal(detectFormat(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), "program.txt"), null, "ELF");
    assert.equal(detectFormat(text("MZ\x90\x00\x03"), "setup.txt"), null, "Windows executable");
    const zip = await new JSZip().file("notes.txt", "hello").generateAsync({ type: "uint8array" });
    assert.equal(detectFormat(zip, "notes.txt"), null, "a ZIP named .txt");
    assert.equal(detectFormat(zip, "notes.docx"), null, "a ZIP without word/document.xml is not a DOCX");
  });

  it("tells the ZIP formats by the part only each has, or OpenDocument's and EPUB's mimetype entry", async () => {
    const zip = async (entries: Record<string, string>, mimetype?: string) => {
      const archive = new JSZip();
      if (mimetype) archive.file("mimetype", mimetype, { compression: "STORE" });
      for (const [name, content] of Object.entries(entries)) archive.file(name, content);
      return archive.generateAsync({ type: "uint8array", compression: "DEFLATE" });
    };
    assert.equal(detectFormat(await zip({ "ppt/presentation.xml": "<p/>" }), "deck.zip"), "pptx");
    assert.equal(detectFormat(await zip({ "xl/workbook.xml": "<w/>" }), "book.bin"), "xlsx");
    assert.equal(detectFormat(await zip({ "content.xml": "<c/>" }, "application/vnd.oasis.opendocument.text"), "letter.docx"), "odt", "content wins over the name");
    assert.equal(detectFormat(await zip({ "content.xml": "<c/>" }, "application/vnd.oasis.opendocument.spreadsheet"), "x.ods"), "ods");
    assert.equal(detectFormat(await zip({ "OEBPS/content.opf": "<package/>" }, "application/epub+zip"), "book.epub"), "epub");
    assert.equal(detectFormat(await zip({ "content.xml": "<c/>" }, "application/vnd.oasis.opendocument.graphics"), "drawing.odt"), null, "an OpenDocument drawing is not read");
    const truncated = (await zip({ "xl/workbook.xml": "<w/>".repeat(5000) })).subarray(0, 60);
    assert.equal(detectFormat(truncated, "cut.xlsx"), "xlsx", "a cut ZIP named for a ZIP format goes to its parser, which says it is damaged");
  });

  it("takes images by their signatures, and compound files (OLE2) by the extension of one it reads", () => {
    assert.equal(detectFormat(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), "scan"), "jpeg");
    assert.equal(detectFormat(new Uint8Array([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0]), "fax.tif"), "tiff");
    assert.equal(detectFormat(new Uint8Array([0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8]), "fax"), "tiff");
    const ole = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0)]);
    for (const [name, format] of [["mail.msg", "msg"], ["old.doc", "doc"], ["old.XLS", "xls"], ["old.ppt", "ppt"], ["thing.txt", null], ["thing", null]] as const) {
      assert.equal(detectFormat(ole, name), format, name);
    }
  });

  it("reads text that begins like a binary signature as text (signatures match whole)", () => {
    for (const start of ["PKD1 Inhibits AMPKα2 Signalling", "PK is a protein kinase", "MZM-2 binds", "GIF8 levels", "RIFF analysis of WAVE data", "Rar! said the crowd", "7z archives", "\u007fELF is rare"]) {
      const expected = start.startsWith("\u007f") ? null : "txt"; // DEL is a control byte: one in a short text is too many
      assert.equal(detectFormat(text(`${start}\n\nThe abstract follows.`), "abstract.txt"), expected, start);
    }
    assert.equal(detectFormat(text("RIFF\u0010\u0000\u0000\u0000WAVEfmt "), "sound.txt"), null, "a real RIFF header");
    assert.equal(detectFormat(new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]), "empty.txt"), null, "an empty ZIP");
  });

  it("refuses text with NULs or many control bytes, and text with unknown extensions", () => {
    assert.equal(detectFormat(text("hello\0world"), "a.txt"), null);
    const controls = new Uint8Array(1000).map((_, i) => (i % 20 === 0 ? 0x01 : 0x61));
    assert.equal(detectFormat(controls, "a.txt"), null, "5% control bytes");
    assert.equal(detectFormat(text("tab\tand form feed\f are fine\r\n"), "a.txt"), "txt");
    assert.equal(detectFormat(text("a,b\n1,2\n"), "data.csv"), "csv");
    assert.equal(detectFormat(text("{\"a\": 1}"), "data.json"), null);
    assert.equal(detectFormat(text("just text"), "README"), null);
  });

  it("sniffs HTML documents even under a text name, but not fragments", () => {
    assert.equal(detectFormat(text(HTML_PAGE), "page.txt"), "html");
    assert.equal(detectFormat(text("\uFEFF  <!-- c --><html><body>x</body></html>"), "page.md"), "html");
    assert.equal(detectFormat(text("<p>a fragment</p>"), "frag.htm"), "html");
    assert.equal(detectFormat(text("<p>a fragment</p>"), "frag.txt"), "txt");
    assert.equal(detectFormat(text("<html>"), "x.bin"), "html");
  });

  it("keeps the extension's format for empty files and unreadable DOCX archives, so parsing can say why", async () => {
    assert.equal(detectFormat(new Uint8Array(0), "empty.txt"), "txt");
    assert.equal(detectFormat(new Uint8Array(0), "empty.pdf"), "pdf");
    assert.equal(detectFormat(new Uint8Array(0), "empty.bin"), null);
    const truncatedZip = (await new JSZip().file("a.txt", "x".repeat(5000)).generateAsync({ type: "uint8array" })).subarray(0, 40);
    assert.equal(detectFormat(truncatedZip, "broken.docx"), "docx");
    assert.equal(detectFormat(truncatedZip, "broken.txt"), null);
  });

  it("recognises a DOCX from the start of the file alone, by its local file headers", () => {
    const docx = fixture("report.docx");
    const head = docx.subarray(0, Buffer.from(docx).indexOf("word/document.xml") + 20); // the directory is cut off
    assert.equal(detectFormat(head, "upload.bin"), "docx");
    assert.equal(detectFormat(docx.subarray(0, 1000), "upload.bin"), null, "too little to tell, and no .docx name");
  });
});
