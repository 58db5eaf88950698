/**
 * Rebuilds reading structure from a PDF page's positioned text runs: runs are put in
 * reading order (columns, see `pdf-columns.ts`), runs on one baseline become a line (wide
 * gaps split it into table cells), lines become paragraphs by their vertical spacing,
 * large type becomes headings, consecutive rows of cells become a Markdown table, and words
 * hyphenated across lines are joined again.
 */
import { readingOrder } from "./pdf-columns.js";
import { boundedTables } from "./table-blocks.js";
import type { Block } from "./types.js";

/** One positioned piece of text, as pdf.js reports it (PDF user space: y grows upwards). */
export interface TextRun {
  text: string;
  x: number;
  y: number;
  width: number;
  /** Font size in points. */
  size: number;
  /** pdf.js saw a line break after this run. */
  hasEOL: boolean;
}

/** A piece of a line between wide gaps: a table cell, or the whole line. */
export interface CellSpan {
  text: string;
  left: number;
  right: number;
}

export interface PdfLine {
  text: string;
  x: number;
  y: number;
  size: number;
  /** More than one when wide gaps split the line into table cells ("a | b"). */
  cells: number;
  /** The cells with their horizontal extent (one span for a line without wide gaps). */
  spans?: CellSpan[];
  /** The line starts a column after the first: the line before it ended at the foot of the previous column. */
  columnStart?: true;
}

export interface LayoutBlock {
  kind: Block["kind"];
  text: string;
  level?: number;
}

/** A horizontal gap wider than this many font sizes separates table cells. */
const CELL_GAP = 1.5;
/** Lines in a heading are at least this much larger than the body text. */
export const HEADING_RATIO = 1.15;
const PAGE_NUMBER = /^(?:(?:page|halaman|p\.)\s*)?\d{1,4}(?:\s*(?:of|\/|daripada)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$/i;
const LIST_MARKER = /^(?:[•▪◦●○■□–‣⁃*-]|\d{1,3}[.)]|[a-z][.)])\s/;

