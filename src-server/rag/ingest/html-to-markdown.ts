/**
 * HTML → Markdown with turndown (its DOM in Node is domino), keeping what a
 * reader would call the content: page chrome (navigation, page header and footer,
 * asides), scripts, styles, forms, embedded frames and graphics are dropped; links
 * keep their text, images their alt text, data tables become Markdown tables
 * (`markdownTable`, long ones cut in several with the header), layout tables become the
 * blocks they hold.
 */
import TurndownService from "turndown";
import { stripInlineMarkdown } from "./strip-inline-markdown.js";
import { boundedTables } from "./table-blocks.js";

export interface HtmlMarkdown {
  markdown: string;
  /** Text of the first `<title>`, if any. */
  title: string | null;
}

/** The slice of the DOM the rules read (domino implements it; the DOM lib is not loaded here). */
interface DomElement {
  nodeName: string;
  parentNode: DomElement | null;
  childNodes: ArrayLike<DomElement>;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}

const DROPPED = ["script", "style", "nav", "aside", "form", "noscript", "iframe", "svg", "template", "button", "select", "textarea", "canvas", "object", "embed", "audio", "video", "map", "dialog", "link", "meta"];
const CHROME_ROLES = new Set(["navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar"]);
/** A `<header>`/`<footer>` inside these belongs to the content (an article's title, a section's notes). */
const CONTENT_CONTAINERS = new Set(["ARTICLE", "MAIN", "SECTION"]);

/** Converts an HTML string to Markdown and reports its `<title>`. Synchronous and CPU-bound. */
export function htmlToMarkdown(html: string): HtmlMarkdown {
  let title: string | null = null;
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*", strongDelimiter: "**" });
  service.remove(DROPPED as TurndownService.TagName[]);
  service.addRule("chrome", { filter: (node) => isChrome(asElement(node)), replacement: () => "" });
  service.addRule("title", {
    filter: "title" as TurndownService.TagName,
    replacement: (content) => {
      title ??= content.replace(/\s+/g, " ").trim() || null;
      return "";
    },
  });
  service.addRule("link", { filter: "a" as TurndownService.TagName, replacement: (content) => content });
  service.addRule("image", { filter: "img" as TurndownService.TagName, replacement: (_content, node) => (asElement(node).getAttribute("alt") ?? "").trim() });
  // Cells and captions are converted before their table (turndown works bottom-up); the
  // table rule reads them back by node, with the row and column structure from the DOM.
  const converted = new Map<DomElement, string>();
  service.addRule("tableCell", {
    filter: ["th", "td", "caption"] as TurndownService.TagName[],
    replacement: (content, node) => {
      converted.set(asElement(node), content);
      return `\n\n${content}\n\n`;
    },
  });
  service.addRule("tablePart", { filter: ["thead", "tbody", "tfoot", "tr"] as TurndownService.TagName[], replacement: (content) => content });
  service.addRule("table", { filter: "table" as TurndownService.TagName, replacement: (content, node) => tableMarkdown(asElement(node), content, converted) });
  return { markdown: service.turndown(html), title };
}

function asElement(node: unknown): DomElement {
  return node as DomElement;
}

function isChrome(element: DomElement): boolean {
  if (element.hasAttribute("hidden") || element.getAttribute("aria-hidden") === "true") return true;
  if (CHROME_ROLES.has((element.getAttribute("role") ?? "").toLowerCase())) return true;
  if (element.nodeName !== "HEADER" && element.nodeName !== "FOOTER") return false;
  for (let parent = element.parentNode; parent; parent = parent.parentNode) {
    if (CONTENT_CONTAINERS.has(parent.nodeName)) return false;
  }
  return true;
}

/** An HTML table read into rows of cell texts. */
interface HtmlTable {
  caption: string;
  /** Rows of the header (from `<thead>`, else leading rows of `<th>` only), spans filled. */
  head: string[][];
  /** Body rows, then footer rows, spans filled. */
  body: string[][];
}

/** HTML's own caps on spans: a browser reads colspan="5000" as 1000. */
const MAX_COLSPAN = 1000;
const MAX_ROWSPAN = 65534;
/** A grid may hold this many times the table's real cells (plus a little) once spans are filled; beyond that spans are ignored. */
const MAX_SPAN_GROWTH = 4;

