/**
 * The parser dispatch that runs inside the parse worker: picks the parser for a
 * format (loaded on demand, so a text file never loads pdf.js), enforces the
 * text-size limit, and turns every failure into a `ParseError`.
 */
import { DEFAULT_PARSE_SETTINGS, ParseError, type DocumentFormat, type ParseContext, type ParseErrorCode, type ParsedDocument, type ParseSettings } from "./types.js";

/** A format's parser: bytes in, structured text out; throws `ParseError`. */
export type DocumentParser = (bytes: Uint8Array, context: ParseContext) => Promise<ParsedDocument>;

/** The parser of each format that has one (a format without is refused as unsupported). */
const PARSERS: Partial<Record<DocumentFormat, () => Promise<DocumentParser>>> = {
  pdf: async () => (await import("./parse-pdf.js")).parsePdf,
  docx: async () => (await import("./parse-docx.js")).parseDocx,
  html: async () => (await import("./parse-html.js")).parseHtml,
  md: async () => (await import("./parse-markdown.js")).parseMarkdown,
  txt: async () => (await import("./parse-text.js")).parseText,
  pptx: async () => (await import("./parse-pptx.js")).parsePptx,
  xlsx: async () => (await import("./parse-spreadsheet.js")).parseXlsx,
  ods: async () => (await import("./parse-spreadsheet.js")).parseOds,
  csv: async () => (await import("./parse-csv.js")).parseCsv,
  odt: async () => (await import("./parse-odt.js")).parseOdt,
  epub: async () => (await import("./parse-epub.js")).parseEpub,
  doc: async () => (await import("./parse-legacy-office.js")).parseDoc,
  xls: async () => (await import("./parse-legacy-office.js")).parseXls,
  ppt: async () => (await import("./parse-legacy-office.js")).parsePpt,
  eml: async () => (await import("./parse-eml.js")).parseEml,
  mbox: async () => (await import("./parse-mbox.js")).parseMbox,
  msg: async () => (await import("./parse-msg.js")).parseMsg,
  png: async () => imageParser("png"),
  jpeg: async () => imageParser("jpeg"),
  tiff: async () => imageParser("tiff"),
};

async function imageParser(format: DocumentFormat): Promise<DocumentParser> {
  const { parseImage } = await import("./parse-image.js");
  return (bytes, context) => parseImage(bytes, context, format);
}

/** What the parse worker receives (`workerData`). */
export interface ParseJob {
  format: DocumentFormat;
  bytes: Uint8Array;
  /** Longest extracted text accepted, in UTF-16 code units. */
  maxTextChars: number;
  /** The corpus's parse settings (OCR languages); defaults when absent. */
  settings?: ParseSettings;
}

/** What the parse worker posts back. */
export type ParseReply = { ok: true; document: ParsedDocument } | { ok: false; code: ParseErrorCode; message: string };

/**
 * Parses in the current thread. Prefer `parseDocument`, which runs this in a worker
 * with time and memory limits; this is what that worker calls.
 * @throws ParseError for every failure, whatever the parser library threw.
 */
export async function parseByFormat(
  bytes: Uint8Array,
  format: DocumentFormat,
  maxTextChars = Number.POSITIVE_INFINITY,
  context: Partial<ParseContext> = {},
): Promise<ParsedDocument> {
  const load = PARSERS[format];
  if (!load) throw new ParseError("unsupported_file_type", `Documents of type "${String(format)}" cannot be parsed.`);
  let document: ParsedDocument;
  try {
    document = await (await load())(bytes, { settings: context.settings ?? DEFAULT_PARSE_SETTINGS, progress: context.progress ?? (() => undefined) });
  } catch (error) {
    throw toParseError(error);
  }
  if (document.text.length > maxTextChars) {
    throw new ParseError("document_too_large", `The document holds more than ${maxTextChars.toLocaleString("en")} characters of text.`);
  }
  return document;
}

/** Runs one job and describes the outcome; never throws. `progress` hears long parses advance. */
export async function runParseJob(job: ParseJob, progress?: (done: number, total: number) => void): Promise<ParseReply> {
  try {
    return { ok: true, document: await parseByFormat(job.bytes, job.format, job.maxTextChars, { ...(job.settings ? { settings: job.settings } : {}), ...(progress ? { progress } : {}) }) };
  } catch (error) {
    const parseError = toParseError(error);
    return { ok: false, code: parseError.code, message: parseError.message };
  }
}

/**
 * Maps anything a parser library throws to a `ParseError`: ParseErrors pass through,
 * a stack overflow means the document is too deeply structured, anything else that
 * the document could not be read.
 */
export function toParseError(error: unknown): ParseError {
  if (error instanceof ParseError) return error;
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new ParseError("document_too_complex", "The document is structured too deeply to be read.");
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new ParseError("corrupt_document", `The document could not be read (${detail.slice(0, 200)}).`);
}
