/**
 * Outlook messages (`.msg`, [MS-OXMSG]) read with @kenjiuno/msgreader: subject, sender,
 * recipients, date, the body (plain text, else HTML, else the RTF body), and the
 * attachments as embedded files.
 *
 * An attached message (an `.msg` inside the `.msg`) is handed on as the `.msg` file
 * msgreader writes from its storage: the inner message keeps everything it has (its own
 * attachments, its RTF and properties) and is read by this same parser as a document of its
 * own. Writing it as an `.eml` instead would need a MIME writer on the server and lose what
 * MIME has no place for.
 *
 * The compound file is vetted first (`inspect-compound-file.ts`): loops, overlapping
 * chains and impossible sizes are refused, and messages nested more than `MAX_MSG_NESTING`
 * deep are refused before msgreader (which recurses into every level) reads them.
 */
import msgreader, { type FieldsData } from "@kenjiuno/msgreader";
import { decodeText, normalizeNewlines } from "./decode-text.js";
import { promiseOf } from "./document-builder.js";
import { attachmentName, emailToDocument, type EmailAttachment } from "./email-document.js";
import { inspectCompoundFile } from "./inspect-compound-file.js";
import { decompressRtf, rtfBody } from "./rtf-body.js";
import { ParseError, type ParsedDocument } from "./types.js";

const MsgReader = msgreader.default;

/** Messages attached inside messages, at most this many levels (a forward of a forward…). */
export const MAX_MSG_NESTING = 10;
/** Most attachments of one message ([MS-OXMSG] allows 2,048 storages; each becomes a document). */
export const MAX_MSG_ATTACHMENTS = 1_000;
/**
 * Storages per nesting level: an attached message is an attachment storage holding the
 * message's storage (`__attach_version1.0_#n/__substg1.0_3701000D`).
 */
const STORAGES_PER_LEVEL = 2;

/**
 * Parses an Outlook message; its attachments come back as `embedded` files.
 * @throws ParseError `corrupt_document` (not an Outlook message, or damaged),
 *   `document_too_complex` (messages nested too deeply), `document_too_large`.
 */
export function parseMsg(bytes: Uint8Array): Promise<ParsedDocument> {
  return promiseOf(() => {
    const shape = inspectCompoundFile(bytes, "Outlook message");
    // One level of storages for recipients and attachments, two more per attached message.
    if (shape.maxStorageDepth > 1 + STORAGES_PER_LEVEL * MAX_MSG_NESTING) {
      throw new ParseError("document_too_complex", `The message has messages attached inside attached messages more than ${MAX_MSG_NESTING} levels deep.`);
    }
    const reader = new MsgReader(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const data = reader.getFileData();
    // Every message Outlook writes has a message class (IPM.Note, IPM.Appointment…); other compound files have none.
    if (data.dataType !== "msg" || data.error || !data.messageClass) throw new ParseError("corrupt_document", "The file is not an Outlook message (a compound file without a message class).");
    const listed = (data.attachments ?? []).filter((a) => !a.attachmentHidden);
    if (listed.length > MAX_MSG_ATTACHMENTS) {
      throw new ParseError("document_too_large", `The message has ${listed.length.toLocaleString("en")} attachments; at most ${MAX_MSG_ATTACHMENTS.toLocaleString("en")} are read.`);
    }
    const warnings: string[] = [];
    const attachments: EmailAttachment[] = [];
    listed.forEach((field, index) => {
      const attachment = readAttachment(reader, field, index);
      if (attachment) attachments.push(attachment);
      else warnings.push(`Attachment ${index + 1} (${field.name ?? field.fileName ?? "unnamed"}) holds no file and was skipped.`);
    });
    const { text, html } = body(data, warnings);
    const recipients = (kind: string) => (data.recipients ?? []).filter((r) => r.recipType === kind).map((r) => person(r.name, r.smtpAddress || r.email)).filter((s): s is string => s !== null);
    return emailToDocument(
      {
        subject: data.subject ?? null,
        from: person(data.senderName, data.senderSmtpAddress || data.senderEmail),
        to: recipients("to"),
        cc: recipients("cc"),
        date: data.clientSubmitTime ?? data.messageDeliveryTime ?? null,
        text,
        html,
        attachments,
      },
      "msg",
      warnings,
    );
  });
}

/** An attachment's file, or null when it holds none (a link, an OLE object without data). */
function readAttachment(reader: InstanceType<typeof MsgReader>, field: FieldsData, index: number): EmailAttachment | null {
  if (field.innerMsgContent) {
    const { content } = reader.getAttachment(field);
    const name = attachmentName(field.name ?? field.innerMsgContentFields?.subject ?? null, null, index).replace(/\.msg$/i, "");
    return { filename: `${name}.msg`, bytes: content, mimeType: "application/vnd.ms-outlook" };
  }
  if (field.dataId === undefined) return null;
  const { content } = reader.getAttachment(field);
  return { filename: attachmentName(field.fileName ?? field.fileNameShort ?? field.name, field.attachMimeTag, index), bytes: content, mimeType: field.attachMimeTag ?? null };
}

/** The plain body, the HTML body, or the RTF body read as one of the two. */
function body(data: FieldsData, warnings: string[]): { text: string | null; html: string | null } {
  const text = data.body ? normalizeNewlines(data.body) : null;
  let html = data.bodyHtml ?? (data.html ? decodeHtmlBody(data.html, data.internetCodepage) : null);
  if (text || html) return { text, html };
  if (!data.compressedRtf) return { text: null, html: null };
  try {
    const rtf = rtfBody(decompressRtf(data.compressedRtf));
    if (rtf.kind === "html") html = rtf.content;
    return { text: rtf.kind === "text" ? rtf.content : null, html };
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    warnings.push(`${error.message} The body was not read.`);
    return { text: null, html: null };
  }
}

/** PidTagHtml's bytes in the message's code page (UTF-8 when they are valid UTF-8). */
function decodeHtmlBody(bytes: Uint8Array, codePage: number | undefined): string {
  const decoded = decodeText(bytes);
  if (decoded.encoding !== "windows-1252" || !codePage || codePage === 1252) return decoded.text;
  try {
    return normalizeNewlines(new TextDecoder(codePage === 65001 ? "utf-8" : `windows-${codePage}`).decode(bytes));
  } catch {
    return decoded.text;
  }
}

/** "Name <address>", or either alone; an Exchange address (`/O=…`) is not shown. */
function person(name: string | undefined, address: string | undefined): string | null {
  const mail = address && !address.startsWith("/") ? address : null;
  if (name && mail && name !== mail) return `${name} <${mail}>`;
  return name || mail || null;
}
