/**
 * Reading order of a page set in columns. A PDF gives its text runs in the order the
 * producer drew them, which for a newsletter or a journal page may run across the
 * columns, or put the title last. Here a page's runs are sorted into reading order: the
 * page is cut into horizontal bands at the lines that run across the page's gutters (a
 * title, a standfirst, a footer) and at tall empty strips, each band whose lines leave one
 * or more vertical gutters free is read column by column, left to right, and the bands are
 * read top to bottom.
 *
 * Detection is deliberately conservative, because a wrong guess scrambles a page that was
 * fine: a band counts as columns only when every column is wide (at least
 * `MIN_COLUMN_EMS` font sizes), mostly filled by its lines (prose, not table cells), the
 * columns are of about the same width, and they hold enough lines. A page without columns
 * gets its runs back untouched, in the very same array.
 */
import type { TextRun } from "./pdf-layout.js";

/** A gutter is at least this many body font sizes wide (CSS and LaTeX default to about one). */
const MIN_GUTTER_EMS = 0.8;
/** Each column is at least this many body font sizes wide (a four-column newspaper page has about 11). */
const MIN_COLUMN_EMS = 8;
/** A column's typical (median) line covers at least this share of the column's width. */
const MIN_COLUMN_FILL = 0.6;
/** The widest column is at most this many times the narrowest. */
const MAX_WIDTH_RATIO = 1.35;
/** Lines a column needs, and the band as a whole. */
const MIN_COLUMN_LINES = 2;
const MIN_BAND_LINES = 6;
const MAX_COLUMNS = 6;
/** At least this share of the page's characters is in bands set in columns, else the page is read as it is. */
const MIN_COLUMN_TEXT_SHARE = 0.6;
/**
 * A strip across the whole page this many font sizes high with no text in it ends a band: a
 * running head or a page number above the text, a figure across the columns. Paragraph
 * breaks and headings inside columns rarely line up into one that high.
 */
const BAND_BREAK_EMS = 3.5;
/**
 * Fewer than this share of a page's lines may run across a gutter (titles, standfirsts,
 * abstracts, footers). Loose on purpose: the bands left between them must still pass the
 * column tests.
 */
const MAX_SPANNING_SHARE = 0.45;

/** A run that starts a column after the first in its band: the text before it ended at the foot of the previous column. */
export interface OrderedRun extends TextRun {
  columnStart?: true;
}

/** One horizontal band of the page, top to bottom: full width (one column) or set in columns. */
export interface ColumnBand {
  /** Baselines of the band's first and last line (PDF user space, y grows upwards). */
  top: number;
  bottom: number;
  /** Left and right edges of each column, left to right; one entry for a full-width band. */
  columns: { left: number; right: number }[];
}

interface Unit {
  /** Index of its text run in the page's runs; the blank runs after it (up to the next text run) travel with it. */
  first: number;
  last: number;
  left: number;
  right: number;
  y: number;
  size: number;
  chars: number;
}

interface Row {
  y: number;
  units: Unit[];
  /** The row's ink, left to right, runs closer than a gutter merged. */
  segments: { left: number; right: number }[];
}

interface Group {
  rows: Row[];
  /** Its rows run across a gutter: the band is full width. */
  spanning: boolean;
  /** Column edges when the band is set in columns, else null. */
  columns: { left: number; right: number }[] | null;
}

/**
 * The page's bands, top to bottom, or null when no band is set in columns (the page is
 * read as it is).
 */
export function detectColumns(runs: readonly TextRun[]): ColumnBand[] | null {
  const layout = analyse(runs);
  if (!layout) return null;
  return layout.groups.map((group) => ({
    top: group.rows[0]!.y,
    bottom: group.rows.at(-1)!.y,
    columns: group.columns ?? [
      {
        left: group.rows.reduce((min, r) => Math.min(min, r.segments[0]!.left), Number.POSITIVE_INFINITY),
        right: group.rows.reduce((max, r) => Math.max(max, r.segments.at(-1)!.right), Number.NEGATIVE_INFINITY),
      },
    ],
  }));
}

/**
 * The page's runs in reading order. Without columns this is `runs` itself. With columns,
 * runs keep their drawing order within each column (and within each full-width band); the
 * last run of every column and band is marked as ending a line, and the first run of each
 * column after the first is marked `columnStart`, so lines never join across a gutter.
 */
