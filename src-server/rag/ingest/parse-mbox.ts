/**
 * Mailboxes (mbox: mboxrd and mboxo, as Thunderbird, mutt, Gmail's Takeout and `mail`
 * write them). Each message becomes a document of its own (an `.eml`, `embedded` with the
 * relation "message"); the mailbox's own text is a short index (how many messages, from
 * when to when, and a table of date, sender and subject) so a question about who wrote
 * when finds and cites the mailbox itself.
 *
 * Messages are split by scanning the bytes for separator lines (`From <sender> <date>` at
 * the start of the file or after a blank line); the file is never decoded as one string.
 * Body lines that a writer quoted (`>From `, `>>From `…) lose one `>` (mboxrd's rule; an
 * mboxo file's own `>From ` lines, which it did not quote, are unquoted as well, as every
 * reader must).
 */
import { decodeWords } from "postal-mime";
import { DocumentBuilder, promiseOf } from "./document-builder.js";
import { markdownTable } from "./markdown-table.js";
import { windows1252Controls as fix } from "./email-document.js";
import { firstAddress, headerValue, messageFileName } from "./parse-eml.js";
import { ParseError, type EmbeddedFile, type ParsedDocument } from "./types.js";

/** Most messages a mailbox may hold; each becomes a document. */
export const MAX_MBOX_MESSAGES = 100_000;
/** Messages per table in the index (each table a block, its header repeated). */
const INDEX_ROWS_PER_TABLE = 50;

const FROM = Buffer.from("From ", "latin1");
/** A separator line: `From `, the envelope sender, then (somewhere) a time of day, as asctime writes it. */
const SEPARATOR = /^From \S+[ \t].*\d{1,2}:\d{2}/;

interface MailboxEntry {
  bytes: Uint8Array;
  /** The date of the separator line, used when the message has no usable Date header. */
  envelopeDate: string;
}

/**
 * Parses a mailbox into its index text and its messages.
 * @throws ParseError `empty_document` (nothing in it), `corrupt_document` (not an mbox: no
 *   `From ` line at its start), `document_too_large` (more than `MAX_MBOX_MESSAGES`).
 */
export function parseMbox(bytes: Uint8Array): Promise<ParsedDocument> {
  return promiseOf(() => mailboxDocument(splitMailbox(bytes)));
}

/** The messages of a mailbox, separator lines removed and quoted `From ` lines unquoted. */
export function splitMailbox(input: Uint8Array): MailboxEntry[] {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  let start = 0;
  while (start < bytes.length && (bytes[start] === 0x0a || bytes[start] === 0x0d || bytes[start] === 0x20 || bytes[start] === 0x09)) start++;
  if (start === bytes.length) throw new ParseError("empty_document", "The mailbox is empty.");
  if (!bytes.subarray(start, start + 5).equals(FROM)) throw new ParseError("corrupt_document", 'The file is not a mailbox (mbox): it does not start with a "From " line.');
  const separators: number[] = [start];
  for (let at = bytes.indexOf("\nFrom ", start); at !== -1; at = bytes.indexOf("\nFrom ", at + 6)) {
    const line = at + 1;
    if (!afterBlankLine(bytes, at) || !SEPARATOR.test(lineAt(bytes, line))) continue;
    separators.push(line);
    if (separators.length > MAX_MBOX_MESSAGES) {
      throw new ParseError("document_too_large", `The mailbox holds more than ${MAX_MBOX_MESSAGES.toLocaleString("en")} messages; split it to index it.`);
    }
  }
  return separators.map((line, i) => {
    const next = separators[i + 1] ?? bytes.length;
    const bodyStart = bytes.indexOf(0x0a, line);
    const envelopeDate = lineAt(bytes, line).replace(/^From \S+\s*/, "");
    const content = bodyStart === -1 || bodyStart + 1 >= next ? bytes.subarray(next, next) : bytes.subarray(bodyStart + 1, withoutSeparatingBlankLine(bytes, bodyStart + 1, next));
    return { bytes: unquote(content), envelopeDate };
  });
}

