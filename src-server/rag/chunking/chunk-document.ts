/** The entry point of chunking: one parsed document in, its chunks out, whatever the strategy. */
import type { ParsedDocument } from "../ingest/types.js";
import { assertChunkInvariants } from "./chunk-invariants.js";
import { fixedChunker } from "./fixed-chunker.js";
import { paragraphChunker } from "./paragraph-chunker.js";
import { semanticChunker } from "./semantic-chunker.js";
import type { ChunkDraft, Chunker, ChunkerDeps, ChunkingStrategy, ChunkOptions } from "./types.js";

const CHUNKERS: Readonly<Record<ChunkingStrategy, Chunker>> = {
  semantic: semanticChunker,
  fixed: fixedChunker,
  paragraph: paragraphChunker,
};

/**
 * Chunks `doc` with `options.strategy` and checks the result: chunks in document order,
 * indexed 0..n-1, each `text === doc.text.slice(start, end)`, none blank, each with
 * `tokenCount <= options.maxTokens` counted by `deps.countTokens`, heading path and page
 * range from the document's blocks, and all block text covered (fixed windows overlap;
 * the others do not). An empty or blank document gives no chunks.
 * @throws RangeError for an unknown strategy or impossible sizes (see `createChunkContext`).
 * @throws Error when `deps.embed` fails or misbehaves (semantic), or if a chunker broke the contract.
 */
export async function chunkDocument(doc: ParsedDocument, options: ChunkOptions, deps: ChunkerDeps): Promise<ChunkDraft[]> {
  const chunker = Object.hasOwn(CHUNKERS, options.strategy) ? CHUNKERS[options.strategy] : undefined;
  if (chunker === undefined) throw new RangeError(`unknown chunking strategy '${String(options.strategy)}'`);
  const chunks = await chunker(doc, options, deps);
  assertChunkInvariants(doc, chunks, { maxTokens: options.maxTokens, allowOverlap: options.strategy === "fixed" });
  return chunks;
}