/**
 * A table's Markdown. A data table becomes a Markdown table (its caption a paragraph
 * before it); a table nested in a data table's cell becomes plain text inside that cell
 * (cells joined by " / ", rows by "; "); a layout table (role="presentation", or one cell
 * per row) gives the blocks it holds.
 */
function tableMarkdown(table: DomElement, content: string, converted: ReadonlyMap<DomElement, string>): string {
  if (isLayoutTable(table)) return `\n\n${content}\n\n`;
  const { caption, head, body } = readTable(table, converted);
  // Inside a data table's cell (however deep in layout tables), a table is text of that cell.
  if (enclosingTables(table).some((outer) => !isLayoutTable(outer))) return escapeMarkup([caption, flatten([...head, ...body])].filter((t) => t !== "").join("; "));
  const title = caption === "" ? "" : `${escapeMarkup(caption)}\n\n`;
  // Rows with nothing in them (spacer rows) say nothing.
  const filled = body.filter((row) => row.some((cell) => cell !== ""));
  const rows = [...head, ...filled];
  if (rows.length === 0) return `\n\n${title}`;
  const width = rows.reduce((most, row) => Math.max(most, row.length), 0);
  const cells = rows.reduce((n, row) => n + row.filter((cell) => cell !== "").length, 0);
  if (rows.length * width > MAX_SPAN_GROWTH * cells + 1000) {
    // Padding every row to the widest would make the table many times its size (one row of
    // thousands of cells over thousands of one-cell rows): its text, row by row, instead.
    return `\n\n${title}${escapeMarkup(flatten(rows))}\n\n`;
  }
  // A long table becomes several, each with the header (`boundedTables`).
  const [header, ...data] = head.length > 0 ? [mergeHeaderRows(head), ...filled] : rows;
  return `\n\n${title}${boundedTables(header!, data).map(protectForSplitting).join("\n\n")}\n\n`;
}

/** Rows as one line of text: cells joined by " / ", rows by "; ". */
function flatten(rows: readonly string[][]): string {
  return rows
    .map((row) => row.filter((cell) => cell !== "").join(" / "))
    .filter((row) => row !== "")
    .join("; ");
}

/** Presentation tables (page layout, e-mail templates): their cells are blocks, not data. */
function isLayoutTable(table: DomElement): boolean {
  const role = (table.getAttribute("role") ?? "").toLowerCase();
  if (role === "presentation" || role === "none") return true;
  const rows = tableRows(table);
  return rows.length > 0 && rows.every((row) => rowCells(row).length <= 1);
}

function enclosingTables(node: DomElement): DomElement[] {
  const tables: DomElement[] = [];
  for (let parent = node.parentNode; parent; parent = parent.parentNode) if (parent.nodeName === "TABLE") tables.push(parent);
  return tables;
}

function children(node: DomElement, names: readonly string[]): DomElement[] {
  return Array.from(node.childNodes).filter((child) => names.includes(child.nodeName));
}

/** The table's own rows, in document order, each with the section it is in. */
function tableRows(table: DomElement): DomElement[] {
  return children(table, ["THEAD", "TBODY", "TFOOT", "TR"]).flatMap((part) => (part.nodeName === "TR" ? [part] : children(part, ["TR"])));
}

function rowCells(row: DomElement): DomElement[] {
  return children(row, ["TD", "TH"]);
}

function readTable(table: DomElement, converted: ReadonlyMap<DomElement, string>): HtmlTable {
  const captionNode = children(table, ["CAPTION"])[0];
  const caption = captionNode ? cellText(converted.get(captionNode) ?? "") : "";
  const sections = children(table, ["THEAD", "TBODY", "TFOOT", "TR"]);
  const rowsOf = (names: string[]): DomElement[] => sections.filter((s) => names.includes(s.nodeName)).flatMap((s) => (s.nodeName === "TR" ? [s] : children(s, ["TR"])));
  // The footer is read last, wherever the source put it.
  const head = rowsOf(["THEAD"]);
  const rest = [...rowsOf(["TBODY", "TR"]), ...rowsOf(["TFOOT"])];
  let headCount = head.length;
  if (headCount === 0) {
    while (headCount < rest.length && rowCells(rest[headCount]!).length > 0 && rowCells(rest[headCount]!).every((c) => c.nodeName === "TH")) headCount++;
    if (headCount === rest.length) headCount = 0; // a table of header cells only: its rows are the data
  }
  const rows = [...head, ...rest];
  const split = head.length > 0 ? head.length : headCount;
  const grid = fillGrid(rows, split, converted);
  return { caption, head: grid.slice(0, split), body: grid.slice(split) };
}

