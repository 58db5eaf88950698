import assert from "node:assert/strict";
import { describe, it } from "node:test";
import MimeNode from "nodemailer/lib/mime-node";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { composeEml, REPORT_SUBJECT, reportEmail } from "../../../test/fixtures/email/build-email.js";
import { detectFormat } from "./detect-format.js";
import { parseDocument } from "./parse-document.js";
import { MAX_ATTACHMENTS, MAX_HEADER_BYTES, MAX_MIME_DEPTH, MAX_MIME_PARTS, parseEml } from "./parse-eml.js";
import { ParseError, type ParseErrorCode } from "./types.js";

/** A hang guard for hostile input (the requirement is bounded time), not a speed target. */
const HOSTILE_BOUND_MS = 30_000;

async function expectFailure(bytes: Uint8Array, code: ParseErrorCode, pattern: RegExp): Promise<void> {
  assert.equal(detectFormat(bytes, "hostile.eml"), "eml");
  const started = performance.now();
  await assert.rejects(parseDocument(bytes, "eml"), (e: unknown) => {
    assert.ok(e instanceof ParseError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
  assert.ok(performance.now() - started < HOSTILE_BOUND_MS);
}

describe("parseEml", () => {
  it("reads headers (encoded words decoded), the body, and lists the attachments, which come back as files of their own", async () => {
    const eml = await reportEmail();
    assert.match(eml.toString("latin1"), /^Subject: =\?UTF-8\?Q\?/m, "the subject is written as encoded words");
    const document = await parseEml(eml);
    assertOffsets(document);
    assert.equal(document.format, "eml");
    assert.equal(document.title, REPORT_SUBJECT);
    assert.deepEqual(headings(document), [`1 ${REPORT_SUBJECT}`, "2 Attachments"]);
    const header = document.blocks[1]!;
    assert.equal(header.kind, "paragraph");
    assert.equal(
      header.text,
      [
        "From: Siti Aminah binti Yusof <siti@koperasi.example.my>",
        "To: Jabatan Kewangan <kewangan@koperasi.example.my>",
        "Cc: Encik Ali <ali@koperasi.example.my>",
        "Date: Tue, 05 Mar 2024 09:30:00 +0000",
      ].join("\n"),
    );
    // Plain and HTML say the same: the plain body is read, once.
    assert.equal(document.text.match(/Bersama-sama ini dilampirkan/g)?.length, 1);
    assert.ok(document.blocks.some((b) => b.kind === "paragraph" && b.text === "Bersama-sama ini dilampirkan laporan tahunan koperasi untuk semakan tuan."));
    const list = document.blocks.at(-1)!;
    assert.equal(list.kind, "list");
    assert.match(list.text, /^- report\.pdf \(PDF, 3 KB\)\n- report\.docx \(Word document, 3 KB\)\n- nota\.txt \(Text, \d+ bytes\)$/);
    assert.deepEqual(
      document.embedded?.map((e) => [e.filename, e.relation, detectFormat(e.bytes, e.filename)]),
      [
        ["report.pdf", "attachment", "pdf"],
        ["report.docx", "attachment", "docx"],
        ["nota.txt", "attachment", "txt"],
      ],
    );
    assert.ok(Buffer.from(document.embedded[0]!.bytes).equals(Buffer.from(fixture("report.pdf"))), "the PDF comes back byte for byte");
    assert.ok(Buffer.from(document.embedded[1]!.bytes).equals(Buffer.from(fixture("report.docx"))));
    assert.equal(Buffer.from(document.embedded[2]!.bytes).toString("latin1"), "Nota ringkas: caf\xe9 di tingkat bawah dibuka semula.");
  });

  it("decodes a body and a subject in other charsets (ISO-8859-1 quoted-printable, Windows-1252 encoded words)", async () => {
    // MimeNode (MailComposer's building block) keeps the charset it is given; MailComposer itself writes UTF-8.
    const node = new MimeNode("text/plain; charset=iso-8859-1");
    node.setHeader({ From: "Pn. Zuraidah <zuraidah@example.my>", To: "kafe@example.my", Date: "Tue, 05 Mar 2024 09:30:00 +0800" });
    node.setHeader("Subject", { prepared: true, value: "=?windows-1252?Q?Menu_caf=E9_=96_harga_baharu?=" });
    node.setContent(Buffer.from("Harga kopi di kaf\xe9 naik kepada RM5.\n\nCr\xe8me br\xfbl\xe9e tidak lagi dijual.", "latin1"));
    const eml = await node.build();
    assert.match(eml.toString("latin1"), /charset=iso-8859-1/i);
    const document = await parseEml(eml);
    assert.equal(document.title, "Menu café – harga baharu");
    assert.match(document.text, /Harga kopi di kafé naik kepada RM5\./);
    assert.match(document.text, /Crème brûlée tidak lagi dijual\./);
    assert.equal(document.embedded?.length, 0);
  });

  it("reads the HTML body when the plain one is a stub, or when the HTML holds a table (kept as a Markdown table)", async () => {
    const stub = await parseEml(await composeEml({ from: "a@example.my", subject: "Stub", text: "Please view this message in a browser.", html: "<h2>Jadual</h2><p>Mesyuarat agung pada <b>12 Mac</b> di dewan utama.</p>" }));
    assert.match(stub.text, /Mesyuarat agung pada 12 Mac di dewan utama\./);
    assert.doesNotMatch(stub.text, /view this message in a browser/);
    const table = await parseEml(
      await composeEml({
        from: "a@example.my",
        subject: "Kutipan",
        text: "Daerah Kutipan\nKlang 1200\nPetaling 950",
        html: "<table><tr><th>Daerah</th><th>Kutipan</th></tr><tr><td>Klang</td><td>1200</td></tr><tr><td>Petaling</td><td>950</td></tr></table>",
      }),
    );
    const block = table.blocks.find((b) => b.kind === "table");
    assert.ok(block, table.text);
    assert.match(block.text, /\| Daerah \| Kutipan \|\n\| --- \| --- \|\n\| Klang \| 1200 \|/);
    const htmlOnly = await parseEml(await composeEml({ from: "a@example.my", subject: "Hanya HTML", html: "<p>Satu perenggan.</p><ul><li>pertama</li><li>kedua</li></ul>" }));
    assertOffsets(htmlOnly);
    assert.deepEqual(
      htmlOnly.blocks.slice(2).map((b) => [b.kind, b.text]),
      [
        ["paragraph", "Satu perenggan."],
        ["list", "- pertama\n- kedua"],
      ],
    );
  });

  it("hands an attached message on as an .eml named after its subject; inline images of the HTML are not attachments", async () => {
    const inner = await composeEml({ from: "b@example.my", subject: "Minit mesyuarat 3/2024", text: "Minit yang disahkan." });
    const outer = await parseEml(
      await composeEml({
        from: "a@example.my",
        subject: "Fwd: Minit mesyuarat",
        html: '<p>Lihat minit di bawah.</p><img src="cid:logo@x" alt="Logo koperasi">',
        attachments: [
          { content: inner, contentType: "message/rfc822" },
          { filename: "logo.png", content: Buffer.from(fixture("image-named.txt")), cid: "logo@x" },
        ],
      }),
    );
    assert.deepEqual(
      outer.embedded?.map((e) => [e.filename, e.relation]),
      [["Minit mesyuarat 3_2024.eml", "attachment"]].map(([name, relation]) => [name!.replace("_", " "), relation]),
    );
    const again = await parseEml(outer.embedded[0]!.bytes);
    assert.equal(again.title, "Minit mesyuarat 3/2024");
    assert.match(again.text, /Minit yang disahkan\./);
    assert.match(outer.text, /Logo koperasi/, "the image's alt text stays in the body");
  });

  it("refuses a file that is no e-mail message, and an empty one", async () => {
    await assert.rejects(parseEml(Buffer.from("Just some notes, no headers at all.\n\nSecond paragraph.")), (e: unknown) => e instanceof ParseError && e.code === "corrupt_document");
    await assert.rejects(parseDocument(new Uint8Array(0), "eml"), (e: unknown) => e instanceof ParseError && e.code === "empty_document");
  });
});

describe("hostile e-mail messages (parsed in the worker)", () => {
  it(`refuses more than ${MAX_ATTACHMENTS} attachments with document_too_large`, async () => {
    const attachments = Array.from({ length: 3_000 }, (_, i) => ({ filename: `a${i}.txt`, content: `attachment ${i}` }));
    await expectFailure(await composeEml({ from: "a@example.my", subject: "Many", text: "Many files.", attachments }), "document_too_large", /3,000 attachments; at most 1,000/);
  });

  it("refuses MIME parts nested too deeply (a MIME bomb) with document_too_complex, and too many parts with document_too_large", async () => {
    const depth = 5_000;
    const nested = ["From: a@example.my", "Subject: nested", "MIME-Version: 1.0"];
    for (let i = 0; i < depth; i++) nested.push(`Content-Type: multipart/mixed; boundary="b${i}"`, "", `--b${i}`);
    nested.push("Content-Type: text/plain", "", "deep inside");
    for (let i = depth - 1; i >= 0; i--) nested.push(`--b${i}--`);
    await expectFailure(Buffer.from(nested.join("\r\n")), "document_too_complex", new RegExp(`more than ${MAX_MIME_DEPTH} levels`));
    const wide = ["From: a@example.my", "Subject: wide", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="w"', ""];
    for (let i = 0; i < MAX_MIME_PARTS + 10; i++) wide.push("--w", "Content-Type: text/plain", "", `part ${i}`);
    wide.push("--w--");
    await expectFailure(Buffer.from(wide.join("\r\n")), "document_too_large", /more than 10,000 MIME parts/);
  });

  it("refuses headers larger than the limit with document_too_large", async () => {
    const eml = await composeEml({ from: "a@example.my", subject: "Huge header", text: "Body.", headers: { "X-Padding": "word ".repeat((MAX_HEADER_BYTES / 5) * 1.5) } });
    assert.ok(eml.length > MAX_HEADER_BYTES);
    await expectFailure(eml, "document_too_large", /headers are larger than 2 MB/);
  });

  it("reads a message whose attachment has broken base64: the message indexes, the damaged file comes back as it decodes", async () => {
    const eml = (await reportEmail()).toString("latin1");
    // Damage the PDF's base64 halfway through: characters outside the alphabet, a truncated line.
    const start = eml.indexOf('filename=report.pdf');
    const damaged = Buffer.from(eml.slice(0, start + 200) + "!!!@@@###$$$" + eml.slice(start + 260), "latin1");
    const document = await parseDocument(damaged, "eml");
    assert.equal(document.title, REPORT_SUBJECT);
    const pdf = document.embedded?.find((e) => e.filename === "report.pdf");
    assert.ok(pdf, "the attachment is still handed on");
    assert.ok(!Buffer.from(pdf.bytes).equals(Buffer.from(fixture("report.pdf"))), "its bytes are what the damaged base64 decodes to");
  });
});
