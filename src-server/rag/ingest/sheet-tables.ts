/**
 * Rows of a sheet (XLSX, ODS, CSV) as blocks a passage can cite: each sheet a level-1
 * heading with its name, then its rows in Markdown tables of bounded size, each table
 * repeating the sheet's header row and preceded by a level-2 heading naming its spreadsheet
 * rows ("Rows 2–41"). Chunkers start a new chunk at every heading, and a table this size
 * fits one chunk, so a passage is one table with its header, and its heading path says
 * where it came from: ["Sales", "Rows 2–41"].
 *
 * Rows arrive one at a time and leave as soon as a table is full, so a sheet is never
 * held whole; limits on rows, cells and characters stop a huge or hostile sheet early.
 */
import type { DocumentBuilder } from "./document-builder.js";
import { markdownTable } from "./markdown-table.js";
import { ParseError } from "./types.js";

export interface SheetLimits {
  /** Non-empty rows accepted in the whole document. */
  maxRows: number;
  /** Non-empty cells accepted in the whole document. */
  maxCells: number;
  /** Columns a row may reach (Excel and Calc stop at 16 384). */
  maxColumns: number;
  /** Characters of text the document may grow to (the parse pipeline's own limit). */
  maxTextChars: number;
}

export const SHEET_LIMITS: SheetLimits = { maxRows: 1_000_000, maxCells: 10_000_000, maxColumns: 16_384, maxTextChars: 20_000_000 };

/**
 * A table block's size, header included: about 200–400 tokens, under every embedding
 * model's input (a table that does not fit one chunk is cut into lines, and its pieces
 * lose the header), and small enough that a citation names a few dozen rows.
 */
export const MAX_TABLE_BLOCK_CHARS = 800;
export const MAX_TABLE_BLOCK_ROWS = 40;
/** Leading one-cell rows (a title, a note above the table) read as paragraphs, at most this many. */
const MAX_CAPTION_ROWS = 5;

/** A row as it arrives: its 1-based number in the sheet and its cells by 0-based column. */
interface Row {
  number: number;
  cells: string[];
}

/** Writes sheets' rows into a document as headed, bounded tables. */
export class SheetTableWriter {
  #rows = 0;
  #cells = 0;
  #sheet: string | null = null;
  #headed = false;
  /** Whether the current sheet has written a table yet. */
  #tabled = false;
  #header: Row | null = null;
  /** Rows seen before the header is known (captions, or a one-column sheet's first rows). */
  #pending: Row[] = [];
  #block: Row[] = [];
  #blockChars = 0;

  /**
   * @param builder the document the blocks go to
   * @param what how messages name the file ("spreadsheet", "CSV file")
   */
  constructor(
    private readonly builder: DocumentBuilder,
    private readonly what: string,
    private readonly limits: SheetLimits = SHEET_LIMITS,
  ) {}

  /** Rows the limit still admits. */
  get rowsLeft(): number {
    return this.limits.maxRows - this.#rows;
  }

  /** Starts a sheet; `name` null (a CSV file) gives its tables no sheet heading. */
  startSheet(name: string | null): void {
    this.endSheet();
    this.#sheet = name;
    this.#headed = false;
  }