/** A list marker standing alone before a wide gap (a tab after a bullet) is not a table cell. */
const BARE_LIST_MARKER = /^(?:[•▪◦●○■□–‣⁃*-]|\d{1,3}[.)]|[a-z][.)])$/;
/** A paragraph whose last line ends like this is finished; otherwise it runs on into the next column. */
const SENTENCE_END = /[.!?:;…]["'”’)\]]*$/;

type OpenLine = PdfLine & { spans: CellSpan[]; end: number; space: boolean; eol: boolean };

/** Groups a page's runs into lines, in reading order (columns read one after another). */
export function runsToLines(runs: readonly TextRun[]): PdfLine[] {
  const lines: PdfLine[] = [];
  let line: OpenLine | null = null;
  for (const run of readingOrder(runs)) {
    if (run.text.trim() === "") {
      if (line) {
        line.space = true;
        line.eol ||= run.hasEOL;
      }
      continue;
    }
    const right = run.x + run.width;
    if (!line || line.eol || run.columnStart || Math.abs(run.y - line.y) > 0.5 * Math.max(run.size, line.size)) {
      if (line) lines.push(finishLine(line));
      line = { text: run.text, x: run.x, y: run.y, size: run.size, cells: 1, spans: [{ text: run.text, left: run.x, right }], end: right, space: false, eol: run.hasEOL };
      if (run.columnStart) line.columnStart = true;
      continue;
    }
    const gap = run.x - line.end;
    const span = line.spans.at(-1)!;
    if (gap > CELL_GAP * Math.max(run.size, line.size) && !(line.cells === 1 && BARE_LIST_MARKER.test(line.text.trim()))) {
      line.text = `${line.text.trimEnd()} | ${run.text.trimStart()}`;
      line.cells++;
      line.spans.push({ text: run.text, left: run.x, right });
    } else {
      const needsSpace = (line.space || gap > 0.15 * run.size || gap < -run.size) && !/\s$/.test(line.text) && !/^\s/.test(run.text);
      line.text += (needsSpace ? " " : "") + run.text;
      span.text += (needsSpace && !/\s$/.test(span.text) ? " " : "") + run.text;
      span.right = Math.max(span.right, right);
    }
    line.end = right;
    line.size = Math.max(line.size, run.size);
    line.space = false;
    line.eol = run.hasEOL;
  }
  if (line) lines.push(finishLine(line));
  return lines.filter((l, i) => !((i === 0 || i === lines.length - 1) && PAGE_NUMBER.test(l.text)));
}

function finishLine(line: OpenLine): PdfLine {
  const spans = line.spans.map((s) => ({ text: s.text.replace(/\s+/g, " ").trim(), left: s.left, right: s.right }));
  const done: PdfLine = { text: line.text.replace(/\s+/g, " ").trim(), x: line.x, y: line.y, size: line.size, cells: line.cells, spans };
  if (line.columnStart) done.columnStart = true;
  return done;
}

/**
 * Groups one page's lines into blocks. `bodySize` is the document's typical font
 * size; `levelOf` maps a heading's font size to its level.
 */
export function linesToBlocks(lines: PdfLine[], bodySize: number, levelOf: (size: number) => number): LayoutBlock[] {
  const spacing = typicalSpacing(lines, bodySize);
  const blocks: LayoutBlock[] = [];
  const reachOf = (kind: Block["kind"], line: PdfLine): number => (kind === "heading" ? Math.max(spacing, line.size * 1.25) * 1.2 : spacing * (kind === "table" ? 2.2 : 1.45));
  let group: LineGroup | null = null;
  let previous: PdfLine | null = null;
  lines.forEach((line, i) => {
    let kind = classify(line, bodySize);
    const gap = previous ? previous.y - line.y : Number.POSITIVE_INFINITY;
    const next = lines[i + 1];
    if (group?.kind === "table" && kind !== "table" && next && classify(next, bodySize) === "table" && gap > 0 && gap <= reachOf("table", line)) {
      // A row with one cell filled, between two rows of the table: a row of the table.
      const gapAfter = line.y - next.y;
      if (gapAfter > 0 && gapAfter <= reachOf("table", next) && alignsWithColumn(line, [group.lines.at(-1)!, next])) kind = "table";
    }
    const near = gap > 0 && gap <= reachOf(kind, line);
    if (group && near && group.kind === "list" && kind === "paragraph" && line.x > group.x + bodySize * 0.3) {
      group.parts[group.parts.length - 1] = joinLines(group.parts.at(-1) ?? "", line.text); // the item continues
    } else if (group && line.columnStart && group.kind === "paragraph" && kind === "paragraph" && sameSize(kind, line.size, group.size) && !SENTENCE_END.test(group.parts.at(-1) ?? "")) {
      group.parts.push(line.text); // the paragraph runs on from the foot of the previous column
    } else if (group && near && kind === group.kind && sameSize(kind, line.size, group.size)) {
      group.parts.push(line.text);
      group.lines.push(line);
    } else {
      if (group) blocks.push(...toBlocks(group, levelOf));
      group = { kind, parts: [line.text], lines: [line], size: line.size, x: line.x };
    }
    previous = line;
  });
  if (group) blocks.push(...toBlocks(group, levelOf));
  return blocks;
}

interface LineGroup {
  kind: Block["kind"];
  parts: string[];
  /** The group's lines (what a table is built from). */
  lines: PdfLine[];
  size: number;
  x: number;
}

/** Headings and paragraphs end where the type size changes. */
function sameSize(kind: Block["kind"], size: number, groupSize: number): boolean {
  if (kind === "heading") return Math.abs(size - groupSize) < 0.5;
  return kind !== "paragraph" || Math.abs(size - groupSize) <= 0.1 * groupSize;
}

function toBlocks(group: LineGroup, levelOf: (size: number) => number): LayoutBlock[] {
  if (group.kind === "heading") return [{ kind: "heading", text: group.parts.join(" "), level: levelOf(group.size) }];
  if (group.kind === "table") return tableTexts(group.lines).map((text) => ({ kind: "table", text }));
  return [{ kind: group.kind, text: group.kind === "paragraph" ? group.parts.reduce(joinLines) : group.parts.join("\n") }];
}

/** Cells a table may hold per cell of ink before it is too sparse to be a grid (a page of stray gaps, not a table). */
const MAX_TABLE_SPARSENESS = 4;

/**
 * Rows of cells as a Markdown table, the first row as its header (a single row stays
 * "a | b"); a long table as several, each with the header (`boundedTables`). The columns
 * are those of the fullest rows (a gap between two of their cells is a column boundary,
 * half-way across it); every cell goes to the column it overlaps most, so a cell missing
 * from a row leaves its column empty instead of shifting the rest left, and a header
 * centred over numbers still finds their column.
 */
function tableTexts(lines: readonly PdfLine[]): string[] {
  // One line with wide gaps (a running head and its page number, a label and its value) is not a table.
  if (lines.length === 1) return [lines[0]!.text];
  // pdf.js gives some fonts no widths: such a cell is taken as half an em per character.
  const rows = lines.map((l) => (l.spans ?? [{ text: l.text, left: l.x, right: l.x }]).map((s) => (s.right > s.left ? s : { ...s, right: s.left + Math.max(1, s.text.length) * l.size * 0.5 })));
  const columns = tableColumns(rows);
  if (!columns) return [lines.map((l) => l.text).join("\n")];
  const grid = rows.map((row) => {
    const cells = columns.map(() => "");
    for (const span of row) {
      const column = columnOfSpan(columns, span);
      cells[column] = cells[column] ? `${cells[column]} ${span.text}` : span.text;
    }
    return cells;
  });
  return boundedTables(grid[0]!, grid.slice(1));
}

interface Extent {
  left: number;
  right: number;
}

/** The table's columns, left to right, or null when the cells do not line up into a grid worth padding. */
function tableColumns(rows: readonly (readonly CellSpan[])[]): Extent[] | null {
  const all = rows.flat();
  const widest = rows.reduce((most, r) => Math.max(most, r.length), 0);
  let columns = overlapUnion(rows.filter((r) => r.length === widest).flat());
  // The fullest rows disagree about their columns: every cell's extent decides.
  if (columns.length !== widest) columns = overlapUnion(all);
  if (columns.length > 2 * widest || rows.length * columns.length > MAX_TABLE_SPARSENESS * all.length + 64) return null;
  return columns;
}

/** Extents merged where they overlap. */
function overlapUnion(spans: readonly Extent[]): Extent[] {
  const sorted = [...spans].sort((p, q) => p.left - q.left);
  const merged: Extent[] = [];
  for (const span of sorted) {
    const last = merged.at(-1);
    if (last && span.left < last.right) last.right = Math.max(last.right, span.right);
    else merged.push({ left: span.left, right: span.right });
  }
  return merged;
}

/** The column whose slot (up to half-way across the gaps on either side) a cell overlaps most; the first on a tie. */
function columnOfSpan(columns: readonly Extent[], span: Extent): number {
  const from = (i: number): number => (i === 0 ? Number.NEGATIVE_INFINITY : (columns[i - 1]!.right + columns[i]!.left) / 2);
  const to = (i: number): number => (i === columns.length - 1 ? Number.POSITIVE_INFINITY : (columns[i]!.right + columns[i + 1]!.left) / 2);
  // The first slot reaching past the cell's left edge (binary search), then the slots it covers.
  let low = 0;
  let high = columns.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (to(middle) > span.left) high = middle;
    else low = middle + 1;
  }
  let best = low;
  let most = Number.NEGATIVE_INFINITY;
  for (let i = low; i < columns.length && (i === low || from(i) < span.right); i++) {
    const overlap = Math.min(to(i), span.right) - Math.max(from(i), span.left);
    if (overlap > most) {
      best = i;
      most = overlap;
    }
  }
  return best;
}

