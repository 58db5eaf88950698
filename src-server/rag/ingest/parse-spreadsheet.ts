/**
 * Workbooks: Excel (XLSX) and OpenDocument (ODS). Each sheet, in workbook order, becomes a
 * level-1 heading with its name and its rows tables of bounded size that repeat the header
 * row (`sheet-tables.ts`), so a passage cites "Sales › Rows 2–41".
 *
 * Sheets are read as streams of XML events straight from the inflater: a sheet of 50 000
 * rows is never a tree in memory, and limits on rows, cells, columns and characters stop a
 * hostile one early. ODS compresses runs of equal cells and rows into one element with a
 * repeat count (Calc writes a million empty rows that way); empty runs are skipped by
 * arithmetic, filled ones are checked against the limits before they are expanded.
 *
 * Values are what the sheet shows where that is simple: shared and inline strings, numbers
 * (without binary-float noise), TRUE/FALSE, errors, the cached results of formulas, dates
 * and times as ISO dates when the cell's number format is a date or time, percentages.
 */
import { DocumentBuilder } from "./document-builder.js";
import { OfficeArchive, readDcTitle, readRelationships } from "./office-archive.js";
import { attribute } from "./office-xml.js";
import { columnIndex, SHEET_LIMITS, SheetTableWriter, type SheetLimits } from "./sheet-tables.js";
import { builtinFormat, formatKind, isoDateTime, numberText, type FormatKind } from "./spreadsheet-values.js";
import { ParseError, type ParsedDocument } from "./types.js";

export interface SpreadsheetOptions {
  /** Limits on rows, cells, columns and text (defaults: `SHEET_LIMITS`). */
  limits?: SheetLimits;
}

/** Longest cell accepted, in characters (Excel's own limit is 32 767). */
const MAX_CELL_CHARS = 100_000;
/** Most shared strings accepted (each is a cell's text that occurs somewhere). */
const MAX_SHARED_STRINGS = 2_000_000;

/**
 * Parses an Excel workbook (XLSX). The title is `dc:title` from the document properties, if set.
 * @throws ParseError `corrupt_document`, `document_too_large` (zip bombs, limits), `document_too_complex`, `empty_document`.
 */
export async function parseXlsx(bytes: Uint8Array, _context?: unknown, options: SpreadsheetOptions = {}): Promise<ParsedDocument> {
  const archive = OfficeArchive.open(bytes, "Excel workbook");
  if (!archive.has("xl/workbook.xml")) throw new ParseError("corrupt_document", "The file is a ZIP archive but not an Excel workbook (no xl/workbook.xml).");
  const relationships = await readRelationships(archive, "xl/workbook.xml");
  const { sheets, date1904 } = await readWorkbook(archive);
  const partOf = (type: string, fallback: string) => [[...relationships.values()].find((r) => r.type === type)?.target, fallback].find((part) => part !== undefined && archive.has(part)) ?? null;
  const stringsPart = partOf("sharedStrings", "xl/sharedStrings.xml");
  const stylesPart = partOf("styles", "xl/styles.xml");
  const strings = stringsPart ? await readSharedStrings(archive, stringsPart) : [];
  const formats = stylesPart ? await readCellFormats(archive, stylesPart) : [];
  const builder = new DocumentBuilder();
  const writer = new SheetTableWriter(builder, "workbook", options.limits ?? SHEET_LIMITS);
  for (const sheet of sheets) {
    const target = relationships.get(sheet.relationship);
    if (!target || target.type !== "worksheet" || !archive.has(target.target)) continue; // chart sheets hold no cells
    writer.startSheet(sheet.name);
    await readWorksheet(archive, target.target, writer, (type, value, style) => cellText(type, value, strings, formats[style] ?? "general", date1904));
    writer.endSheet();
  }
  return builder.build({ format: "xlsx", title: await readDcTitle(archive, "docProps/core.xml") });
}

/**
 * Parses an OpenDocument spreadsheet (ODS). The title is `dc:title` from `meta.xml`, if set.
 * @throws ParseError as `parseXlsx` does.
 */
export async function parseOds(bytes: Uint8Array, _context?: unknown, options: SpreadsheetOptions = {}): Promise<ParsedDocument> {
  const archive = OfficeArchive.open(bytes, "OpenDocument spreadsheet");
  if (!archive.has("content.xml")) throw new ParseError("corrupt_document", "The OpenDocument spreadsheet is damaged: it has no content.xml.");
  const builder = new DocumentBuilder();
  const writer = new SheetTableWriter(builder, "spreadsheet", options.limits ?? SHEET_LIMITS);
  await readOdsContent(archive, writer);
  return builder.build({ format: "ods", title: await readDcTitle(archive, "meta.xml") });
}

