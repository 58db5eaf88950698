/**
 * One e-mail message as a document, whatever file it came in (EML, an Outlook MSG, one
 * message of a mailbox): the subject as its heading and title, a header block (From, To,
 * Cc, Date) that indexes and cites like any paragraph, the body, and the attachments listed
 * by name. The attachments themselves become documents of their own (`embedded`).
 */
import { normalizeNewlines, WINDOWS_1252_C1 } from "./decode-text.js";
import { DocumentBuilder } from "./document-builder.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { measureHtmlDepth } from "./measure-html-depth.js";
import { MAX_HTML_BYTES, MAX_HTML_DEPTH } from "./parse-html.js";
import { FORMATS } from "./formats.js";
import { splitMarkdown, type MarkdownBlock } from "./split-markdown.js";
import type { EmbeddedFile, ParsedDocument } from "./types.js";

export interface EmailAttachment {
  filename: string;
  bytes: Uint8Array;
  /** The media type the message declares for it, if any. */
  mimeType: string | null;
}

/** A message as the parsers read it, strings already decoded. */
export interface EmailMessage {
  subject: string | null;
  /** "Name <address>" (or either alone). */
  from: string | null;
  to: string[];
  cc: string[];
  /** The date as the message states it. */
  date: string | null;
  /** The plain-text body, if the message has one. */
  text: string | null;
  /** The HTML body, if the message has one. */
  html: string | null;
  attachments: EmailAttachment[];
}

/**
 * Share of the HTML body's words the plain body must hold to count as saying the same. Mail
 * programs write the plain part from the HTML one, so the two nearly always agree; when the
 * plain part is a stub ("view this message in a browser"), the HTML is read instead.
 */
const SAME_WORDS_SHARE = 0.9;

/**
 * Text decoded as ISO-8859-1 or Windows-1252 by the runtime's decoder keeps bytes 0x80–0x9F
 * as C1 control characters (the decoder treats both labels as Latin-1). Mail labelled either
 * way means Windows-1252 by those bytes (as browsers read it): curly quotes, dashes, the euro.
 */
export function windows1252Controls(text: string): string {
  return text.replace(/[\x80-\x9F]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80] ?? c);
}

/** Builds the message's document; `format` is the file's ("eml", "msg"). */
export function emailToDocument(message: EmailMessage, format: "eml" | "msg", warnings: string[] = []): ParsedDocument {
  const builder = new DocumentBuilder();
  const subject = message.subject?.replace(/\s+/g, " ").trim() || null;
  if (subject) builder.add({ kind: "heading", level: 1, text: subject });
  const header = [
    message.from ? `From: ${message.from}` : null,
    message.to.length > 0 ? `To: ${message.to.join(", ")}` : null,
    message.cc.length > 0 ? `Cc: ${message.cc.join(", ")}` : null,
    message.date ? `Date: ${message.date}` : null,
  ].filter((line): line is string => line !== null);
  if (header.length > 0) builder.add({ kind: "paragraph", text: header.join("\n") });
  for (const block of bodyBlocks(message, warnings)) builder.add(block);
  if (message.attachments.length > 0) {
    builder.add({ kind: "heading", level: 2, text: "Attachments" });
    builder.add({ kind: "list", text: message.attachments.map((a) => `- ${a.filename} (${describe(a)})`).join("\n") });
  }
  // A message with nothing at all (no subject, headers, body or attachment) is empty: `build` says so.
  return { ...builder.build({ format, title: subject, warnings }), embedded: embeddedFiles(message.attachments) };
}

/** The attachments as files of their own, each named so that its type can be told (an extension from its media type when it has none). */
export function embeddedFiles(attachments: readonly EmailAttachment[]): EmbeddedFile[] {
  return attachments.map((a) => ({ filename: a.filename, bytes: a.bytes, relation: "attachment" as const }));
}

/** Extensions for attachments that came without a name (text formats are detected by extension). */
const EXTENSIONS: Record<string, string> = {
  "message/rfc822": ".eml",
  "text/plain": ".txt",
  "text/html": ".html",
  "text/csv": ".csv",
  "text/markdown": ".md",
  "application/pdf": ".pdf",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
  "application/vnd.ms-outlook": ".msg",
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/tiff": ".tif",
};

/** A name for an attachment: its own, else `attachment-<n>` with the extension its type suggests. */
export function attachmentName(filename: string | null | undefined, mimeType: string | null | undefined, index: number): string {
  // eslint-disable-next-line no-control-regex
  const clean = (filename ?? "").split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (clean) return clean.slice(0, 255);
  return `attachment-${index + 1}${EXTENSIONS[(mimeType ?? "").toLowerCase()] ?? ""}`;
}

/** `PDF, 12 KB`-like: the declared type (by its name when Pustaka reads it) and the size. */
function describe(attachment: EmailAttachment): string {
  const size = attachment.bytes.length;
  const human = size >= 1024 * 1024 ? `${(size / 1024 / 1024).toFixed(1)} MB` : size >= 1024 ? `${Math.round(size / 1024)} KB` : `${size} bytes`;
  const type = attachment.mimeType?.toLowerCase() ?? null;
  const label = type ? (Object.values(FORMATS).find((f) => f.contentType === type)?.label ?? type) : null;
  return label ? `${label}, ${human}` : human;
}

/**
 * The body's blocks: the plain text when it says what the HTML says and the HTML holds no
 * table (a table reads better as one); otherwise the HTML, converted to Markdown. An HTML
 * body too large or too deeply nested to convert falls back to the plain text, if any.
 */
function bodyBlocks(message: EmailMessage, warnings: string[]): MarkdownBlock[] {
  const text = message.text ? normalizeNewlines(message.text).trim() : "";
  const html = message.html?.trim() ? message.html : null;
  if (html) {
    const markdown = convertHtml(html, text !== "", warnings);
    if (markdown !== null) {
      const blocks = splitMarkdown(markdown);
      const hasTable = blocks.some((b) => b.kind === "table");
      if (!text || hasTable || !saysTheSame(text, markdown)) return blocks;
    }
  }
  return textBlocks(text);
}

/** The HTML as Markdown, or null (with a warning) when it cannot be converted and a plain body can stand in. */
function convertHtml(html: string, hasText: boolean, warnings: string[]): string | null {
  let problem: string | null = null;
  if (html.length > MAX_HTML_BYTES) problem = `is larger than ${MAX_HTML_BYTES / 1024 ** 2} MB`;
  else if (measureHtmlDepth(html, MAX_HTML_DEPTH) > MAX_HTML_DEPTH) problem = `nests elements more than ${MAX_HTML_DEPTH} levels deep`;
  if (problem === null) return htmlToMarkdown(html).markdown;
  warnings.push(hasText ? `The HTML body ${problem}; the plain-text body was read instead.` : `The HTML body ${problem} and was not read.`);
  return null;
}

/** Paragraphs of a plain body, split on blank lines; line breaks inside a paragraph are kept. */
function textBlocks(text: string): MarkdownBlock[] {
  return text
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.split("\n").map((line) => line.trimEnd()).join("\n").trim())
    .filter((paragraph) => paragraph !== "")
    .map((paragraph) => ({ kind: "paragraph" as const, text: paragraph }));
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Whether the plain text holds (nearly) every word of the HTML's Markdown. */
function saysTheSame(text: string, markdown: string): boolean {
  const htmlWords = words(markdown);
  if (htmlWords.length === 0) return true;
  const plain = new Set(words(text));
  return htmlWords.filter((w) => plain.has(w)).length >= SAME_WORDS_SHARE * htmlWords.length;
}
