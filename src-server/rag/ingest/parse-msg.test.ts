import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decompressRTF } from "@kenjiuno/decompressrtf";
import * as CFB from "cfb";
import { assertOffsets, fixture, headings } from "../../../test/fixtures/documents/document-assertions.js";
import { buildMsg, nestedMsg, type MsgSpec } from "../../../test/fixtures/email/build-email.js";
import { detectFormat } from "./detect-format.js";
import { inspectCompoundFile } from "./inspect-compound-file.js";
import { parseDocument } from "./parse-document.js";
import { MAX_MSG_ATTACHMENTS, MAX_MSG_NESTING, parseMsg } from "./parse-msg.js";
import { decompressRtf, rtfBody } from "./rtf-body.js";
import { ParseError, type ParseErrorCode } from "./types.js";

/** A hang guard for hostile input (the requirement is bounded time), not a speed target. */
const HOSTILE_BOUND_MS = 30_000;

const REPORT: MsgSpec = {
  subject: "Laporan suku tahun — ringkasan",
  senderName: "Aminah binti Hassan",
  senderAddress: "aminah@koperasi.example.my",
  recipients: [
    { kind: "to", name: "Badrul Hisham", address: "badrul@koperasi.example.my" },
    { kind: "cc", name: "Chong Wei", address: "chong@koperasi.example.my" },
  ],
  body: "Salam semua,\r\n\r\nSila lihat laporan yang dilampirkan.\r\n",
  html: "<p>Salam semua,</p><p>Sila lihat <b>laporan</b> yang dilampirkan.</p>",
  sent: new Date("2024-03-05T09:30:00Z"),
  attachments: [
    { filename: "report.pdf", mimeType: "application/pdf", bytes: fixture("report.pdf") },
    { filename: "report.docx", bytes: fixture("report.docx") },
    { message: { subject: "Minit mesyuarat", senderName: "Setiausaha", senderAddress: "setiausaha@koperasi.example.my", body: "Minit yang disahkan.", attachments: [{ filename: "kehadiran.txt", bytes: Buffer.from("Hadir: 12 orang") }] } },
  ],
};