interface SheetEntry {
  name: string;
  relationship: string;
}

/** Sheets in workbook order, and whether dates count from 1904 (old Mac workbooks). */
async function readWorkbook(archive: OfficeArchive): Promise<{ sheets: SheetEntry[]; date1904: boolean }> {
  const sheets: SheetEntry[] = [];
  let date1904 = false;
  await archive.readXml("xl/workbook.xml", {
    open(name, attributes) {
      if (name === "workbookPr") date1904 = attributes.date1904 === "1" || attributes.date1904 === "true";
      const relationship = attribute(attributes, "id", true);
      if (name === "sheet" && relationship) sheets.push({ name: attributes.name ?? "", relationship });
    },
  });
  return { sheets, date1904 };
}

/** The shared string table: each `<si>`'s text, its phonetic guides (`<rPh>`) left out. */
async function readSharedStrings(archive: OfficeArchive, part: string): Promise<string[]> {
  const strings: string[] = [];
  let current = "";
  let inText = false;
  let phonetic = 0;
  await archive.readXml(part, {
    open(name) {
      if (name === "si") current = "";
      else if (name === "t") inText = phonetic === 0;
      else if (name === "rPh") phonetic++;
    },
    text(text) {
      if (!inText) return;
      current += text;
      if (current.length > MAX_CELL_CHARS) throw longCell();
    },
    close(name) {
      if (name === "t") inText = false;
      else if (name === "rPh") phonetic--;
      else if (name === "si") {
        strings.push(current);
        if (strings.length > MAX_SHARED_STRINGS) throw new ParseError("document_too_large", `The workbook holds more than ${MAX_SHARED_STRINGS.toLocaleString("en")} distinct texts.`);
      }
    },
  });
  return strings;
}

/** What each cell style (`s`, an index into `cellXfs`) shows a number as. */
async function readCellFormats(archive: OfficeArchive, part: string): Promise<FormatKind[]> {
  const custom = new Map<number, FormatKind>();
  const formats: FormatKind[] = [];
  let inCellXfs = false;
  await archive.readXml(part, {
    open(name, attributes) {
      if (name === "numFmt") custom.set(Number(attributes.numFmtId), formatKind(attributes.formatCode ?? ""));
      else if (name === "cellXfs") inCellXfs = true;
      else if (name === "xf" && inCellXfs) {
        const id = Number(attributes.numFmtId ?? 0);
        formats.push(custom.get(id) ?? builtinFormat(id));
      }
    },
    close(name) {
      if (name === "cellXfs") inCellXfs = false;
    },
  });
  return formats;
}

type CellText = (type: string, value: string, style: number) => string;

/** Streams one worksheet's rows into the writer. */
async function readWorksheet(archive: OfficeArchive, part: string, writer: SheetTableWriter, text: CellText): Promise<void> {
  let rowNumber = 0;
  let cells: string[] = [];
  let column = -1;
  let nextColumn = 0;
  let type = "n";
  let style = 0;
  let value = "";
  let inValue = false;
  let inInline = false;
  let phonetic = 0;
  await archive.readXml(part, {
    open(name, attributes) {
      switch (name) {
        case "row":
          rowNumber = attributes.r ? Number(attributes.r) || rowNumber + 1 : rowNumber + 1;
          cells = [];
          nextColumn = 0;
          break;
        case "c":
          column = attributes.r ? columnIndex(attributes.r) : -1;
          if (column < 0) column = nextColumn;
          writer.checkColumn(column);
          type = attributes.t ?? "n";
          style = Number(attributes.s ?? 0) || 0;
          value = "";
          break;
        case "v":
          inValue = true;
          break;
        case "is":
          inInline = true;
          break;
        case "t":
          inValue = inInline && phonetic === 0;
          break;
        case "rPh":
          phonetic++;
          break;
      }
    },
    text(piece) {
      if (!inValue) return;
      value += piece;
      if (value.length > MAX_CELL_CHARS) throw longCell();
    },
    close(name) {
      switch (name) {
        case "v":
        case "t":
          inValue = false;
          break;
        case "is":
          inInline = false;
          break;
        case "rPh":
          phonetic--;
          break;
        case "c":
          if (value !== "") cells[column] = text(type, value, style);
          nextColumn = column + 1;
          break;
        case "row":
          writer.row(rowNumber, cells);
          break;
      }
    },
  });
}

