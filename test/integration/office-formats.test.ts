/**
 * Office and e-book formats end to end over HTTP: PPTX, XLSX, ODS, CSV, ODT, EPUB and the
 * 97–2003 formats (through LibreOffice) built by the formats' own tools, uploaded in one
 * batch with a zip bomb and a CSV of ten million rows, indexed with a real embedding model,
 * then searched: a slide is cited by its number, a row by its sheet and row range, an
 * e-book passage by its chapter. The hostile files fail alone, each with its code.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BOOK, DECK, officeFixtures, WORKBOOK, type OfficeFixtures } from "../fixtures/office/build-office.js";
import { officeZipBomb } from "../fixtures/office/hostile-office.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus, type UploadFile } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

interface Hit {
  filename: string;
  text: string;
  page: number | null;
  page_start: number | null;
  page_end: number | null;
  heading_path: string[];
}

/** A CSV of members (semicolon-separated, as a Malaysian Excel saves it), 60 rows. */
function membersCsv(): string {
  const lines = ["Nama;Daerah;Yuran (RM)"];
  for (let i = 1; i <= 60; i++) lines.push(i === 47 ? "Hajah Rokiah binti Mat Saman;Marang;275,50" : `Ahli ${i};Daerah ${i % 9};${100 + i},00`);
  return `${lines.join("\r\n")}\r\n`;
}

/** 10 million records of "digit,digit" (40 MB, under the upload limit). */
function hugeCsv(): Buffer {
  const rows = 10_000_000;
  const bytes = Buffer.alloc(4 * rows + 4);
  bytes.write("a,b\n", 0, "latin1");
  for (let i = 1; i <= rows; i++) bytes.set([0x30 + (i % 10), 0x2c, 0x30 + (i % 7), 0x0a], 4 * i);
  return bytes;
}

describe("office and e-book formats over the API", () => {
  let t: TestServer;
  let fixtures: OfficeFixtures;
  let corpusId: string;
  const search = async (query: string, filename: string): Promise<Hit[]> => {
    const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query, search: "keyword", top_k: 30 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return (res.json.data as Hit[]).filter((hit) => hit.filename === filename);
  };

  before(async () => {
    fixtures = await officeFixtures();
    t = await startTestServer({
      bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2"), "svc-embed-1024": testModel("embed-1024") },
    });
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Office formats", embedding_model: "minilm" })).json.id;
  });
  after(() => t?.close());

  it("indexes every format uploaded in one batch, and fails the zip bomb and the 10-million-row CSV alone", async () => {
    const files: UploadFile[] = [
      { name: "deck.pptx", content: Buffer.from(fixtures.pptx) },
      { name: "ledger.xlsx", content: Buffer.from(fixtures.xlsx) },
      { name: "ledger.ods", content: Buffer.from(fixtures.ods) },
      { name: "ahli.csv", content: membersCsv() },
      { name: "report.odt", content: Buffer.from(fixtures.odt) },
      { name: "book.epub", content: Buffer.from(fixtures.bookEpub) },
      { name: "report.doc", content: Buffer.from(fixtures.doc) },
      { name: "ledger.xls", content: Buffer.from(fixtures.xls) },
      { name: "deck.ppt", content: Buffer.from(fixtures.ppt) },
      { name: "bomb.xlsx", content: Buffer.from(officeZipBomb("xlsx", "lying")) },
      { name: "huge.csv", content: hugeCsv() },
    ];
    const res = await upload(t, corpusId, files);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.deepEqual(res.json.rejected, []);
    assert.equal(res.json.documents.length, files.length);
    const corpus = await waitForStatus(t, corpusId, 600_000);
    assert.equal(corpus.document_counts.indexed, files.length - 2, JSON.stringify(corpus.document_counts));
    const documents = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?limit=100`)).json.data as { filename: string; status: string; page_count: number | null; content_type: string; error: { code: string; message: string } | null }[];
    const byName = new Map(documents.map((d) => [d.filename, d]));
    for (const name of ["bomb.xlsx", "huge.csv"]) {
      assert.equal(byName.get(name)?.status, "failed", name);
      assert.equal(byName.get(name)?.error?.code, "document_too_large", `${name}: ${byName.get(name)?.error?.message}`);
    }
    assert.match(byName.get("huge.csv")!.error!.message, /more than 1,000,000 rows/);
    assert.equal(byName.get("deck.pptx")!.page_count, DECK.slides);
    assert.equal(byName.get("deck.ppt")!.page_count, DECK.slides);
    assert.equal(byName.get("ledger.xlsx")!.content_type, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    assert.equal(byName.get("report.doc")!.content_type, "application/msword");
  });

  it("cites a slide by its number, with its title as the heading and its speaker notes in the passage", async () => {
    for (const filename of ["deck.pptx", "deck.ppt"]) {
      const [hit] = await search("yuran latihan ditanggung sepenuhnya koperasi", filename);
      assert.ok(hit, `a hit in ${filename}`);
      assert.deepEqual([hit.page, hit.page_start, hit.page_end], [DECK.malaySlide.page, DECK.malaySlide.page, DECK.malaySlide.page], filename);
      assert.deepEqual(hit.heading_path, [DECK.malaySlide.title]);
      assert.ok(hit.text.includes(`Notes: ${DECK.malaySlide.notes}`) && hit.text.includes(DECK.malaySlide.bullet), hit.text);
    }
  });

  it("cites a row by its sheet and row range, the header row in the passage", async () => {
    const { fact, sales } = WORKBOOK;
    for (const filename of ["ledger.xlsx", "ledger.ods", "ledger.xls"]) {
      const [hit] = await search(`${fact.branch} ${fact.product}`, filename);
      assert.ok(hit, `a hit in ${filename}`);
      const [sheet, rows] = hit.heading_path;
      assert.equal(sheet, sales.name, filename);
      const [first, last] = rows!.replace(/^Rows? /, "").split("–").map(Number);
      assert.ok(first! <= fact.row && fact.row <= (last ?? first)!, `${filename}: ${rows} holds row ${fact.row}`);
      assert.ok(hit.text.includes(`| ${sales.header.join(" | ")} |`), "the header row travels with the rows");
      assert.ok(hit.text.includes(`| ${fact.date} | ${fact.branch} | ${fact.product} | ${fact.quantity} |`), hit.text);
      assert.equal(hit.page, null);
    }
    const [member] = await search("Rokiah Marang", "ahli.csv");
    assert.ok(member, "a hit in the CSV");
    assert.match(member.heading_path.join(" › "), /^Rows? \d+–\d+$/);
    assert.ok(member.text.includes("| Nama | Daerah | Yuran (RM) |\n| --- | --- | --- |") && member.text.includes("| Hajah Rokiah binti Mat Saman | Marang | 275,50 |"), member.text);
  });

  it("cites an e-book passage by its chapter, and a converted Word document by its headings", async () => {
    const [chapter] = await search("ditubuhkan 1987 nelayan Kuala Selangor", "book.epub");
    assert.ok(chapter, "a hit in the e-book");
    assert.deepEqual(chapter.heading_path, [BOOK.chapters[1]]);
    assert.ok(chapter.text.includes(BOOK.malayFact));
    for (const filename of ["report.odt", "report.doc"]) {
      const [hit] = await search("cold-storage units warehouse", filename);
      assert.ok(hit, `a hit in ${filename}`);
      assert.deepEqual(hit.heading_path, ["Harbour Cooperative Plan", "Projects"], filename);
      assert.ok(hit.text.includes("- Replace the cold-storage units"));
    }
  });
});
