import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { MALAY_REPORT } from "../../../test/fixtures/documents/fixture-documents.js";
import { decodeText } from "./decode-text.js";
import { parseText } from "./parse-text.js";
import { ParseError } from "./types.js";

describe("decodeText", () => {
  it("reads UTF-8 with and without a BOM", () => {
    assert.deepEqual(decodeText(Buffer.from("\uFEFFnaïve")), { text: "naïve", encoding: "utf-8" });
    assert.deepEqual(decodeText(Buffer.from("naïve")), { text: "naïve", encoding: "utf-8" });
  });

  it("reads UTF-16 LE and BE when a BOM says so", () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Zürich 東京", "utf16le")]);
    const be = Buffer.from(le).swap16();
    assert.deepEqual(decodeText(le), { text: "Zürich 東京", encoding: "utf-16le" });
    assert.deepEqual(decodeText(be), { text: "Zürich 東京", encoding: "utf-16be" });
  });

  it("falls back to Windows-1252 for bytes that are not UTF-8, including its € and curly quotes", () => {
    const bytes = Buffer.concat([Buffer.from("caf\xe9 \xa325 M\xfcller ", "latin1"), Buffer.from([0x80, 0x93, 0x94])]);
    assert.deepEqual(decodeText(bytes), { text: "café £25 Müller €\u201c\u201d", encoding: "windows-1252" });
  });

  it("normalises CRLF and CR line endings", () => {
    assert.equal(decodeText(Buffer.from("a\r\nb\rc\n")).text, "a\nb\nc\n");
  });
});

describe("parseText", () => {
  it("decodes the Latin-1 fixture: é, ü, £ and paragraphs split on blank lines", async () => {
    const document = await parseText(fixture("latin1.txt"));
    assertOffsets(document);
    assert.equal(document.format, "txt");
    assert.deepEqual(document.blocks.map((b) => b.text), ["Café menu", "Crème brûlée costs £4 at Müller's.\nÜber café."]);
    assert.match(document.warnings[0] ?? "", /Windows-1252/);
    assert.equal(document.pageCount, null);
    assert.ok(document.blocks.every((b) => b.kind === "paragraph" && b.page === null));
    assert.equal(document.title, "Café menu", "a one-line first paragraph above a longer one is the title");
  });

  it("takes a title only from a first paragraph of one short line above a longer paragraph", async () => {
    const title = async (text: string) => (await parseText(Buffer.from(text))).title;
    assert.equal(await title("PKD1 Inhibits AMPKα2\n\nProtein kinase D1 is a kinase that regulates many things."), "PKD1 Inhibits AMPKα2");
    assert.equal(await title("Only one paragraph, however long it is."), null);
    assert.equal(await title("Two lines\nin the first paragraph\n\nA much longer second paragraph follows here."), null);
    assert.equal(await title("A first paragraph that is longer than the next.\n\nShort."), null);
    assert.equal(await title(`${"x".repeat(301)}\n\n${"y".repeat(400)}`), null);
  });

  it("decodes the UTF-16 fixture", async () => {
    const document = await parseText(fixture("utf16le.txt"));
    assertOffsets(document);
    assert.deepEqual(document.blocks.map((b) => b.text), ["Naïve résumé", "Second paragraph: 東京 and Zürich."]);
    assert.deepEqual(document.warnings, []);
  });

  it("keeps Malay text intact, one block per paragraph", async () => {
    const document = await parseText(fixture("laporan-ms.txt"));
    assertOffsets(document);
    assert.equal(document.blocks.length, 5);
    assert.equal(document.text, MALAY_REPORT.trim());
    assert.match(document.blocks[2]!.text, /gudang sejuk baharu di Kuala Terengganu/);
  });

  it("treats whitespace-only lines as paragraph breaks and drops trailing spaces", async () => {
    const document = await parseText(Buffer.from("one  \r\n \t \r\ntwo\n\n\n\nthree"));
    assertOffsets(document);
    assert.deepEqual(document.blocks.map((b) => b.text), ["one", "two", "three"]);
  });

  it("rejects a file with no text as empty_document", async () => {
    for (const bytes of [new Uint8Array(0), Buffer.from(" \n\r\n\t ")]) {
      await assert.rejects(parseText(bytes), (e: unknown) => e instanceof ParseError && e.code === "empty_document");
    }
  });
});
