import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { nestedHtml } from "../../../test/fixtures/documents/fixture-documents.js";
import { hugeHtml } from "../../../test/fixtures/documents/hostile-documents.js";
import { measureHtmlDepth } from "./measure-html-depth.js";
import { MAX_HTML_BYTES, MAX_HTML_DEPTH, parseHtml } from "./parse-html.js";
import { ParseError } from "./types.js";

const html = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));

describe("parseHtml", () => {
  it("keeps the article and drops navigation, scripts, styles, forms, asides, page header/footer, iframes and SVG", async () => {
    const document = await parseHtml(fixture("page.html"));
    assertOffsets(document);
    for (const dropped of ["NAV_TEXT", "SCRIPT_TEXT", "STYLE_TEXT", "FORM_TEXT", "ASIDE_TEXT", "FOOTER_TEXT", "NOSCRIPT_TEXT", "SVG_TEXT", "Subscribe", "font-family"]) {
      assert.ok(!document.text.includes(dropped), `${dropped} must not be in the text`);
    }
    assert.match(document.text, /The harbour opens at 06:00 and closes at 22:00\. See the tide tables before sailing\./);
  });

  it("turns headings into heading blocks with levels and takes the title from <title>", async () => {
    const document = await parseHtml(fixture("page.html"));
    assert.deepEqual(headings(document), ["1 Harbour Notes", "2 Tides this week", "2 Rules"]);
    assert.equal(document.title, "Tide Tables & Harbour Notes");
    assert.ok(document.blocks.every((b) => b.page === null));
  });

  it("renders tables as readable pipe tables and lists as lists", async () => {
    const document = await parseHtml(fixture("page.html"));
    const table = document.blocks.find((b) => b.kind === "table");
    assert.equal(table?.text, "| Day | High tide | Low tide |\n| --- | --- | --- |\n| Monday | 04:12 | 10:30 |\n| Tuesday | 05:01 | 11:15 |");
    assert.equal(document.blocks.find((b) => b.kind === "list")?.text, "- Keep the slipway clear.\n- Report oil spills to the harbour master.");
  });

  it("falls back to the first <h1> for the title; keeps an article's own header; reads legacy charsets", async () => {
    const page = await parseHtml(html("<body><article><header><h1>Inside &lt;Header&gt;</h1></header><p>Body text.</p></article></body>"));
    assert.equal(page.title, "Inside <Header>");
    assert.deepEqual(headings(page), ["1 Inside <Header>"]);
    const latin1 = Buffer.from('<html><head><meta charset="iso-8859-1"></head><body><p>Caf\xe9 \xa35</p></body></html>', "latin1");
    assert.equal((await parseHtml(latin1)).text, "Café £5");
  });

  it("rejects 100 000 nested divs as document_too_complex quickly, but accepts deep-but-sane nesting", async () => {
    const started = performance.now();
    await assert.rejects(parseHtml(nestedHtml(100_000)), (e: unknown) => e instanceof ParseError && e.code === "document_too_complex");
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */);
    const sane = await parseHtml(nestedHtml(MAX_HTML_DEPTH - 10));
    assert.equal(sane.text, "deep text");
  });

  it("refuses a page beyond MAX_HTML_BYTES as document_too_large before building any DOM", async () => {
    const before = process.memoryUsage().rss;
    await assert.rejects(parseHtml(hugeHtml(MAX_HTML_BYTES / 1024 ** 2 + 1)), (e: unknown) => e instanceof ParseError && e.code === "document_too_large");
    assert.ok(process.memoryUsage().rss - before < 100 * 1024 * 1024, "no DOM of millions of nodes was built");
  });

  it("rejects a page with no text as empty_document", async () => {
    await assert.rejects(parseHtml(html("<html><head><script>x()</script></head><body><nav>menu</nav></body></html>")), (e: unknown) => e instanceof ParseError && e.code === "empty_document");
  });
});

describe("measureHtmlDepth", () => {
  it("counts nesting, honours implied end tags, skips comments, raw text and void elements", () => {
    assert.equal(measureHtmlDepth("<div><div><span>x</span></div></div>", 100), 3);
    assert.equal(measureHtmlDepth("<ul><li>a<li>b<li>c</ul>", 100), 2, "<li> closes the open <li>");
    assert.equal(measureHtmlDepth(`<table>${"<tr><td>x".repeat(500)}</table>`, 100), 3, "rows and cells without end tags");
    assert.equal(measureHtmlDepth(`<p>${"<br><img src=x>".repeat(500)}<!-- <div><div> --><script>"<div><div><div>"</script>`, 100), 2, "the script element counts, its content does not");
    assert.equal(measureHtmlDepth("<div>".repeat(5000), 100), 101, "stops as soon as the limit is passed");
  });
});
