import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { parseMarkdown } from "./parse-markdown.js";
import { splitMarkdown } from "./split-markdown.js";
import { stripInlineMarkdown } from "./strip-inline-markdown.js";

describe("parseMarkdown", () => {
  it("builds the heading tree of the guide: ATX and setext headings with levels, text without #", async () => {
    const document = await parseMarkdown(fixture("guide.md"));
    assertOffsets(document);
    assert.deepEqual(headings(document), ["1 Field Guide", "2 Setup", "3 Requirements", "2 Usage", "2 Usage Notes", "1 Closing Words"]);
    assert.equal(document.title, "Field Guide");
    assert.ok(!document.text.includes("Front matter"), "front matter is not text");
  });

  it("keeps lists, tables and fenced code as their own blocks", async () => {
    const document = await parseMarkdown(fixture("guide.md"));
    const kinds = document.blocks.map((b) => b.kind);
    assert.deepEqual(kinds, ["heading", "paragraph", "heading", "paragraph", "heading", "list", "list", "heading", "heading", "table", "code", "heading", "paragraph"]);
    const [bullets, numbers] = document.blocks.filter((b) => b.kind === "list");
    assert.equal(bullets!.text, "- A laptop\n- A charger\n  with a long cable");
    assert.equal(numbers!.text, "1. Download\n2. Install");
    assert.equal(document.blocks.find((b) => b.kind === "table")!.text, "| Command | Effect |\n| ------- | ------ |\n| start   | starts |");
    assert.equal(document.blocks.find((b) => b.kind === "code")!.text, "pustaka serve\n\n# not a heading", "a # inside a fence is code, not a heading");
  });

  it("strips inline markup: emphasis, links (text kept), code spans, escapes", async () => {
    const document = await parseMarkdown(fixture("guide.md"));
    assert.equal(document.blocks[1]!.text, "Welcome to the field guide. It has links and code.");
    assert.equal(stripInlineMarkdown("file\\_name, \\*not emphasis\\*, snake_case_word, 2 * 3 * 4"), "file_name, *not emphasis*, snake_case_word, 2 * 3 * 4");
    assert.equal(stripInlineMarkdown("![a chart](c.png) [x][ref] <https://a.b/c> ~~old~~ __strong__ _em_"), "a chart x https://a.b/c old strong em");
    assert.equal(stripInlineMarkdown("| a \\| b | c |", { table: true }), "| a \\| b | c |", "escaped pipes stay in tables");
  });

  it("handles headings with closing hashes, empty headings, quotes and indented code", () => {
    const blocks = splitMarkdown("## Title ##\n#\n#hashtag is text\n\n> quoted *text*\n> more\n\n    indented();\n    code();\n\nText\n---\n");
    assert.deepEqual(blocks, [
      { kind: "heading", text: "Title", level: 2 },
      { kind: "paragraph", text: "#hashtag is text" },
      { kind: "paragraph", text: "quoted text\nmore" },
      { kind: "code", text: "indented();\ncode();\n" },
      { kind: "heading", text: "Text", level: 2 },
    ]);
  });

  it("stays linear on hostile Markdown (long runs that defeat naive regular expressions)", () => {
    const hostile = [
      `# a${" ".repeat(200_000)}b`,
      `|x\n|${"-".repeat(10)}${" ".repeat(200_000)}y`,
      "![".repeat(100_000),
      "*a ".repeat(100_000),
      "> ".repeat(100_000) + "deep quote",
      "- item\n\n".repeat(50_000),
    ].join("\n\n");
    const started = performance.now();
    const blocks = splitMarkdown(hostile);
    assert.ok(blocks.length > 0);
    assert.ok(performance.now() - started < 30_000 /* hang guard, not a speed target */, `took ${Math.round(performance.now() - started)} ms`);
  });
});
