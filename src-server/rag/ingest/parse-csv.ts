/**
 * CSV and TSV files: decoded as plain text is (UTF-8, UTF-16 with a byte-order mark, else
 * Windows-1252), the delimiter sniffed from the first lines (comma, semicolon or tab),
 * records read by csv-parse as a stream, and written as a sheet is (`sheet-tables.ts`):
 * the first row is the header, repeated above every table of rows, each table headed by
 * the rows it holds. The text is decoded and parsed a piece at a time and rows leave as
 * tables fill, so a file of ten million rows stops at the row limit with bounded memory.
 */
import { isUtf8 } from "node:buffer";
import { Readable } from "node:stream";
import { CsvError, parse } from "csv-parse";
import { decodeWindows1252 } from "./decode-text.js";
import { DocumentBuilder } from "./document-builder.js";
import { SHEET_LIMITS, SheetTableWriter, type SheetLimits } from "./sheet-tables.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** Bytes decoded at a time. */
const PIECE_BYTES = 1024 * 1024;
/** Longest record accepted, in characters (a field this long is not tabular data). */
const MAX_RECORD_CHARS = 1_000_000;
/** Lines looked at to choose the delimiter. */
const SNIFF_LINES = 50;
const DELIMITERS = [",", ";", "\t"] as const;

export interface CsvOptions {
  /** Limits on rows, cells and text (defaults: `SHEET_LIMITS`). */
  limits?: SheetLimits;
}

/**
 * Parses a CSV or TSV file. Row numbers are record numbers as a spreadsheet shows them
 * (the header is row 1; a quoted field spanning lines stays in its row).
 * @throws ParseError `empty_document`, `corrupt_document` (unreadable CSV), `document_too_large`
 *   (more rows, cells or text than the limits, or a record over 1,000,000 characters).
 */
export async function parseCsv(bytes: Uint8Array, _context?: unknown, options: CsvOptions = {}): Promise<ParsedDocument> {
  const { encoding, pieces } = decodePieces(bytes);
  const head = pieces(64 * 1024).next().value ?? "";
  const delimiter = sniffDelimiter(head);
  const builder = new DocumentBuilder();
  const writer = new SheetTableWriter(builder, "CSV file", options.limits ?? SHEET_LIMITS);
  writer.startSheet(null);
  const source = Readable.from(pieces(PIECE_BYTES), { objectMode: false });
  const parser = parse({ delimiter, relax_column_count: true, relax_quotes: true, bom: true, max_record_size: MAX_RECORD_CHARS });
  source.pipe(parser);
  let number = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) writer.row(++number, record);
  } catch (error) {
    throw asParseError(error);
  } finally {
    source.unpipe(parser);
    source.destroy();
    parser.destroy();
  }
  writer.endSheet();
  const warnings = encoding === "windows-1252" ? ["The file is not valid UTF-8; it was read as Windows-1252 (Latin-1)."] : [];
  return builder.build({ format: "csv", title: null, warnings });
}

/**
 * The file's encoding, judged once over the whole file without building a string, and a
 * way to decode it in pieces (a piece may end inside a character: the decoders carry it over).
 */
function decodePieces(bytes: Uint8Array): { encoding: string; pieces: (size: number) => Generator<string, void> } {
  const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be" : null;
  const encoding = utf16 ?? (isUtf8(bytes) ? "utf-8" : "windows-1252");
  function* pieces(size: number): Generator<string, void> {
    const decoder = encoding === "windows-1252" ? null : new TextDecoder(encoding);
    for (let at = 0; at < bytes.length; at += size) {
      const slice = bytes.subarray(at, Math.min(bytes.length, at + size));
      yield decoder ? decoder.decode(slice, { stream: true }) : decodeWindows1252(slice);
    }
    if (decoder) yield decoder.decode();
  }
  return { encoding, pieces };
}

/**
 * The delimiter the first lines use most consistently: for each candidate, how many lines
 * (quotes respected) hold the number of delimiters most lines hold; a semicolon file with
 * decimal commas ("1,5;2,25") has steady semicolons and unsteady commas. Ties go to the
 * more frequent; a file with none is one column (comma).
 */
export function sniffDelimiter(head: string): string {
  const lines = splitLines(head);
  let best: { delimiter: string; steady: number; count: number } = { delimiter: ",", steady: 0, count: 0 };
  for (const delimiter of DELIMITERS) {
    const counts = lines.map((line) => countOutsideQuotes(line, delimiter));
    const frequency = new Map<number, number>();
    for (const count of counts) if (count > 0) frequency.set(count, (frequency.get(count) ?? 0) + 1);
    let steady = 0;
    let count = 0;
    for (const [value, lines] of frequency) {
      if (lines > steady || (lines === steady && value > count)) [steady, count] = [lines, value];
    }
    if (steady > best.steady || (steady === best.steady && steady > 0 && count > best.count)) best = { delimiter, steady, count };
  }
  return best.delimiter;
}

/** The first lines of the head, a quoted line break kept inside its line; the last (perhaps cut) line dropped when there are others. */
function splitLines(head: string): string[] {
  const lines: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < head.length && lines.length < SNIFF_LINES; i++) {
    const c = head[i];
    if (c === '"') quoted = !quoted;
    else if (c === "\n" && !quoted) {
      lines.push(head.slice(start, i));
      start = i + 1;
    }
  }
  if (lines.length === 0) lines.push(head);
  return lines.filter((line) => line.trim() !== "");
}

function countOutsideQuotes(line: string, delimiter: string): number {
  let count = 0;
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (c === delimiter && !quoted) count++;
  }
  return count;
}

function asParseError(error: unknown): unknown {
  if (!(error instanceof CsvError)) return error;
  if (error.code === "CSV_MAX_RECORD_SIZE") {
    return new ParseError("document_too_large", `The CSV file has a row longer than ${MAX_RECORD_CHARS.toLocaleString("en")} characters; it does not look like a table.`);
  }
  return new ParseError("corrupt_document", `The CSV file could not be read: ${error.message.slice(0, 200)}`);
}
