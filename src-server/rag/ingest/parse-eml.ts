/**
 * E-mail messages (RFC 5322 / MIME, `.eml`) read with postal-mime: encoded words and
 * charsets decoded, the body as plain text or HTML, and every attachment (an attached
 * message too, as an `.eml` of its own) handed on as an embedded file.
 *
 * Bounds, checked before or by the parser: MIME parts nested at most `MAX_MIME_DEPTH` deep,
 * at most `MAX_MIME_PARTS` parts, headers of at most `MAX_HEADER_BYTES` in all, at most
 * `MAX_ATTACHMENTS` attachments.
 */
import PostalMime, { addressParser, decodeWords, type Address, type Attachment, type Email } from "postal-mime";
import { promiseOf } from "./document-builder.js";
import { attachmentName, emailToDocument, windows1252Controls as fix, type EmailAttachment } from "./email-document.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** Deepest MIME nesting read; real mail nests a few levels (mixed › alternative › related). */
export const MAX_MIME_DEPTH = 50;
/** Most MIME parts (boundary lines, counted before parsing); each part costs the parser a node. */
export const MAX_MIME_PARTS = 10_000;
/** Largest total of header bytes over every part. */
export const MAX_HEADER_BYTES = 2 * 1024 * 1024;
/** Most attachments a message may carry; each becomes a document. */
export const MAX_ATTACHMENTS = 1_000;

/**
 * Parses one message; its attachments come back as `embedded` files.
 * @throws ParseError `document_too_complex` (MIME nested too deeply), `document_too_large`
 *   (too many parts or attachments, headers too large), `corrupt_document` (no e-mail headers).
 */
export async function parseEml(bytes: Uint8Array): Promise<ParsedDocument> {
  const email = await readMessage(bytes);
  const attachments = email.attachments.filter((a) => !isDecoration(a));
  if (attachments.length > MAX_ATTACHMENTS) {
    throw new ParseError("document_too_large", `The message has ${attachments.length.toLocaleString("en")} attachments; at most ${MAX_ATTACHMENTS.toLocaleString("en")} are read.`);
  }
  return promiseOf(() =>
    emailToDocument(
      {
        subject: email.subject ? fix(email.subject) : null,
        from: email.from ? (formatAddresses([email.from])[0] ?? null) : null,
        to: formatAddresses(email.to ?? []),
        cc: formatAddresses(email.cc ?? []),
        date: email.headers.find((h) => h.key === "date")?.value.trim() || null,
        text: email.text ? fix(email.text) : null,
        html: email.html ? fix(email.html) : null,
        attachments: attachments.map((a, i) => toAttachment(a, i)),
      },
      "eml",
    ),
  );
}

/** Parses the MIME structure within the bounds; postal-mime's limit errors become ParseErrors. */
async function readMessage(bytes: Uint8Array): Promise<Email> {
  const parts = countBoundaryLines(bytes, MAX_MIME_PARTS);
  if (parts > MAX_MIME_PARTS) throw new ParseError("document_too_large", `The message has more than ${MAX_MIME_PARTS.toLocaleString("en")} MIME parts.`);
  let email: Email;
  try {
    email = await PostalMime.parse(bytes, {
      // An attached message is a document of its own, not part of this one's text.
      forceRfc822Attachments: true,
      attachmentEncoding: "arraybuffer",
      maxNestingDepth: MAX_MIME_DEPTH,
      maxHeadersSize: MAX_HEADER_BYTES,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/nesting depth/i.test(message)) throw new ParseError("document_too_complex", `The message nests MIME parts more than ${MAX_MIME_DEPTH} levels deep.`);
    if (/header size/i.test(message)) throw new ParseError("document_too_large", `The message's headers are larger than ${MAX_HEADER_BYTES / 1024 ** 2} MB.`);
    throw error;
  }
  if (!email.headers.some((h) => MESSAGE_HEADERS.has(h.key))) {
    throw new ParseError("corrupt_document", "The file is not an e-mail message: it has none of the headers a message has (From, To, Subject, Date, Message-ID).");
  }
  return email;
}

const MESSAGE_HEADERS = new Set(["from", "to", "cc", "subject", "date", "message-id", "mime-version", "received", "sender"]);

/**
 * Lines that look like MIME boundaries (`--` then a non-blank), counted up to `limit + 1`
 * by a scan of the bytes: an upper bound on the parts the parser would build.
 */
export function countBoundaryLines(bytes: Uint8Array, limit: number): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let at = buffer.indexOf("\n--"); at !== -1; at = buffer.indexOf("\n--", at + 3)) {
    const next = buffer[at + 3];
    if (next !== undefined && next !== 0x20 && next !== 0x0d && next !== 0x0a && ++count > limit) break;
  }
  return count;
}

/** Images the HTML shows by Content-ID (logos, signatures): part of the body's look, not documents. */
function isDecoration(attachment: Attachment): boolean {
  return attachment.related === true && attachment.mimeType.startsWith("image/");
}

function toAttachment(attachment: Attachment, index: number): EmailAttachment {
  const content = attachment.content;
  const bytes = typeof content === "string" ? Buffer.from(content, attachment.encoding === "base64" ? "base64" : "utf8") : content instanceof Uint8Array ? content : new Uint8Array(content);
  const isMessage = attachment.mimeType === "message/rfc822";
  // An attached message without a name is named after its subject.
  const named = attachment.filename ?? (isMessage ? messageFileName(bytes) : null);
  let filename = attachmentName(named, attachment.mimeType, index);
  if (isMessage && !/\.eml$/i.test(filename)) filename += ".eml";
  return { filename, bytes, mimeType: attachment.mimeType || null };
}

/** `<subject>.eml` for a message, from its Subject header (read from its first 64 KiB), or null. */
export function messageFileName(bytes: Uint8Array): string | null {
  const subject = headerValue(bytes, "subject");
  if (!subject) return null;
  // eslint-disable-next-line no-control-regex
  const safe = fix(decodeWords(subject)).replace(/[\\/:*?"<>|\u0000-\u001f\u007f]+/g, " ").replace(/\s+/g, " ").trim().slice(0, 120);
  return safe ? `${safe}.eml` : null;
}

/** One header's raw (unfolded, still encoded) value from a message's header block, or null. */
export function headerValue(bytes: Uint8Array, name: string): string | null {
  const match = new RegExp(`^${name}:[ \\t]*(.*)$`, "im").exec(headerBlock(bytes));
  return match?.[1]?.trim() || null;
}

/** A message's header block (up to its first blank line, within its first 64 KiB), unfolded; only that much is decoded. */
export function headerBlock(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 64 * 1024));
  const ends = [head.indexOf("\n\n"), head.indexOf("\r\n\r\n")].filter((at) => at !== -1);
  return head.toString("utf8", 0, ends.length > 0 ? Math.min(...ends) : head.length).replace(/\r?\n[ \t]+/g, " ");
}

/** Addresses as "Name <address>", groups flattened. */
export function formatAddresses(addresses: readonly Address[]): string[] {
  return addresses
    .flatMap((a) => (a.group ? a.group : [a]))
    .map((m) => (m.name && m.address ? `${fix(m.name)} <${m.address}>` : fix(m.name) || m.address || ""))
    .filter((s) => s !== "");
}

/** The first address of a raw header value, formatted, or null. */
export function firstAddress(raw: string): string | null {
  return formatAddresses(addressParser(raw))[0] ?? null;
}
