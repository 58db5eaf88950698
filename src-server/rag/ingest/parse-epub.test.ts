import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { assertOffsets, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { BOOK, officeFixtures, type OfficeFixtures } from "../../../test/fixtures/office/build-office.js";
import { epubWith, openDocument } from "../../../test/fixtures/office/hostile-office.js";
import { fakeDeps, options } from "../../../test/helpers/chunking-documents.js";
import { chunkDocument } from "../chunking/chunk-document.js";
import { parseDocument } from "./parse-document.js";
import { parseEpub } from "./parse-epub.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));

describe("parseEpub", () => {
  let fixtures: OfficeFixtures;
  before(async () => {
    fixtures = await officeFixtures();
  });

  it("reads Writer's EPUB chapters in spine order, each a section under its title from the table of contents", async () => {
    const book = await parseEpub(fixtures.bookEpub);
    assertOffsets(book);
    assert.equal(book.format, "epub");
    assert.equal(book.title, BOOK.title);
    assert.deepEqual(headings(book), BOOK.chapters.map((c) => `1 ${c}`), "each chapter's repeated title line is dropped");
    assert.ok(book.text.includes(BOOK.malayFact), "Malay text intact");
    const chunks = await chunkDocument(book, options("semantic", { targetTokens: 200, maxTokens: 480 }), fakeDeps());
    const malay = chunks.find((c) => c.text.includes(BOOK.malayFact))!;
    assert.deepEqual(malay.headingPath, [BOOK.chapters[1]]);
    assert.ok(!malay.text.includes("Four hundred members"), "a passage stays in its chapter");
  });

  it("reads report.docx exported as EPUB: its text and table under the chapter heading", async () => {
    const report = await parseEpub(fixtures.reportEpub);
    assert.equal(report.title, "Harbour Cooperative Plan 2025");
    assert.deepEqual(headings(report), ["1 Harbour Cooperative Plan"]);
    assert.ok(report.blocks.some((b) => b.kind === "table" && b.text.includes("| Warehouse | 850,000 |")));
  });

  it("falls back to each chapter's first heading for its title and moves its headings below the chapter's (a self-closed <title/> swallows nothing)", async () => {
    const book = await parseEpub(await epubWith(["<h1>Bab Satu</h1><p>Teks pertama.</p><h1>Bahagian A</h1><p>Teks A.</p>", "<p>No heading here.</p>", '<div><img src="cover.jpg" alt=""/></div>']));
    assert.deepEqual(headings(book), ["1 Bab Satu", "2 Bahagian A", "1 Section 2"], "a cover with no text is no chapter");
    assert.equal(book.title, "Hostile book");
  });

  it("refuses DRM, deep nesting and books without a package, in the parse worker too", async () => {
    await assert.rejects(parseEpub(await epubWith(["<p>Secret.</p>"], { encrypted: true })), failsWith("encrypted_document", /DRM/));
    const deep = await epubWith([`${"<div>".repeat(5000)}<p>deep</p>${"</div>".repeat(5000)}`]);
    await assert.rejects(parseEpub(deep), failsWith("document_too_complex"));
    await assert.rejects(parseEpub(await openDocument("application/epub+zip", { "OEBPS/x.xhtml": "<html/>" })), failsWith("corrupt_document", /container/));
    await assert.rejects(parseEpub(await epubWith(["<p></p>"])), failsWith("empty_document"));
    await assert.rejects(parseDocument(deep, "epub"), failsWith("document_too_complex"));
    await assert.rejects(parseDocument(await epubWith(["<p>Secret.</p>"], { encrypted: true }), "epub"), failsWith("encrypted_document"));
  });
});