/** A cell's text from its type (`t`), raw value and the number format of its style. */
function cellText(type: string, value: string, strings: readonly string[], format: FormatKind, date1904: boolean): string {
  switch (type) {
    case "s":
      return strings[Number(value)] ?? "";
    case "b":
      return value.trim() === "1" ? "TRUE" : "FALSE";
    case "str":
    case "inlineStr":
    case "e":
      return value;
    case "d":
      return isoDateTime(value);
    default:
      return numberText(value, format, date1904);
  }
}

/**
 * Streams an ODS `content.xml`: each `table:table` a sheet. Runs of cells and rows come with
 * repeat counts: empty runs only move the position, filled runs are expanded after a check
 * against the limits (a hostile file repeats a cell a billion times).
 */
async function readOdsContent(archive: OfficeArchive, writer: SheetTableWriter): Promise<void> {
  let tableDepth = 0;
  let rowNumber = 0;
  let rowRepeat = 1;
  let cells: string[] = [];
  let column = 0;
  let inCell = false;
  let cellRepeat = 1;
  let cellDate: string | null = null;
  let cellText = "";
  let paragraphs = 0;
  let skip = 0;
  await archive.readXml("content.xml", {
    open(name, attributes) {
      if (skip > 0 || name === "annotation") {
        skip++; // a comment on the cell, not its value
        return;
      }
      if (name === "table") {
        if (++tableDepth === 1) {
          writer.startSheet(attributes["table:name"] ?? "");
          rowNumber = 0;
        }
        return;
      }
      if (tableDepth !== 1) {
        if (inCell) textInCell(name, attributes);
        return;
      }
      if (name === "table-row") {
        rowRepeat = repeatCount(attributes["table:number-rows-repeated"]);
        cells = [];
        column = 0;
      } else if (name === "table-cell" || name === "covered-table-cell") {
        inCell = true;
        cellRepeat = repeatCount(attributes["table:number-columns-repeated"]);
        cellDate = attributes["office:value-type"] === "date" ? (attributes["office:date-value"] ?? null) : null;
        cellText = "";
        paragraphs = 0;
      } else if (inCell) textInCell(name, attributes);
    },
    text(piece) {
      if (!inCell || skip > 0) return;
      cellText += piece;
      if (cellText.length > MAX_CELL_CHARS) throw longCell();
    },
    close(name) {
      if (skip > 0) {
        skip--;
        return;
      }
      if (name === "table") {
        if (tableDepth-- === 1) writer.endSheet();
        return;
      }
      if (tableDepth !== 1) return;
      if (name === "table-cell" || name === "covered-table-cell") {
        inCell = false;
        const value = cellDate !== null ? isoDateTime(cellDate) : cellText.trim();
        if (value !== "") {
          writer.checkColumn(column + cellRepeat - 1);
          for (let i = 0; i < cellRepeat; i++) cells[column + i] = value;
        }
        column += cellRepeat;
      } else if (name === "table-row") {
        if (cells.length === 0) {
          rowNumber += rowRepeat;
          return;
        }
        if (rowRepeat > writer.rowsLeft) {
          throw new ParseError("document_too_large", `The spreadsheet repeats a row ${rowRepeat.toLocaleString("en")} times, beyond the limit of ${writer.rowsLeft.toLocaleString("en")} more rows.`);
        }
        for (let i = 0; i < rowRepeat; i++) writer.row(++rowNumber, cells);
      }
    },
  });

  /** Paragraph breaks, spaces and tabs inside a cell's text. */
  function textInCell(name: string, attributes: Record<string, string>): void {
    if (name === "p" || name === "h") {
      if (paragraphs++ > 0) cellText += "\n";
    } else if (name === "s") cellText += " ".repeat(Math.min(100, repeatCount(attributes["text:c"])));
    else if (name === "tab" || name === "line-break") cellText += " ";
  }
}

/** A repeat count attribute: a positive integer, 1 when absent or malformed. */
function repeatCount(raw: string | undefined): number {
  const n = raw === undefined ? 1 : Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : 1;
}

function longCell(): ParseError {
  return new ParseError("document_too_large", `The spreadsheet has a cell longer than ${MAX_CELL_CHARS.toLocaleString("en")} characters.`);
}
