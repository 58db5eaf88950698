/** What every chunker starts from: checked options, the document's outline and a token meter. */
import type { ParsedDocument } from "../ingest/types.js";
import { DocumentOutline } from "./document-outline.js";
import { TokenMeter } from "./token-meter.js";
import type { ChunkerDeps, ChunkOptions } from "./types.js";

/** Shared state of one chunking run. */
export interface ChunkContext {
  readonly doc: ParsedDocument;
  readonly outline: DocumentOutline;
  readonly meter: TokenMeter;
  readonly options: ChunkOptions;
}

/**
 * Validates `options` and prepares the outline and token meter for `doc`.
 * @throws RangeError when sizes are not positive integers, `targetTokens > maxTokens`,
 *   `overlapTokens` is negative, or the tokenizer's per-call overhead leaves no room for text.
 */
export function createChunkContext(doc: ParsedDocument, options: ChunkOptions, deps: ChunkerDeps): ChunkContext {
  const { maxTokens, targetTokens, overlapTokens } = options;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new RangeError(`maxTokens must be a positive integer, got ${maxTokens}`);
  if (!Number.isInteger(targetTokens) || targetTokens < 1 || targetTokens > maxTokens) {
    throw new RangeError(`targetTokens must be an integer from 1 to maxTokens (${maxTokens}), got ${targetTokens}`);
  }
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0) throw new RangeError(`overlapTokens must be a non-negative integer, got ${overlapTokens}`);
  const meter = new TokenMeter((text) => deps.countTokens(text));
  if (meter.overhead >= maxTokens) throw new RangeError(`maxTokens ${maxTokens} leaves no room for text: the tokenizer adds ${meter.overhead} tokens to every input`);
  return { doc, outline: new DocumentOutline(doc), meter, options };
}
