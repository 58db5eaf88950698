/**
 * OpenDocument text (ODT, what LibreOffice Writer saves). `content.xml` is streamed: headings
 * (`text:h` with their outline level, and paragraphs in the Title style), paragraphs, lists
 * (bullets or numbers per level, from the list styles), and tables as Markdown tables (the
 * header rows, else the first row, repeated when a long table is cut). Text inside a
 * paragraph that is not part of its sentence (a footnote's body, a text frame) follows the
 * paragraph as blocks of its own. Tracked deletions, comments and generated indexes (a
 * table of contents repeats the headings) are left out. The title is `dc:title` from
 * `meta.xml`, else the first level-1 heading.
 */
import { DocumentBuilder, type BlockInput } from "./document-builder.js";
import { OfficeArchive, readDcTitle } from "./office-archive.js";
import type { XmlHandlers } from "./office-xml.js";
import { tableBlocks } from "./sheet-tables.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** Elements whose content is not the document's running text. */
const SKIPPED = new Set(["tracked-changes", "annotation", "note-citation", "table-of-content", "alphabetical-index", "illustration-index", "table-index", "object-index", "user-index", "bibliography", "sequence-decls", "forms"]);
/** Columns a text table may reach; repeated empty cells past it only move the position. */
const MAX_TABLE_COLUMNS = 1024;
/** Rows all text tables together may hold. */
const MAX_TABLE_ROWS = 200_000;
/** Characters of text the document may grow to. */
const MAX_TEXT_CHARS = 20_000_000;

/** A paragraph or heading being read; blocks found inside it (notes, frames) wait for it to end. */
interface OpenText {
  heading: number | null;
  text: string;
  deferred: BlockInput[];
}

interface OpenList {
  style: string | null;
  lines: string[];
  /** Per item: how many paragraphs it has had (the first carries the marker). */
  paragraphs: number;
  counter: number;
  header: boolean;
}

interface OpenTable {
  rows: string[][];
  headerRows: string[][];
  inHeader: boolean;
  row: string[] | null;
  rowRepeat: number;
  column: number;
  cell: string[] | null;
  cellRepeat: number;
}

/**
 * Parses an ODT file.
 * @throws ParseError `corrupt_document`, `document_too_large` (zip bombs, limits), `document_too_complex`, `empty_document`.
 */
export async function parseOdt(bytes: Uint8Array): Promise<ParsedDocument> {
  const archive = OfficeArchive.open(bytes, "OpenDocument text");
  if (!archive.has("content.xml")) throw new ParseError("corrupt_document", "The OpenDocument text is damaged: it has no content.xml.");
  const styles = new OdtStyles();
  if (archive.has("styles.xml")) await archive.readXml("styles.xml", styles.handlers());
  const builder = new DocumentBuilder();
  const reader = new OdtBodyReader(builder, styles);
  const styleHandlers = styles.handlers();
  await archive.readXml("content.xml", {
    open(name, attributes) {
      styleHandlers.open?.(name, attributes);
      reader.open(name, attributes);
    },
    close(name) {
      styleHandlers.close?.(name);
      reader.close(name);
    },
    text: (text) => reader.text(text),
  });
  const title = (await readDcTitle(archive, "meta.xml")) ?? reader.firstHeading;
  return builder.build({ format: "odt", title });
}

/** Which list styles number which levels, and which paragraph styles are titles. */
class OdtStyles {
  readonly numbered = new Map<string, boolean[]>();
  readonly parents = new Map<string, string>();
  #list: boolean[] | null = null;