/**
 * Rows of cell texts with `colspan` and `rowspan` filled in, so no cell shifts into another
 * column: a cell spanning rows is repeated in each (every row reads whole on its own), a
 * header cell spanning columns names each of them, a body cell spanning columns (a label,
 * a subtotal) fills the first and leaves the others empty. Spans that would blow the grid
 * up are ignored.
 */
function fillGrid(rows: readonly DomElement[], headRows: number, converted: ReadonlyMap<DomElement, string>): string[][] {
  const cells = rows.map((row) => rowCells(row).map((cell) => ({ text: cellText(converted.get(cell) ?? ""), colspan: span(cell, "colspan", MAX_COLSPAN), rowspan: span(cell, "rowspan", MAX_ROWSPAN) })));
  const real = cells.reduce((n, row) => n + row.length, 0);
  let slots = 0;
  for (const [r, row] of cells.entries()) for (const cell of row) slots += cell.colspan * Math.min(cell.rowspan === 0 ? rows.length - r : cell.rowspan, rows.length - r);
  const spans = slots <= MAX_SPAN_GROWTH * real + 1000;
  const grid: string[][] = rows.map(() => []);
  cells.forEach((row, r) => {
    let column = 0;
    for (const cell of row) {
      while (grid[r]![column] !== undefined) column++;
      const across = spans ? cell.colspan : 1;
      const down = spans ? Math.min(cell.rowspan === 0 ? rows.length - r : cell.rowspan, rows.length - r) : 1;
      for (let dr = 0; dr < down; dr++) for (let dc = 0; dc < across; dc++) grid[r + dr]![column + dc] = dc === 0 || r + dr < headRows ? cell.text : "";
      column += across;
    }
  });
  // Slots no cell covered (a short row, a hole left by spans) are empty cells.
  return grid.map((row) => Array.from(row, (text) => text ?? ""));
}

function span(cell: DomElement, name: string, max: number): number {
  const value = Number.parseInt(cell.getAttribute(name) ?? "", 10);
  if (!Number.isFinite(value)) return 1;
  if (name === "rowspan" && value === 0) return 0; // to the end of the table
  return Math.min(max, Math.max(1, value));
}

/** Header rows as one: each column's distinct texts from top to bottom ("Revenue" over "2024" → "Revenue 2024"). */
function mergeHeaderRows(head: readonly string[][]): string[] {
  const width = head.reduce((most, row) => Math.max(most, row.length), 0);
  return Array.from({ length: width }, (_, c) => {
    const parts: string[] = [];
    for (const row of head) {
      const text = row[c] ?? "";
      if (text !== "" && parts.at(-1) !== text) parts.push(text);
    }
    return parts.join(" ");
  });
}

/**
 * A cell's converted Markdown as plain text on one line: headings' and quotes' markers
 * dropped, inline markup and escapes resolved (`markdownTable` escapes what a cell needs).
 */
function cellText(markdown: string): string {
  const lines = markdown.split("\n").map((line) => line.replace(/^\s{0,3}(?:#{1,6}\s+|>\s?)/, "").trim());
  return stripInlineMarkdown(lines.filter((line) => line !== "").join(" ")).replace(/\s+/g, " ").trim();
}

/**
 * The table's text is Markdown that `splitMarkdown` reads back (and strips inline markup
 * from): characters that would read as markup are escaped, so cells come back exactly.
 */
function protectForSplitting(table: string): string {
  return table.replace(/[`*_~[\]<]/g, "\\$&");
}

/** Plain text as Markdown that reads back as the same text. */
function escapeMarkup(text: string): string {
  return text.replace(/[\\`*_~[\]<]/g, "\\$&");
}
