import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertOffsets } from "../../../test/fixtures/documents/document-assertions.js";
import { buildMbox, composedMessages, composeEml } from "../../../test/fixtures/email/build-email.js";
import { detectFormat } from "./detect-format.js";
import { parseDocument } from "./parse-document.js";
import { parseEml } from "./parse-eml.js";
import { MAX_MBOX_MESSAGES, parseMbox, splitMailbox } from "./parse-mbox.js";
import { ParseError } from "./types.js";

describe("parseMbox", () => {
  it("splits a mailbox into its messages and indexes them: count, date range, one row per message", async () => {
    const messages = await composedMessages(5);
    const mbox = buildMbox(messages);
    assert.equal(detectFormat(mbox, "banjir.mbox"), "mbox");
    assert.equal(mbox.toString("latin1").match(/^>From the river gauge/gm)?.length, 5, "the writer quoted each body line starting From");
    const document = await parseMbox(mbox);
    assertOffsets(document);
    assert.equal(document.format, "mbox");
    assert.equal(document.title, "Mailbox of 5 messages (2024-01-01 to 2024-01-05)");
    assert.match(document.text, /This mailbox holds 5 messages from 2024-01-01 to 2024-01-05\./);
    const table = document.blocks.find((b) => b.kind === "table")!;
    assert.equal(
      table.text.split("\n").slice(0, 3).join("\n"),
      "| Date | From | Subject |\n| --- | --- | --- |\n| 2024-01-01 08:15 UTC | Pegawai 0 <pegawai0@daerah.example.my> | Laporan harian banjir no. 1 |",
    );
    assert.equal(document.embedded?.length, 5);
    for (const [i, file] of document.embedded.entries()) {
      assert.equal(file.relation, "message");
      assert.equal(file.filename, `Laporan harian banjir no. ${i + 1}.eml`);
      assert.equal(detectFormat(file.bytes, file.filename), "eml");
      // Each message is the composed one again, byte for byte but for line ends (the mailbox stores LF).
      assert.equal(Buffer.from(file.bytes).toString("latin1"), messages[i]!.eml.toString("latin1").replace(/\r\n/g, "\n"));
      const message = await parseEml(file.bytes);
      assert.equal(message.title, `Laporan harian banjir no. ${i + 1}`);
      assert.match(message.text, new RegExp(`^From the river gauge at station ${100 + i},`, "m"), "the quoted line is unquoted");
    }
  });

  it("unquotes one level of >From (mboxrd), reads CRLF mailboxes, and splits only at From lines after a blank line", async () => {
    const eml = await composeEml({ from: "a@example.my", subject: "Petikan", text: "Baris satu\n>From quoted once by the author\nFrom a line no writer quoted, not after a blank line 10:30\n\nAkhir." });
    const mbox = buildMbox([{ from: "a@example.my", date: new Date("2024-05-01T00:00:00Z"), eml }, { from: "b@example.my", date: new Date("2024-05-02T00:00:00Z"), eml: await composeEml({ from: "b@example.my", subject: "Kedua", text: "Dua." }) }]);
    assert.match(mbox.toString("latin1"), /^>>From quoted once by the author$/m);
    for (const bytes of [mbox, Buffer.from(mbox.toString("latin1").replace(/\n/g, "\r\n"), "latin1")]) {
      const entries = splitMailbox(bytes);
      assert.equal(entries.length, 2);
      const first = await parseEml(entries[0]!.bytes);
      assert.match(first.text, /^>From quoted once by the author$/m);
      assert.match(first.text, /^From a line no writer quoted, not after a blank line 10:30$/m);
      assert.equal((await parseEml(entries[1]!.bytes)).title, "Kedua");
    }
  });

  it("refuses a file that is not a mailbox (corrupt_document) and one with nothing in it (empty_document)", async () => {
    await assert.rejects(parseMbox(Buffer.from("Subject: hello\n\nNot a mailbox.\n")), (e: unknown) => e instanceof ParseError && e.code === "corrupt_document" && /does not start with a "From " line/.test(e.message));
    await assert.rejects(parseMbox(Buffer.from("\n\n  \n")), (e: unknown) => e instanceof ParseError && e.code === "empty_document");
  });

  it(`refuses more than ${MAX_MBOX_MESSAGES.toLocaleString("en")} messages with document_too_large, in the worker`, async () => {
    const one = buildMbox([{ from: "a@example.my", date: new Date("2024-01-01T00:00:00Z"), eml: await composeEml({ from: "a@example.my", subject: "Satu", text: "Satu." }) }]);
    const mbox = Buffer.concat(Array.from({ length: MAX_MBOX_MESSAGES + 1 }, () => one));
    await assert.rejects(parseDocument(mbox, "mbox"), (e: unknown) => e instanceof ParseError && e.code === "document_too_large" && /more than 100,000 messages/.test(e.message));
  });

  it("parses a mailbox of 2,000 messages in the worker, each message handed on", async () => {
    const messages = await composedMessages(2_000);
    const document = await parseDocument(buildMbox(messages), "mbox");
    assert.equal(document.embedded?.length, 2_000);
    assert.match(document.text, /holds 2,000 messages from 2024-01-01 to 2029-06-22/);
    assert.equal(document.blocks.filter((b) => b.kind === "table").length, 40, "50 rows per table");
  });
});