  /**
   * Takes a row: cells by column, holes and blank strings empty. Empty rows are skipped.
   * @throws ParseError `document_too_large` past the row, cell, column or text limits.
   */
  row(number: number, cells: readonly (string | undefined)[]): void {
    if (cells.length > this.limits.maxColumns) this.#tooManyColumns();
    const clean: string[] = [];
    let filled = 0;
    let last = -1;
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i]?.trim() ?? "";
      clean.push(cell);
      if (cell !== "") {
        filled++;
        last = i;
      }
    }
    if (filled === 0) return;
    clean.length = last + 1;
    if (++this.#rows > this.limits.maxRows) {
      throw new ParseError("document_too_large", `The ${this.what} holds more than ${this.limits.maxRows.toLocaleString("en")} rows; split it into smaller files to index it.`);
    }
    this.#cells += filled;
    if (this.#cells > this.limits.maxCells) {
      throw new ParseError("document_too_large", `The ${this.what} holds more than ${this.limits.maxCells.toLocaleString("en")} filled cells; split it into smaller files to index it.`);
    }
    const row = { number, cells: clean };
    if (this.#header) return this.#add(row);
    this.#pending.push(row);
    if (filled >= 2) this.#settleHeader(this.#pending.length - 1);
    else if (this.#pending.length > MAX_CAPTION_ROWS) this.#settleHeader(0);
  }

  /** Ends the current sheet, writing what it still holds. */
  endSheet(): void {
    if (!this.#header && this.#pending.length > 0) this.#settleHeader(0);
    const header = this.#header;
    if (header && this.#block.length === 0 && !this.#tabled) {
      // A sheet of one row: its header alone.
      this.#addBlock({ kind: "heading", level: 2, text: `Row ${header.number}` });
      this.#addBlock({ kind: "table", text: tableText(header.cells, []) });
    }
    this.#flush();
    this.#header = null;
    this.#pending = [];
  }

  /** @throws ParseError `document_too_large`: a column beyond the limit. */
  checkColumn(column: number): void {
    if (column >= this.limits.maxColumns) this.#tooManyColumns();
  }

  #tooManyColumns(): never {
    throw new ParseError("document_too_large", `The ${this.what} has a row wider than ${this.limits.maxColumns.toLocaleString("en")} columns.`);
  }

  /** Pending row `at` is the header; one-cell rows before it are captions, rows after it data. */
  #settleHeader(at: number): void {
    const pending = this.#pending;
    this.#pending = [];
    this.#heading();
    for (const caption of pending.slice(0, at)) this.#addBlock({ kind: "paragraph", text: caption.cells.join(" ") });
    this.#header = pending[at]!;
    for (const row of pending.slice(at + 1)) this.#add(row);
  }

  #add(row: Row): void {
    const chars = rowChars(row.cells);
    if (this.#block.length > 0 && (this.#blockChars + chars > MAX_TABLE_BLOCK_CHARS || this.#block.length >= MAX_TABLE_BLOCK_ROWS)) this.#flush();
    if (this.#block.length === 0) this.#blockChars = headerChars(this.#header!.cells);
    this.#block.push(row);
    this.#blockChars += chars;
  }

  /** Writes the rows collected so far as one table under its row-range heading. */
  #flush(): void {
    const header = this.#header;
    const rows = this.#block;
    if (!header || rows.length === 0) return;
    this.#block = [];
    this.#tabled = true;
    const first = rows[0]!.number;
    const last = rows.at(-1)!.number;
    this.#addBlock({ kind: "heading", level: 2, text: first === last ? `Row ${first}` : `Rows ${first}–${last}` });
    this.#addBlock({ kind: "table", text: tableText(header.cells, rows.map((r) => r.cells)) });
  }

  /** The sheet's level-1 heading, written once before its first block. */
  #heading(): void {
    if (this.#headed) return;
    this.#headed = true;
    this.#tabled = false;
    if (this.#sheet !== null) this.#addBlock({ kind: "heading", level: 1, text: this.#sheet.trim() || "Sheet" });
  }

  #addBlock(block: Parameters<DocumentBuilder["add"]>[0]): void {
    this.builder.add(block);
    if (this.builder.length > this.limits.maxTextChars) {
      throw new ParseError("document_too_large", `The ${this.what} holds more than ${this.limits.maxTextChars.toLocaleString("en")} characters of text; split it into smaller files to index it.`);
    }
  }
}

/**
 * A table as one or more Markdown tables of at most `maxChars` (and `MAX_TABLE_BLOCK_ROWS`
 * rows) each, every one repeating the header: for tables inside documents (slides, ODT),
 * which have no row numbers to head them.
 */
export function tableBlocks(header: readonly string[], rows: readonly (readonly string[])[], maxChars = MAX_TABLE_BLOCK_CHARS): string[] {
  const blocks: string[] = [];
  const base = headerChars(header);
  let current: (readonly string[])[] = [];
  let chars = base;
  for (const row of rows) {
    const size = rowChars(row);
    if (current.length > 0 && (chars + size > maxChars || current.length >= MAX_TABLE_BLOCK_ROWS)) {
      blocks.push(tableText(header, current));
      current = [];
      chars = base;
    }
    current.push(row);
    chars += size;
  }
  if (current.length > 0 || blocks.length === 0) blocks.push(tableText(header, current));
  return blocks;
}

/**
 * Renders a table, dropping columns empty in the header and in every row (spacer and
 * formatted-but-empty columns); a column with data but no header is named by its letter.
 */
export function tableText(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const width = Math.max(header.length, ...rows.map((r) => r.length));
  const keep: number[] = [];
  for (let c = 0; c < width; c++) {
    if ((header[c] ?? "").trim() !== "" || rows.some((r) => (r[c] ?? "").trim() !== "")) keep.push(c);
  }
  const pick = (cells: readonly string[]) => keep.map((c) => cells[c] ?? "");
  return markdownTable(
    keep.map((c) => (header[c] ?? "").trim() || columnLetter(c)),
    rows.map(pick),
  );
}

/** Spreadsheet column letters: 0 → A, 25 → Z, 26 → AA. */
export function columnLetter(index: number): string {
  let letters = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** 0-based column of a letter reference ("C5" → 2, "AA1" → 26); -1 when there are no letters. */
export function columnIndex(reference: string): number {
  let index = 0;
  let i = 0;
  for (; i < reference.length && i < 4; i++) {
    const code = reference.charCodeAt(i) & ~0x20; // upper case
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return i === 0 ? -1 : index - 1;
}

/** Characters the header row and the delimiter row below it take. */
function headerChars(header: readonly string[]): number {
  return rowChars(header) + 6 * header.length + 2;
}

/** Characters a row takes in a Markdown table (cells, their " | " separators, the line break). */
function rowChars(cells: readonly string[]): number {
  let chars = 2;
  for (const cell of cells) chars += cell.length + 3;
  return chars;
}
