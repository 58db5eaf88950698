/** The contract every chunker keeps, checked in one place after chunking. */
import type { ParsedDocument } from "../ingest/types.js";
import { DocumentOutline } from "./document-outline.js";
import type { ChunkDraft } from "./types.js";

/** What `assertChunkInvariants` may relax. */
export interface InvariantOptions {
  /** Hard token limit per chunk. */
  maxTokens: number;
  /** Consecutive chunks may share text (fixed windows). */
  allowOverlap: boolean;
}

/**
 * Throws unless `chunks` is a valid chunking of `doc`: indexes 0..n-1; each chunk's text
 * is exactly `doc.text.slice(start, end)` and not blank; `tokenCount <= maxTokens`;
 * chunks in document order, disjoint unless `allowOverlap`; page ranges both null or
 * ordered, page breaks inside the text and the range (from offset 0, none without pages); and every non-whitespace character of every block inside some chunk.
 * Cost: one pass over the blocks and chunks, no tokenizer calls.
 * @throws Error naming the first violation (a chunker bug, never bad input).
 */
export function assertChunkInvariants(doc: ParsedDocument, chunks: readonly ChunkDraft[], options: InvariantOptions): void {
  const fail = (chunk: ChunkDraft | null, message: string): never => {
    throw new Error(`chunking invariant violated${chunk === null ? "" : ` at chunk ${chunk.index}`}: ${message}`);
  };
  let prev: ChunkDraft | null = null;
  chunks.forEach((chunk, i) => {
    if (chunk.index !== i) fail(chunk, `index ${chunk.index} at position ${i}`);
    if (!(chunk.start >= 0 && chunk.start < chunk.end && chunk.end <= doc.text.length)) fail(chunk, `bad range [${chunk.start}, ${chunk.end})`);
    if (chunk.text !== doc.text.slice(chunk.start, chunk.end)) fail(chunk, "text is not doc.text.slice(start, end)");
    if (!/\S/u.test(chunk.text)) fail(chunk, "blank chunk");
    if (!(chunk.tokenCount >= 0 && chunk.tokenCount <= options.maxTokens)) fail(chunk, `tokenCount ${chunk.tokenCount} exceeds ${options.maxTokens}`);
    if ((chunk.pageStart === null) !== (chunk.pageEnd === null) || (chunk.pageStart ?? 0) > (chunk.pageEnd ?? 0)) {
      fail(chunk, `bad page range ${chunk.pageStart}–${chunk.pageEnd}`);
    }
    checkPageBreaks(chunk, (message) => fail(chunk, message));
    if (prev !== null) {
      if (chunk.start <= prev.start) fail(chunk, "out of document order");
      if (!options.allowOverlap && chunk.start < prev.end) fail(chunk, "overlaps the previous chunk");
    }
    prev = chunk;
  });
  assertCovered(doc, chunks, (message) => fail(null, message));
}

/** Page breaks: none without pages; else from offset 0, offsets rising inside the text, pages inside the range. */
function checkPageBreaks(chunk: ChunkDraft, fail: (message: string) => never): void {
  const breaks = chunk.pageBreaks;
  if (chunk.pageStart === null) {
    if (breaks.length > 0) fail("page breaks in a chunk without pages");
    return;
  }
  if (breaks[0]?.[0] !== 0) fail("page breaks do not start at offset 0");
  breaks.forEach(([offset, page], i) => {
    if (i > 0 && !(offset > breaks[i - 1]![0] && offset < chunk.text.length)) fail(`page break at ${offset} out of order or outside the text`);
    if (page < chunk.pageStart! || page > chunk.pageEnd!) fail(`page break to page ${page} outside ${chunk.pageStart}–${chunk.pageEnd}`);
  });
}

/** Every non-whitespace character of every block lies in some chunk (chunks sorted by start). */
function assertCovered(doc: ParsedDocument, chunks: readonly ChunkDraft[], fail: (message: string) => never): void {
  let next = 0;
  let coveredTo = 0;
  for (const block of new DocumentOutline(doc).blocks) {
    let pos = block.start;
    while (pos < block.end) {
      while (next < chunks.length && chunks[next]!.start <= pos) coveredTo = Math.max(coveredTo, chunks[next++]!.end);
      if (coveredTo > pos) {
        pos = coveredTo;
        continue;
      }
      const gapEnd = Math.min(block.end, chunks[next]?.start ?? block.end);
      if (/\S/u.test(doc.text.slice(pos, gapEnd))) fail(`text at [${pos}, ${gapEnd}) is in no chunk`);
      pos = gapEnd;
    }
  }
}