/** A line of one cell whose left or right edge lines up with a cell of the rows around it (left- or right-aligned). */
function alignsWithColumn(line: PdfLine, tableLines: readonly PdfLine[]): boolean {
  const span = line.spans?.[0];
  if (!span || line.cells !== 1) return false;
  return tableLines.some((l) => (l.spans ?? []).some((s) => Math.abs(s.left - span.left) <= 1 || Math.abs(s.right - span.right) <= 1));
}

function classify(line: PdfLine, bodySize: number): Block["kind"] {
  if (line.cells > 1) return "table";
  if (line.size >= bodySize * HEADING_RATIO && line.text.length <= 200 && /\p{L}/u.test(line.text)) return "heading";
  return LIST_MARKER.test(line.text) ? "list" : "paragraph";
}

/** The usual distance between consecutive body lines on the page (median), else 1.2 × the body size. */
function typicalSpacing(lines: PdfLine[], bodySize: number): number {
  const gaps: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const gap = lines[i - 1]!.y - lines[i]!.y;
    const bothBody = [lines[i - 1]!, lines[i]!].every((l) => Math.abs(l.size - bodySize) <= bodySize * 0.1);
    if (gap > 0 && bothBody && gap < bodySize * 4) gaps.push(gap);
  }
  if (gaps.length === 0) return bodySize * 1.2;
  gaps.sort((a, b) => a - b);
  return Math.max(gaps[Math.floor((gaps.length - 1) / 2)]!, bodySize);
}

/** Joins two lines of a paragraph: "informa-" + "tion" → "information"; otherwise with a space. */
export function joinLines(first: string, second: string): string {
  // Only the last two characters are looked at: the accumulated paragraph can be long.
  if (/^\p{L}[-\u00AD]$/u.test(first.slice(-2)) && /^\p{Ll}/u.test(second)) return first.slice(0, -1) + second;
  if (first.endsWith("\u00AD")) return first.slice(0, -1) + second;
  return `${first} ${second}`;
}
