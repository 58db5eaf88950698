import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { assertOffsets } from "../../../test/fixtures/documents/document-assertions.js";
import { DECK, officeFixtures } from "../../../test/fixtures/office/build-office.js";
import { deepPptx, externalEntityPptx, officeZipBomb, pptxWith, slideXml } from "../../../test/fixtures/office/hostile-office.js";
import { fakeDeps, options } from "../../../test/helpers/chunking-documents.js";
import { chunkDocument } from "../chunking/chunk-document.js";
import { parseDocument } from "./parse-document.js";
import { parsePptx } from "./parse-pptx.js";
import { ParseError, type ParsedDocument, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));
const onPage = (document: ParsedDocument, page: number) => document.blocks.filter((b) => b.page === page).map((b) => [b.kind, b.text]);

describe("parsePptx", () => {
  let deck: ParsedDocument;
  before(async () => {
    deck = await parsePptx((await officeFixtures()).pptx);
  });

  it("reads slides in order, each under its title, every block on its slide's page", () => {
    assertOffsets(deck);
    assert.equal(deck.format, "pptx");
    assert.equal(deck.pageCount, DECK.slides, "the empty last slide still counts");
    assert.equal(deck.title, DECK.title);
    assert.deepEqual(
      deck.blocks.filter((b) => b.kind === "heading").map((b) => [b.page, b.level, b.text]),
      [
        [1, 1, DECK.title],
        [2, 1, "Warehouse plan"],
        [3, 1, "Budget"],
        [4, 1, DECK.malaySlide.title],
        [5, 1, "Next steps"],
      ],
      "a title in a plain text box at the top of slide 5 is its title too",
    );
    assert.ok(deck.blocks.every((b) => b.page !== null && b.page >= 1 && b.page <= 5));
  });

  it("keeps bullet levels, numbered lists, tables and the speaker notes on the slide's page", () => {
    assert.deepEqual(onPage(deck, 1), [
      ["heading", DECK.title],
      ["paragraph", "Port Klang, January 2025"],
    ]);
    assert.deepEqual(onPage(deck, 2), [
      ["heading", "Warehouse plan"],
      ["list", "- Open the Port Klang warehouse\n  - Cold storage for forty tonnes of fish\n- Train twenty new members"],
      ["paragraph", `Notes: ${DECK.notes.text}`],
    ]);
    assert.deepEqual(onPage(deck, 3), [
      ["heading", "Budget"],
      ["table", "| Project | Cost (RM) |\n| --- | --- |\n| Warehouse | 850,000 |\n| Training | 40,000 |"],
      ["paragraph", "Notes: The training budget doubled after the members' vote."],
    ]);
    assert.deepEqual(onPage(deck, 5), [
      ["heading", "Next steps"],
      ["list", "1. Sign the lease\n2. Hire the trainers"],
    ]);
  });

  it("keeps Malay text intact, notes included", () => {
    assert.deepEqual(onPage(deck, DECK.malaySlide.page), [
      ["heading", DECK.malaySlide.title],
      ["list", `- ${DECK.malaySlide.bullet}\n- Setiap ahli menerima sijil selepas tamat kursus`],
      ["paragraph", `Notes: ${DECK.malaySlide.notes}`],
    ]);
  });

  it("gives passages the slide number as their page and the slide title as their heading", async () => {
    const chunks = await chunkDocument(deck, options("semantic", { targetTokens: 200, maxTokens: 480 }), fakeDeps());
    const notes = chunks.find((c) => c.text.includes(DECK.malaySlide.notes))!;
    assert.deepEqual([notes.pageStart, notes.pageEnd, notes.headingPath], [4, 4, [DECK.malaySlide.title]]);
    assert.ok(chunks.every((c) => c.pageStart === c.pageEnd), "no passage spans two slides");
  });

  it("falls back to the first slide's title, and names untitled slides by number", async () => {
    const untitled = await parsePptx(await pptxWith(slideXml("Just a line of text on a slide with no title at all, long enough not to be one: it runs on and on past the length any title has, far past it, and then it keeps going for a while longer still.")));
    assert.deepEqual(untitled.blocks.map((b) => b.text.slice(0, 8)), ["Slide 1", "Just a l"]);
    assert.equal(untitled.title, null);
    const short = await parsePptx(await pptxWith(slideXml("Ringkasan")));
    assert.equal(short.title, "Ringkasan");
  });

  it("refuses zip bombs, entities and deep nesting with clear codes, in the parse worker too", async () => {
    await assert.rejects(parsePptx(officeZipBomb("pptx", "honest")), failsWith("document_too_large", /1\.1 GB/));
    await assert.rejects(parsePptx(officeZipBomb("pptx", "lying")), failsWith("document_too_large", /decompression bomb/));
    await assert.rejects(parsePptx(await externalEntityPptx()), failsWith("corrupt_document", /entities/));
    await assert.rejects(parsePptx(await deepPptx(100_000)), failsWith("document_too_complex"));
    await assert.rejects(parsePptx(await pptxWith("")), failsWith("corrupt_document"), "an empty slide part");
    await assert.rejects(parsePptx(await pptxWith(slideXml(""))), failsWith("empty_document"));
    for (const [bytes, code] of [
      [officeZipBomb("pptx", "honest"), "document_too_large"],
      [officeZipBomb("pptx", "lying"), "document_too_large"],
      [await externalEntityPptx(), "corrupt_document"],
      [await deepPptx(100_000), "document_too_complex"],
    ] as const) {
      await assert.rejects(parseDocument(bytes, "pptx"), failsWith(code));
    }
  });
});
