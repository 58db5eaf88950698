import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { before, describe, it } from "node:test";
import { fixture } from "../../../test/fixtures/documents/document-assertions.js";
import { officeFixtures, type OfficeFixtures } from "../../../test/fixtures/office/build-office.js";
import { parseDocument } from "./parse-document.js";
import { parseDocx } from "./parse-docx.js";
import { parseDoc, parsePpt, parseXls } from "./parse-legacy-office.js";
import { parsePptx } from "./parse-pptx.js";
import { parseXlsx } from "./parse-spreadsheet.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));

/** Conversion folders left in the temp directory. */
const leftovers = () => readdirSync(tmpdir()).filter((name) => name.startsWith("pustaka-convert-"));

/** Processes whose command line names a conversion folder (soffice, soffice.bin, timeout). */
function converters(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (command.includes("pustaka-convert-")) found.push(`${pid}: ${command.replace(/\0/g, " ").slice(0, 120)}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("legacy Office files through LibreOffice", () => {
  let fixtures: OfficeFixtures;
  before(async () => {
    fixtures = await officeFixtures();
  });

  it("converts DOC, XLS and PPT at the same time (a profile each) and reads them as their current formats", async () => {
    const before = leftovers();
    const [doc, xls, ppt] = await Promise.all([parseDoc(fixtures.doc), parseXls(fixtures.xls), parsePpt(fixtures.ppt)]);
    assert.deepEqual([doc.format, xls.format, ppt.format], ["doc", "xls", "ppt"]);
    assert.equal(doc.text, (await parseDocx(fixture("report.docx"))).text);
    assert.equal(xls.text, (await parseXlsx(fixtures.xlsx)).text);
    const pptx = await parsePptx(fixtures.pptx);
    assert.equal(ppt.text, pptx.text);
    assert.deepEqual(
      ppt.blocks.map((b) => b.page),
      pptx.blocks.map((b) => b.page),
      "slide numbers survive the conversion",
    );
    assert.equal(ppt.pageCount, pptx.pageCount);
    assert.match(doc.warnings.at(-1)!, /Converted from the Word 97–2003 document format by LibreOffice/);
    assert.deepEqual(leftovers(), before, "the conversion folders are removed");
  });

  it("refuses with converter_unavailable, naming LibreOffice and what to save as, when no converter is installed", async () => {
    await assert.rejects(parseDoc(fixtures.doc, undefined, { binary: "/nonexistent/soffice" }), failsWith("converter_unavailable", /LibreOffice.*save it as a Word document \(\.docx\)/));
    await assert.rejects(parseXls(fixtures.xls, undefined, { binary: "no-such-soffice-on-path" }), failsWith("converter_unavailable", /Excel workbook \(\.xlsx\)/));
  });

  it("stops a conversion at its deadline or its output cap, killing the converter and removing its folder", async () => {
    const before = leftovers();
    await assert.rejects(parsePpt(fixtures.ppt, undefined, { timeoutMs: 300 }), failsWith("parse_timeout", /LibreOffice took longer than 0\.3 s/));
    await assert.rejects(parseDoc(fixtures.doc, undefined, { maxOutputBytes: 1024 }), failsWith("document_too_large"));
    await sleep(500);
    assert.deepEqual(converters(), [], "no converter process is left running");
    assert.deepEqual(leftovers(), before);
  });

  it("converts in the parse worker", async () => {
    const ppt = await parseDocument(fixtures.ppt, "ppt");
    assert.equal(ppt.format, "ppt");
    assert.equal(ppt.blocks.find((b) => b.text.startsWith("Notes: Nota:"))?.page, 4);
  });
});
