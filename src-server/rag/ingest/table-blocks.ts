/**
 * A long table from a document (PDF, HTML, Word) as several Markdown tables of bounded size,
 * each repeating the header row. A chunker cuts a table too long for one chunk into lines,
 * and only the first piece would keep the header; tables of this size fit a chunk whole, so
 * every passage of a long table says what its columns are. The sizes are the spreadsheet
 * tables' (`sheet-tables.ts`).
 */
import { markdownTable } from "./markdown-table.js";
import { MAX_TABLE_BLOCK_CHARS, MAX_TABLE_BLOCK_ROWS } from "./sheet-tables.js";

/** The table as one or more Markdown tables, each with `header`, each row in exactly one of them. */
export function boundedTables(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const tables: string[] = [];
  const base = lineChars(header) * 2;
  let current: (readonly string[])[] = [];
  let chars = base;
  for (const row of rows) {
    const size = lineChars(row);
    if (current.length > 0 && (chars + size > MAX_TABLE_BLOCK_CHARS || current.length >= MAX_TABLE_BLOCK_ROWS)) {
      tables.push(markdownTable(header, current));
      current = [];
      chars = base;
    }
    current.push(row);
    chars += size;
  }
  if (current.length > 0 || tables.length === 0) tables.push(markdownTable(header, current));
  return tables;
}

/** About the length of the row's line in the table ("| a | b |\n"). */
function lineChars(cells: readonly string[]): number {
  return cells.reduce((n, cell) => n + cell.length + 3, 2);
}