  handlers(): XmlHandlers {
    return {
      open: (name, attributes) => {
        if (name === "list-style" && attributes["style:name"]) {
          this.#list = [];
          this.numbered.set(attributes["style:name"], this.#list);
        } else if (this.#list && (name === "list-level-style-number" || name === "list-level-style-bullet")) {
          const level = Number(attributes["text:level"] ?? 1);
          if (level >= 1 && level <= 10) this.#list[level - 1] = name === "list-level-style-number" && (attributes["style:num-format"] ?? "1") !== "";
        } else if (name === "style" && attributes["style:name"] && attributes["style:parent-style-name"]) {
          this.parents.set(attributes["style:name"], attributes["style:parent-style-name"]);
        }
      },
      close: (name) => {
        if (name === "list-style") this.#list = null;
      },
    };
  }

  /** Whether a paragraph style is (or derives from) the Title style. */
  isTitle(style: string | undefined): boolean {
    for (let name = style, hops = 0; name && hops < 10; name = this.parents.get(name), hops++) if (name === "Title") return true;
    return false;
  }
}

/** The state machine over `office:body`. */
class OdtBodyReader {
  firstHeading: string | null = null;
  #skip = 0;
  #texts: OpenText[] = [];
  #lists: OpenList[] = [];
  #tables: OpenTable[] = [];
  #tableRows = 0;

  constructor(
    private readonly builder: DocumentBuilder,
    private readonly styles: OdtStyles,
  ) {}

