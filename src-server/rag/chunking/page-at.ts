/** The page of a position inside a chunk, from the page breaks recorded when it was chunked. */
import type { PageBreak } from "./types.js";

/** What `pageAt` needs of a chunk: its page range and, when recorded, its page breaks. */
export interface PagedText {
  pageStart: number | null;
  pageEnd: number | null;
  /** Absent for chunks stored before page breaks were recorded. */
  pageBreaks?: readonly PageBreak[] | undefined;
}

/**
 * The 1-based page that character `offset` of the chunk's text is on; null for formats
 * without pages. Chunks stored before page breaks were recorded answer their first page
 * (`pageStart`) wherever the offset is: the best that is known of them.
 */
export function pageAt(chunk: PagedText, offset: number): number | null {
  const breaks = chunk.pageBreaks;
  if (!breaks || breaks.length === 0) return chunk.pageStart;
  let lo = 0;
  let hi = breaks.length - 1;
  // The last break at or before `offset` (the first one when the offset precedes them all).
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (breaks[mid]![0] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return breaks[lo]![1];
}