export function readingOrder(runs: readonly TextRun[]): readonly OrderedRun[] {
  const layout = analyse(runs);
  if (!layout) return runs;
  const regions: Unit[][] = [];
  const columnStarts = new Set<Unit>();
  for (const group of layout.groups) {
    if (!group.columns) {
      // Full width: line by line from the top when each line was drawn in one go (a title may
      // be drawn after the text under it); otherwise (a diagram, a table drawn column-wise) in
      // drawing order, as a page without columns is read.
      regions.push(...(rowsDrawnWhole(group.rows) ? group.rows.map((row) => row.units) : [group.rows.flatMap((r) => r.units)]));
      continue;
    }
    const bounds = group.columns;
    const units = group.rows.flatMap((r) => r.units).sort((p, q) => p.first - q.first);
    const column = new Map(units.map((u) => [u, columnOf(bounds, (u.left + u.right) / 2)]));
    // Most producers draw columns one after the other: their order is kept as it is (it
    // knows better where a caption or an author block belongs). Only a band drawn across
    // the columns, or in another column order, is read column by column.
    const perColumn: Unit[][] = drawnInColumnOrder(units, column) ? [units] : bounds.map((_, i) => units.filter((u) => column.get(u) === i));
    const band = perColumn.filter((c) => c.length > 0);
    regions.push(...band);
    markColumnStarts(band.flat(), column, group.rows, columnStarts);
  }
  const ordered: OrderedRun[] = runs.slice(0, layout.leading);
  for (const region of regions) {
    for (const unit of region) {
      const start = ordered.length;
      for (let i = unit.first; i <= unit.last; i++) ordered.push(runs[i]!);
      if (columnStarts.has(unit)) ordered[start] = { ...ordered[start]!, columnStart: true };
    }
    ordered[ordered.length - 1] = { ...ordered.at(-1)!, hasEOL: true };
  }
  return ordered;
}

/** Share of a band's characters that must already come column after column for its drawing order to be kept. */
const MIN_DRAWN_IN_ORDER = 0.85;

/** Whether the units, in drawing order, visit the columns left to right (most of their characters do). */
function drawnInColumnOrder(units: readonly Unit[], column: ReadonlyMap<Unit, number>): boolean {
  // The heaviest subsequence whose columns never go back (characters as weights).
  const best: number[] = [];
  let total = 0;
  for (const unit of units) {
    const c = column.get(unit)!;
    let before = 0;
    for (let i = 0; i <= c; i++) before = Math.max(before, best[i] ?? 0);
    best[c] = before + unit.chars;
    total += unit.chars;
  }
  return Math.max(0, ...best.map((b) => b ?? 0)) >= MIN_DRAWN_IN_ORDER * total;
}

/**
 * Marks where reading passes from the foot of one column to the head of the next: the unit
 * read after the lowest line of column c that sits on the highest line of column c + 1.
 */
function markColumnStarts(units: readonly Unit[], column: ReadonlyMap<Unit, number>, rows: readonly Row[], marks: Set<Unit>): void {
  const rowOf = new Map<Unit, number>();
  rows.forEach((row, r) => row.units.forEach((u) => rowOf.set(u, r)));
  const top: number[] = [];
  const bottom: number[] = [];
  for (const unit of units) {
    const c = column.get(unit)!;
    const r = rowOf.get(unit)!;
    top[c] = Math.min(top[c] ?? r, r);
    bottom[c] = Math.max(bottom[c] ?? r, r);
  }
  for (let i = 1; i < units.length; i++) {
    const previous = units[i - 1]!;
    const unit = units[i]!;
    const c = column.get(unit)!;
    if (c === column.get(previous)! + 1 && rowOf.get(previous) === bottom[c - 1] && rowOf.get(unit) === top[c]) marks.add(unit);
  }
}

/** Whether each row's units are consecutive in drawing order among the rows' units. */
function rowsDrawnWhole(rows: readonly Row[]): boolean {
  const order = rows.flatMap((r) => r.units.map((u) => u.first)).sort((a, b) => a - b);
  const rank = new Map(order.map((first, i) => [first, i]));
  return rows.every((row) => {
    let low = Number.POSITIVE_INFINITY;
    let high = Number.NEGATIVE_INFINITY;
    for (const unit of row.units) {
      low = Math.min(low, rank.get(unit.first)!);
      high = Math.max(high, rank.get(unit.first)!);
    }
    return high - low === row.units.length - 1;
  });
}