async function expectFailure(bytes: Uint8Array, code: ParseErrorCode, pattern: RegExp): Promise<void> {
  assert.equal(detectFormat(bytes, "hostile.msg"), "msg");
  const started = performance.now();
  await assert.rejects(parseDocument(bytes, "msg"), (e: unknown) => {
    assert.ok(e instanceof ParseError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
  assert.ok(performance.now() - started < HOSTILE_BOUND_MS);
}

/** A copy of `bytes` with a 32-bit little-endian value written at `offset`. */
function patched(bytes: Uint8Array, offset: number, value: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  new DataView(copy.buffer).setUint32(offset, value, true);
  return copy;
}

describe("parseMsg", () => {
  it("reads the subject, sender, recipients, date and body, lists the attachments and hands them on (an attached message as its own .msg)", async () => {
    const bytes = buildMsg(REPORT);
    assert.equal(detectFormat(bytes, "laporan.msg"), "msg");
    const document = await parseMsg(bytes);
    assertOffsets(document);
    assert.equal(document.format, "msg");
    assert.equal(document.title, "Laporan suku tahun — ringkasan");
    assert.deepEqual(headings(document), ["1 Laporan suku tahun — ringkasan", "2 Attachments"]);
    assert.equal(
      document.blocks[1]!.text,
      "From: Aminah binti Hassan <aminah@koperasi.example.my>\nTo: Badrul Hisham <badrul@koperasi.example.my>\nCc: Chong Wei <chong@koperasi.example.my>\nDate: Tue, 05 Mar 2024 09:30:00 GMT",
    );
    assert.equal(document.text.match(/Sila lihat laporan yang dilampirkan\./g)?.length, 1, "plain and HTML say the same: read once");
    assert.match(document.blocks.at(-1)!.text, /^- report\.pdf \(PDF, 3 KB\)\n- report\.docx \(\d+ KB\)\n- Minit mesyuarat\.msg \(Outlook message, \d+ KB\)$/);
    assert.deepEqual(
      document.embedded?.map((e) => [e.filename, e.relation, detectFormat(e.bytes, e.filename)]),
      [
        ["report.pdf", "attachment", "pdf"],
        ["report.docx", "attachment", "docx"],
        ["Minit mesyuarat.msg", "attachment", "msg"],
      ],
    );
    assert.ok(Buffer.from(document.embedded[0]!.bytes).equals(Buffer.from(fixture("report.pdf"))));
    const inner = await parseMsg(document.embedded[2]!.bytes);
    assert.equal(inner.title, "Minit mesyuarat");
    assert.match(inner.text, /From: Setiausaha <setiausaha@koperasi\.example\.my>/);
    assert.match(inner.text, /Minit yang disahkan\./);
    assert.deepEqual(
      inner.embedded?.map((e) => [e.filename, Buffer.from(e.bytes).toString()]),
      [["kehadiran.txt", "Hadir: 12 orang"]],
    );
  });

  it("reads an HTML-only body, and an RTF-only body (plain and HTML-encapsulated)", async () => {
    const html = await parseMsg(buildMsg({ subject: "HTML", html: "<table><tr><th>Daerah</th><th>Mangsa</th></tr><tr><td>Kuala Krai</td><td>412</td></tr></table>" }));
    assert.match(html.text, /\| Daerah \| Mangsa \|\n\| --- \| --- \|\n\| Kuala Krai \| 412 \|/);
    const rtf = await parseMsg(buildMsg({ subject: "RTF", rtf: "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Arial;}}\\f0 Kaf\\'e9 dibuka semula\\par Harga \\u8212? naik sedikit\\par}" }));
    assert.match(rtf.text, /Kafé dibuka semula\nHarga — naik sedikit/);
    assert.doesNotMatch(rtf.text, /Arial|fonttbl/);
    const fromHtml = await parseMsg(
      buildMsg({
        subject: "Encapsulated",
        rtf: "{\\rtf1\\ansi\\ansicpg1252\\fromhtml1 {\\fonttbl{\\f0 Arial;}}{\\*\\htmltag19 <html>}{\\*\\htmltag34 <body>}{\\*\\htmltag64 <p>}\\htmlrtf {\\htmlrtf0 Mesyuarat pada \\'e9t\\'e9\\htmlrtf }\\htmlrtf0{\\*\\htmltag72 </p>}{\\*\\htmltag64 <ul><li>}Satu{\\*\\htmltag72 </li><li>}Dua{\\*\\htmltag72 </li></ul>}{\\*\\htmltag42 </body>}}",
      }),
    );
    assert.deepEqual(
      fromHtml.blocks.slice(1).map((b) => [b.kind, b.text]),
      [
        ["paragraph", "Mesyuarat pada été"],
        ["list", "- Satu\n- Dua"],
      ],
    );
  });

  it("decompresses compressed RTF as independent implementations do (published test vectors)", () => {
    // From the xrtf package's documentation: "{\rtf1 WXYZWXYZWXYZWXYZWXYZ}" compressed.
    const xrtf = Buffer.from("1a0000001c0000004c5a4675e2d44b51410004205758595a0d6e7d010eb0", "hex");
    assert.equal(Buffer.from(decompressRtf(xrtf)).toString("latin1"), "{\\rtf1 WXYZWXYZWXYZWXYZWXYZ}");
    // From OBM's tests: an RTF body whose text is "Pouic pouic".
    const obm = Buffer.from(
      "3gAAADkCAABMWkZ1lTR5wz8ACQMwAQMB9wKnAgBjaBEKwHNldALRcHJx4DAgVGFoA3ECgwBQ6wNUDzcyD9MyBgAGwwKDpxIBA+MReDA0EhUgAoArApEI5jsJbzAVwzEyvjgJtBdCCjIXQRb0ORIAHxeEGOEYExjgFcMyNTX/CbQaYgoyGmEaHBaKCaUa9v8c6woUG3YdTRt/Hwwabxbt/xyPF7gePxg4JY0YVyRMKR+dJfh9CoEBMAOyMTYDMYksgSc1AUAnNmYtQNY3GoAtkDktgTMtQAwBFy3QLX8KhX0wgA==",
      "base64",
    );
    const ours = decompressRtf(obm);
    assert.deepEqual([...ours], decompressRTF([...obm]), "the same bytes as @kenjiuno/decompressrtf");
    assert.equal(rtfBody(ours).content.trim(), "Pouic pouic");
    // A stream that declares more than it holds stops at its end; one that claims gigabytes is refused.
    assert.ok(decompressRtf(xrtf.subarray(0, 20)).length < 28);
    assert.throws(() => decompressRtf(patched(xrtf, 4, 0x7fffffff)), (e: unknown) => e instanceof ParseError && e.code === "document_too_large");
  });

  it("measures a compound file's storage nesting, and refuses a file that is not an Outlook message", async () => {
    assert.equal(inspectCompoundFile(nestedMsg(3)).maxStorageDepth, 2 * 3, "an attachment storage and a message storage per level");
    const other = CFB.utils.cfb_new();
    CFB.utils.cfb_add(other, "/WordDocument", Buffer.from("not a message"));
    await assert.rejects(parseMsg(new Uint8Array(CFB.write(other, { type: "buffer" }) as Buffer)), (e: unknown) => e instanceof ParseError && e.code === "corrupt_document" && /not an Outlook message/.test(e.message));
    await assert.rejects(parseMsg(Buffer.from("plain text named .msg")), (e: unknown) => e instanceof ParseError && e.code === "corrupt_document");
  });
});

describe("hostile Outlook messages (parsed in the worker)", () => {
  it(`refuses messages attached 50 deep (the limit is ${MAX_MSG_NESTING}) with document_too_complex, and reads ${MAX_MSG_NESTING} levels`, async () => {
    await expectFailure(nestedMsg(50), "document_too_complex", /more than 10 levels deep/);
    const deepest = await parseDocument(nestedMsg(MAX_MSG_NESTING), "msg");
    assert.equal(deepest.title, "Level 0");
    assert.equal(deepest.embedded?.length, 1);
  });

  it(`refuses more than ${MAX_MSG_ATTACHMENTS.toLocaleString("en")} attachments with document_too_large`, async () => {
    const attachments = Array.from({ length: MAX_MSG_ATTACHMENTS + 1 }, (_, i) => ({ filename: `a${i}.txt`, bytes: Buffer.from(`file ${i}`) }));
    await expectFailure(buildMsg({ subject: "Many", body: "Many files.", attachments }), "document_too_large", /1,001 attachments; at most 1,000/);
  });

  it("refuses chains and directory links that loop, and streams larger than the file, with corrupt_document", async () => {
    const bytes = buildMsg(REPORT);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const sector = (n: number) => (n + 1) * 512;
    const firstDirectory = view.getUint32(0x30, true);
    const firstFat = view.getUint32(0x4c, true);
    // The directory's chain points back at itself.
    await expectFailure(patched(bytes, sector(firstFat) + 4 * firstDirectory, firstDirectory), "corrupt_document", /loops/);
    // The root's first child names itself as its left sibling.
    const child = view.getUint32(sector(firstDirectory) + 0x4c, true);
    const childEntry = sector(firstDirectory) + 128 * child; // the first directory sector holds entries 0–3
    assert.ok(child < 4, "the fixture's first child is in the first directory sector");
    await expectFailure(patched(bytes, childEntry + 0x44, child), "corrupt_document", /directory links loop/);
    // A stream that claims 2 GB.
    let stream = -1;
    for (let i = 1; i < 4; i++) if (bytes[sector(firstDirectory) + 128 * i + 0x42] === 2) stream = i;
    assert.ok(stream > 0, "a stream entry in the first directory sector");
    await expectFailure(patched(bytes, sector(firstDirectory) + 128 * stream + 0x78, 0x7fffffff), "corrupt_document", /more than the file holds/);
  });
});