  open(name: string, attributes: Record<string, string>): void {
    if (this.#skip > 0 || SKIPPED.has(name)) {
      this.#skip++;
      return;
    }
    const open = this.#texts.at(-1);
    switch (name) {
      case "h":
      case "p": {
        const level = name === "h" ? Math.min(6, Math.max(1, Math.trunc(Number(attributes["text:outline-level"] ?? 1)) || 1)) : this.styles.isTitle(attributes["text:style-name"]) ? 1 : null;
        this.#texts.push({ heading: level, text: "", deferred: [] });
        return;
      }
      case "s":
        if (open) open.text += " ".repeat(Math.min(100, Math.max(1, Number(attributes["text:c"] ?? 1) || 1)));
        return;
      case "tab":
        if (open) open.text += " ";
        return;
      case "line-break":
        if (open) open.text += "\n";
        return;
      case "list": {
        const parent = this.#lists.at(-1);
        this.#lists.push({ style: attributes["text:style-name"] ?? parent?.style ?? null, lines: [], paragraphs: 0, counter: 0, header: false });
        return;
      }
      case "list-item":
      case "list-header": {
        const list = this.#lists.at(-1);
        if (!list) return;
        list.paragraphs = 0;
        list.header = name === "list-header";
        if (!list.header) list.counter++;
        return;
      }
      case "table":
        this.#tables.push({ rows: [], headerRows: [], inHeader: false, row: null, rowRepeat: 1, column: 0, cell: null, cellRepeat: 1 });
        return;
      case "table-header-rows":
        if (this.#tables.length === 1) this.#tables[0]!.inHeader = true;
        return;
      case "table-row": {
        const table = this.#outerTable();
        if (!table || this.#tables.length > 1) return;
        table.row = [];
        table.column = 0;
        table.rowRepeat = repeatCount(attributes["table:number-rows-repeated"]);
        return;
      }
      case "table-cell":
      case "covered-table-cell": {
        const table = this.#outerTable();
        if (!table || this.#tables.length > 1) return;
        table.cell = [];
        table.cellRepeat = repeatCount(attributes["table:number-columns-repeated"]);
        return;
      }
    }
  }

  text(text: string): void {
    const open = this.#texts.at(-1);
    if (this.#skip === 0 && open) open.text += text;
  }

  close(name: string): void {
    if (this.#skip > 0) {
      this.#skip--;
      return;
    }
    switch (name) {
      case "h":
      case "p": {
        const open = this.#texts.pop();
        if (open) this.#endText(open);
        return;
      }
      case "list": {
        const list = this.#lists.pop();
        const outer = this.#lists.at(-1);
        if (!list) return;
        if (outer) outer.lines.push(...list.lines);
        else this.#emit({ kind: "list", text: list.lines.join("\n") });
        return;
      }
      case "table-header-rows":
        if (this.#tables.length === 1) this.#tables[0]!.inHeader = false;
        return;
      case "table-cell":
      case "covered-table-cell": {
        const table = this.#outerTable();
        if (!table?.row || !table.cell || this.#tables.length > 1) return;
        const value = table.cell.join(" ").replace(/\s+/g, " ").trim();
        if (value !== "") {
          if (table.column + table.cellRepeat > MAX_TABLE_COLUMNS) throw new ParseError("document_too_large", `The document has a table wider than ${MAX_TABLE_COLUMNS} columns.`);
          for (let i = 0; i < table.cellRepeat; i++) table.row[table.column + i] = value;
        }
        table.column += table.cellRepeat;
        table.cell = null;
        return;
      }
      case "table-row": {
        const table = this.#outerTable();
        if (!table?.row || this.#tables.length > 1) return;
        const row = table.row;
        table.row = null;
        if (!row.some((cell) => cell)) return;
        if (table.rowRepeat > MAX_TABLE_ROWS - this.#tableRows) throw tooManyRows();
        for (let i = 0; i < table.rowRepeat; i++) (table.inHeader ? table.headerRows : table.rows).push(Array.from(row, (cell) => cell ?? ""));
        this.#tableRows += table.rowRepeat;
        return;
      }
      case "table": {
        const table = this.#tables.pop();
        if (!table || this.#tables.length > 0) return;
        const header = table.headerRows.length > 0 ? mergeRows(table.headerRows) : (table.rows.shift() ?? []);
        if (header.length === 0 && table.rows.length === 0) return;
        for (const text of tableBlocks(header, table.rows)) this.#emit({ kind: "table", text });
        return;
      }
    }
  }

  /** The outermost open table: nested tables' text goes into its current cell. */
  #outerTable(): OpenTable | undefined {
    return this.#tables[0];
  }

  /** A paragraph or heading ended: its text goes to a cell, a list line, or a block, then what it held. */
  #endText(open: OpenText): void {
    const text = open.text.replace(/[ \t]+/g, " ").trim();
    const table = this.#outerTable();
    if (table?.cell) {
      if (text !== "") table.cell.push(text);
      // A note or frame inside a cell stays in the cell.
      for (const block of open.deferred) table.cell.push(block.text);
      return;
    }
    if (open.heading !== null) {
      // Headings stay headings inside lists too (Writer puts numbered headings in one).
      const title = text.replace(/\s+/g, " ");
      this.#emit({ kind: "heading", level: open.heading, text: title });
      if (open.heading === 1 && title !== "") this.firstHeading ??= title;
      for (const block of open.deferred) this.#emit(block);
      return;
    }
    const list = this.#lists.at(-1);
    if (list && this.#texts.length === 0) {
      if (text !== "") {
        const depth = this.#lists.length - 1;
        const indent = "  ".repeat(depth);
        const numbered = list.style ? (this.styles.numbered.get(list.style)?.[depth] ?? false) : false;
        const line = text.replace(/\s+/g, " ");
        if (list.paragraphs++ === 0 && !list.header) list.lines.push(`${indent}${numbered ? `${list.counter}.` : "-"} ${line}`);
        else list.lines.push(`${indent}  ${line}`);
      }
      for (const block of open.deferred) this.#emit(block);
      return;
    }
    this.#emit({ kind: "paragraph", text });
    for (const block of open.deferred) this.#emit(block);
  }

  /** Adds a block, or holds it until the paragraph it sits in ends. */
  #emit(block: BlockInput): void {
    const outer = this.#texts.at(-1);
    if (outer) {
      outer.deferred.push(block);
      return;
    }
    this.builder.add(block);
    if (this.builder.length > MAX_TEXT_CHARS) throw new ParseError("document_too_large", `The document holds more than ${MAX_TEXT_CHARS.toLocaleString("en")} characters of text.`);
  }
}

/** Several header rows as one: each column's texts joined. */
function mergeRows(rows: string[][]): string[] {
  const width = Math.max(...rows.map((r) => r.length));
  return Array.from({ length: width }, (_, i) => rows.map((r) => r[i] ?? "").filter((cell) => cell !== "").join(" "));
}

function repeatCount(raw: string | undefined): number {
  const n = raw === undefined ? 1 : Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : 1;
}

function tooManyRows(): ParseError {
  return new ParseError("document_too_large", `The document's tables hold more than ${MAX_TABLE_ROWS.toLocaleString("en")} rows.`);
}