/** Column whose span (widened to the middle of the gutters) holds `x`. */
function columnOf(columns: readonly { left: number; right: number }[], x: number): number {
  for (let i = 0; i < columns.length - 1; i++) {
    if (x < (columns[i]!.right + columns[i + 1]!.left) / 2) return i;
  }
  return columns.length - 1;
}

function analyse(runs: readonly TextRun[]): { groups: Group[]; leading: number } | null {
  const { units, leading } = toUnits(runs);
  if (units.length < MIN_BAND_LINES) return null;
  const em = bodySize(units);
  const minGutter = MIN_GUTTER_EMS * em;
  const rows = toRows(units, minGutter);
  const gutters = pageGutters(rows, minGutter);
  if (gutters.length === 0) return null;
  const crosses = (row: Row): boolean => row.segments.some((s) => gutters.some((g) => s.left < g.right - 0.5 && s.right > g.left + 0.5));
  const groups: Group[] = [];
  for (const row of rows) {
    const spanning = crosses(row);
    const current = groups.at(-1);
    if (current?.spanning === spanning && current.rows.at(-1)!.y - row.y <= BAND_BREAK_EMS * em) current.rows.push(row);
    else groups.push({ rows: [row], spanning, columns: null });
  }
  let inColumns = 0;
  for (const group of groups) {
    if (group.spanning) continue;
    group.columns = bandColumns(group.rows, minGutter, em);
    if (group.columns) inColumns += group.rows.reduce((sum, row) => sum + row.units.reduce((n, u) => n + u.chars, 0), 0);
  }
  // Columns are the page's main text, not a few aligned boxes in a diagram.
  const total = units.reduce((n, u) => n + u.chars, 0);
  return inColumns > 0 && inColumns >= MIN_COLUMN_TEXT_SHARE * total ? { groups, leading } : null;
}

/** Text runs as units (each with the blank runs that follow it); `leading` blank runs come before the first. */
function toUnits(runs: readonly TextRun[]): { units: Unit[]; leading: number } {
  const units: Unit[] = [];
  let leading = 0;
  runs.forEach((run, i) => {
    const text = run.text.trim();
    if (text === "") {
      const last = units.at(-1);
      if (last) last.last = i;
      else leading = i + 1;
      return;
    }
    // pdf.js reports a width of 0 for some fonts: estimate half an em per character then.
    const width = run.width > 0 ? run.width : text.length * run.size * 0.5;
    units.push({ first: i, last: i, left: run.x, right: run.x + width, y: run.y, size: run.size, chars: text.length });
  });
  return { units, leading };
}

/** The font size most characters are set in. */
function bodySize(units: readonly Unit[]): number {
  const sorted = units.filter((u) => u.size > 0).sort((p, q) => p.size - q.size);
  const total = sorted.reduce((sum, u) => sum + u.chars, 0);
  let seen = 0;
  for (const unit of sorted) {
    seen += unit.chars;
    if (seen * 2 >= total) return unit.size;
  }
  return 10;
}

/** Units on one baseline (top to bottom), with their ink merged into segments. */
function toRows(units: readonly Unit[], minGutter: number): Row[] {
  const sorted = [...units].sort((p, q) => q.y - p.y || p.left - q.left);
  const rows: Row[] = [];
  for (const unit of sorted) {
    const row = rows.at(-1);
    if (row && Math.abs(row.y - unit.y) <= 0.4 * Math.max(unit.size, row.units[0]!.size)) row.units.push(unit);
    else rows.push({ y: unit.y, units: [unit], segments: [] });
  }
  for (const row of rows) row.segments = mergeSpans(row.units, minGutter);
  return rows;
}

function mergeSpans(spans: readonly { left: number; right: number }[], minGap: number): { left: number; right: number }[] {
  const sorted = [...spans].sort((p, q) => p.left - q.left);
  const merged: { left: number; right: number }[] = [];
  for (const span of sorted) {
    const last = merged.at(-1);
    if (last && span.left - last.right < minGap) last.right = Math.max(last.right, span.right);
    else merged.push({ left: span.left, right: span.right });
  }
  return merged;
}

