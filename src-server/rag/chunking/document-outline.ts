/**
 * The structure chunkers walk: a parsed document's blocks, cleaned up (sorted, clamped
 * to the text, trimmed, empty ones dropped), with the heading path in effect at each
 * block, and lookups from a character range to its heading path and page range.
 */
import type { Block, ParsedDocument } from "../ingest/types.js";
import { trimSpan } from "./text-span.js";
import type { PageBreak } from "./types.js";

/** A block as chunkers see it: offsets trimmed and valid, heading level defaulted. */
export interface OutlineBlock {
  kind: Block["kind"];
  start: number;
  end: number;
  page: number | null;
  /** Heading level 1–6 (1 when the parser gave none); 0 for other blocks. */
  level: number;
}

/** Blocks of a document plus heading-path and page lookups by character range. */
export class DocumentOutline {
  readonly text: string;
  readonly blocks: readonly OutlineBlock[];
  /** Heading path in effect at each block, a heading block included in its own path. */
  private readonly paths: readonly (readonly string[])[];

  constructor(doc: ParsedDocument) {
    this.text = doc.text;
    this.blocks = normaliseBlocks(doc);
    const paths: (readonly string[])[] = [];
    let stack: { level: number; title: string }[] = [];
    let current: readonly string[] = [];
    for (const block of this.blocks) {
      if (block.kind === "heading") {
        stack = stack.filter((h) => h.level < block.level);
        stack.push({ level: block.level, title: headingTitle(this.text.slice(block.start, block.end)) });
        current = stack.map((h) => h.title);
      }
      paths.push(current);
    }
    this.paths = paths;
  }

  /** Text of block `index`. */
  blockText(index: number): string {
    const block = this.blocks[index]!;
    return this.text.slice(block.start, block.end);
  }

  /**
   * Enclosing headings of the range `[start, end)`, outermost first: the path in effect at
   * its first non-heading block, so a chunk opening with "Report" then "Finance" gets both.
   */
  headingPath(start: number, end: number): string[] {
    const [first, last] = this.blockRange(start, end);
    if (first > last) return [];
    let at = first;
    while (at < last && this.blocks[at]!.kind === "heading") at++;
    return [...this.paths[at]!];
  }

  /** First and last page of the blocks overlapping `[start, end)`; nulls for page-less documents. */
  pages(start: number, end: number): { pageStart: number | null; pageEnd: number | null } {
    const [first, last] = this.blockRange(start, end);
    let pageStart: number | null = null;
    let pageEnd: number | null = null;
    for (let i = first; i <= last; i++) {
      const page = this.blocks[i]!.page;
      if (page === null) continue;
      pageStart = pageStart === null ? page : Math.min(pageStart, page);
      pageEnd = pageEnd === null ? page : Math.max(pageEnd, page);
    }
    return { pageStart, pageEnd };
  }

  /**
   * Where each page begins inside the range `[start, end)`, as `[offset from start, page]`
   * pairs in order: the first at offset 0 (the page of the first paged block), then one at
   * each block whose page differs from the one before. Empty for page-less documents.
   */
  pageBreaks(start: number, end: number): PageBreak[] {
    const [first, last] = this.blockRange(start, end);
    const breaks: PageBreak[] = [];
    for (let i = first; i <= last; i++) {
      const { page, start: blockStart } = this.blocks[i]!;
      if (page === null || breaks.at(-1)?.[1] === page) continue;
      breaks.push([breaks.length === 0 ? 0 : Math.max(0, blockStart - start), page]);
    }
    return breaks;
  }

  /** Indexes of the first and last block overlapping `[start, end)` (first > last when none). */
  private blockRange(start: number, end: number): [number, number] {
    return [this.search((b) => b.end > start), this.search((b) => b.start >= end) - 1];
  }

  /** Index of the first block satisfying `past`, which must be monotone over the sorted blocks. */
  private search(past: (block: OutlineBlock) => boolean): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (past(this.blocks[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Heading text without Markdown markers or runs of whitespace. */
function headingTitle(raw: string): string {
  return raw.replace(/^#{1,6}[ \t]+/u, "").replace(/[ \t]+#+[ \t]*$/u, "").replace(/\s+/gu, " ").trim();
}

function normaliseBlocks(doc: ParsedDocument): OutlineBlock[] {
  const length = doc.text.length;
  const sorted = [...doc.blocks].sort((a, b) => a.start - b.start);
  const out: OutlineBlock[] = [];
  let floor = 0;
  for (const block of sorted) {
    const span = trimSpan(doc.text, { start: Math.max(floor, Math.min(block.start, length)), end: Math.min(block.end, length) });
    if (span.end <= span.start) continue;
    const level = block.kind === "heading" ? Math.min(6, Math.max(1, Math.trunc(block.level ?? 1))) : 0;
    out.push({ kind: block.kind, start: span.start, end: span.end, page: block.page ?? null, level });
    floor = span.end;
  }
  if (out.length === 0) {
    // A parser that found text but no structure: the whole text is one paragraph.
    const span = trimSpan(doc.text, { start: 0, end: length });
    if (span.end > span.start) out.push({ kind: "paragraph", ...span, page: null, level: 0 });
  }
  return out;
}
