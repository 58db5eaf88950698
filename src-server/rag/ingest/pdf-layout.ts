/**
 * Rebuilds reading structure from a PDF page's positioned text runs: runs on one
 * baseline become a line (wide gaps become table cells), lines become paragraphs
 * by their vertical spacing, large type becomes headings, and words hyphenated
 * across lines are joined again.
 */
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

export interface PdfLine {
  text: string;
  x: number;
  y: number;
  size: number;
  /** More than one when wide gaps split the line into table cells ("a | b"). */
  cells: number;
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

/** Groups runs (in content order) into lines. */
export function runsToLines(runs: TextRun[]): PdfLine[] {
  const lines: PdfLine[] = [];
  let line: (PdfLine & { end: number; space: boolean; eol: boolean }) | null = null;
  for (const run of runs) {
    if (run.text.trim() === "") {
      if (line) {
        line.space = true;
        line.eol ||= run.hasEOL;
      }
      continue;
    }
    if (!line || line.eol || Math.abs(run.y - line.y) > 0.5 * Math.max(run.size, line.size)) {
      if (line) lines.push(finishLine(line));
      line = { text: run.text, x: run.x, y: run.y, size: run.size, cells: 1, end: run.x + run.width, space: false, eol: run.hasEOL };
      continue;
    }
    const gap = run.x - line.end;
    if (gap > CELL_GAP * Math.max(run.size, line.size)) {
      line.text = `${line.text.trimEnd()} | ${run.text.trimStart()}`;
      line.cells++;
    } else {
      const needsSpace = (line.space || gap > 0.15 * run.size || gap < -run.size) && !/\s$/.test(line.text) && !/^\s/.test(run.text);
      line.text += (needsSpace ? " " : "") + run.text;
    }
    line.end = run.x + run.width;
    line.size = Math.max(line.size, run.size);
    line.space = false;
    line.eol = run.hasEOL;
  }
  if (line) lines.push(finishLine(line));
  return lines.filter((l, i) => !((i === 0 || i === lines.length - 1) && PAGE_NUMBER.test(l.text)));
}

function finishLine(line: PdfLine): PdfLine {
  return { text: line.text.replace(/\s+/g, " ").trim(), x: line.x, y: line.y, size: line.size, cells: line.cells };
}

/**
 * Groups one page's lines into blocks. `bodySize` is the document's typical font
 * size; `levelOf` maps a heading's font size to its level.
 */
export function linesToBlocks(lines: PdfLine[], bodySize: number, levelOf: (size: number) => number): LayoutBlock[] {
  const spacing = typicalSpacing(lines, bodySize);
  const blocks: LayoutBlock[] = [];
  let group: LineGroup | null = null;
  let previous: PdfLine | null = null;
  for (const line of lines) {
    const kind = classify(line, bodySize);
    const gap = previous ? previous.y - line.y : Number.POSITIVE_INFINITY;
    const reach = kind === "heading" ? Math.max(spacing, line.size * 1.25) * 1.2 : spacing * (kind === "table" ? 2.2 : 1.45);
    const near = gap > 0 && gap <= reach;
    if (group && near && group.kind === "list" && kind === "paragraph" && line.x > group.x + bodySize * 0.3) {
      group.parts[group.parts.length - 1] = joinLines(group.parts.at(-1) ?? "", line.text); // the item continues
    } else if (group && near && kind === group.kind && sameSize(kind, line.size, group.size)) {
      group.parts.push(line.text);
    } else {
      if (group) blocks.push(toBlock(group, levelOf));
      group = { kind, parts: [line.text], size: line.size, x: line.x };
    }
    previous = line;
  }
  if (group) blocks.push(toBlock(group, levelOf));
  return blocks;
}

interface LineGroup {
  kind: Block["kind"];
  parts: string[];
  size: number;
  x: number;
}

/** Headings and paragraphs end where the type size changes. */
function sameSize(kind: Block["kind"], size: number, groupSize: number): boolean {
  if (kind === "heading") return Math.abs(size - groupSize) < 0.5;
  return kind !== "paragraph" || Math.abs(size - groupSize) <= 0.1 * groupSize;
}

function toBlock(group: LineGroup, levelOf: (size: number) => number): LayoutBlock {
  if (group.kind === "heading") return { kind: "heading", text: group.parts.join(" "), level: levelOf(group.size) };
  return { kind: group.kind, text: group.kind === "paragraph" ? group.parts.reduce(joinLines) : group.parts.join("\n") };
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