/**
 * Vertical strips, at least a gutter wide, that few rows cross (only rows running across
 * the page may, fewer than `MAX_SPANNING_SHARE` of them), with more ink on both sides: a
 * margin or an indent is not a gutter. Within a low stretch the gutter is where the fewest
 * rows cross, so the ragged ends of a column's lines do not count as crossing it.
 */
function pageGutters(rows: readonly Row[], minGutter: number): { left: number; right: number }[] {
  const edges = new Map<number, number>();
  for (const row of rows) {
    for (const s of row.segments) {
      edges.set(s.left, (edges.get(s.left) ?? 0) + 1);
      edges.set(s.right, (edges.get(s.right) ?? 0) - 1);
    }
  }
  const xs = [...edges.keys()].sort((a, b) => a - b);
  const allowed = Math.ceil(rows.length * MAX_SPANNING_SHARE) - 1;
  const gutters: { left: number; right: number }[] = [];
  /** The stretch being read: elementary intervals [x, next x) and how many rows cover each. */
  let stretch: { left: number; right: number; depth: number }[] = [];
  let depth = 0;
  let inked = false;
  for (let i = 0; i < xs.length - 1; i++) {
    depth += edges.get(xs[i]!)!;
    if (depth <= allowed) {
      if (inked) stretch.push({ left: xs[i]!, right: xs[i + 1]!, depth });
      continue;
    }
    // Ink again: the stretch just read (if any) had ink on both sides.
    const fewest = stretch.reduce((min, s) => Math.min(min, s.depth), Number.POSITIVE_INFINITY);
    let open: number | null = null;
    for (const piece of [...stretch, { left: xs[i]!, right: xs[i]!, depth: Number.POSITIVE_INFINITY }]) {
      if (piece.depth === fewest) open ??= piece.left;
      else if (open !== null) {
        if (piece.left - open >= minGutter) gutters.push({ left: open, right: piece.left });
        open = null;
      }
    }
    stretch = [];
    inked = true;
  }
  // A stretch still open at the last edge is the right margin, not a gutter.
  return gutters;
}

/**
 * Columns of a band: its ink's gaps of at least a gutter, kept only if the pieces read as
 * columns of prose; failing that, the widest gap alone (two columns); else null.
 */
function bandColumns(rows: readonly Row[], minGutter: number, em: number): { left: number; right: number }[] | null {
  const pieces = mergeSpans(
    rows.flatMap((r) => r.segments),
    minGutter,
  );
  if (pieces.length < 2) return null;
  if (pieces.length <= MAX_COLUMNS && areColumns(pieces, rows, em)) return pieces;
  let widest = 0;
  for (let i = 1; i < pieces.length - 1; i++) {
    if (pieces[i + 1]!.left - pieces[i]!.right > pieces[widest + 1]!.left - pieces[widest]!.right) widest = i;
  }
  const two = [
    { left: pieces[0]!.left, right: pieces[widest]!.right },
    { left: pieces[widest + 1]!.left, right: pieces.at(-1)!.right },
  ];
  return pieces.length > 2 && areColumns(two, rows, em) ? two : null;
}

/** Wide columns of about equal width, each with enough lines that mostly fill it. */
function areColumns(columns: readonly { left: number; right: number }[], rows: readonly Row[], em: number): boolean {
  let lines = 0;
  const widths: number[] = [];
  for (const column of columns) {
    const extents: number[] = [];
    for (const row of rows) {
      const inside = row.segments.filter((s) => s.left >= column.left - 0.5 && s.right <= column.right + 0.5);
      if (inside.length > 0) extents.push(inside.at(-1)!.right - inside[0]!.left);
    }
    const width = column.right - column.left;
    if (extents.length < MIN_COLUMN_LINES || width < MIN_COLUMN_EMS * em) return false;
    extents.sort((a, b) => a - b);
    if (extents[Math.floor((extents.length - 1) / 2)]! < MIN_COLUMN_FILL * width) return false;
    lines += extents.length;
    widths.push(width);
  }
  return lines >= MIN_BAND_LINES && Math.max(...widths) <= MAX_WIDTH_RATIO * Math.min(...widths);
}