/** Whether the line break at `at` ends a blank line (or is the file's first line end). */
function afterBlankLine(bytes: Buffer, at: number): boolean {
  if (at === 0) return true;
  if (bytes[at - 1] === 0x0a) return true;
  return bytes[at - 1] === 0x0d && (at < 2 || bytes[at - 2] === 0x0a);
}

/** The line starting at `start`, without its line end (at most 1,000 bytes, as Latin-1). */
function lineAt(bytes: Buffer, start: number): string {
  const end = bytes.indexOf(0x0a, start);
  return bytes.toString("latin1", start, Math.min(end === -1 ? bytes.length : end, start + 1000)).replace(/\r$/, "");
}

/** The end of a message: before the blank line that writers put between messages. */
function withoutSeparatingBlankLine(bytes: Buffer, start: number, end: number): number {
  if (end - start >= 2 && bytes[end - 1] === 0x0a && bytes[end - 2] === 0x0a) return end - 1;
  if (end - start >= 4 && bytes[end - 1] === 0x0a && bytes[end - 2] === 0x0d && bytes[end - 3] === 0x0a) return end - 2;
  return end;
}

/** Quoted `From ` lines lose one `>`; a message without any is returned as it is (no copy). */
function unquote(message: Buffer): Uint8Array {
  if (message.indexOf(">From ") === -1) return message;
  // Latin-1 maps every byte to one character and back: the bytes are unchanged but for the quotes.
  return Buffer.from(message.toString("latin1").replace(/^>(>*From )/gm, "$1"), "latin1");
}

/** What the index says of one message. */
interface IndexRow {
  date: Date | null;
  dateText: string;
  from: string;
  subject: string;
}

function mailboxDocument(entries: MailboxEntry[]): ParsedDocument {
  const rows = entries.map(indexRow);
  const dated = rows.map((r) => r.date).filter((d): d is Date => d !== null).sort((a, b) => a.getTime() - b.getTime());
  const range = dated.length > 0 ? `from ${isoDay(dated[0]!)} to ${isoDay(dated.at(-1)!)}` : "with no readable dates";
  const count = `${entries.length.toLocaleString("en")} message${entries.length === 1 ? "" : "s"}`;
  const title = `Mailbox of ${count}${dated.length > 0 ? ` (${isoDay(dated[0]!)} to ${isoDay(dated.at(-1)!)})` : ""}`;
  const builder = new DocumentBuilder();
  builder.add({ kind: "heading", level: 1, text: title });
  builder.add({ kind: "paragraph", text: `This mailbox holds ${count} ${range}. Each message is indexed as a document of its own.` });
  for (let i = 0; i < rows.length; i += INDEX_ROWS_PER_TABLE) {
    const slice = rows.slice(i, i + INDEX_ROWS_PER_TABLE);
    builder.add({ kind: "table", text: markdownTable(["Date", "From", "Subject"], slice.map((r) => [r.dateText, r.from, r.subject])) });
  }
  const embedded: EmbeddedFile[] = entries.map((entry, i) => ({ filename: messageFileName(entry.bytes) ?? `message-${i + 1}.eml`, bytes: entry.bytes, relation: "message" }));
  return { ...builder.build({ format: "mbox", title }), embedded };
}

/** Date, sender and subject of a message, from its headers (the separator line's date when it has no Date). */
function indexRow(entry: MailboxEntry): IndexRow {
  const dateHeader = headerValue(entry.bytes, "date");
  const date = parseDate(dateHeader) ?? parseDate(entry.envelopeDate);
  const fromHeader = headerValue(entry.bytes, "from");
  const subjectHeader = headerValue(entry.bytes, "subject");
  return {
    date,
    dateText: date ? isoMinute(date) : (dateHeader ?? entry.envelopeDate),
    from: fromHeader ? (firstAddress(fromHeader) ?? fix(decodeWords(fromHeader))) : "(unknown sender)",
    subject: subjectHeader ? fix(decodeWords(subjectHeader)) : "(no subject)",
  };
}

function parseDate(text: string | null): Date | null {
  if (!text) return null;
  const date = new Date(text.replace(/\s+\([^)]*\)\s*$/, ""));
  return Number.isNaN(date.getTime()) ? null : date;
}

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const isoMinute = (date: Date) => `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
