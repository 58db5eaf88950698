/**
 * Identifiers of OpenAI's objects over Pustaka's. A vector store IS a corpus: its id is the
 * corpus id with OpenAI's prefix (`corp_X` ↔ `vs_X`, the same 24 characters), so no mapping
 * is stored, every corpus is a vector store and every vector store shows in the workbench.
 * Files (`file-…`) and file batches (`vsfb_…`) are objects of their own.
 */
import { randomBase62 } from "../../ids.js";

const VECTOR_STORE_ID = /^vs_([0-9A-Za-z]{24})$/;
const CORPUS_ID = /^corp_([0-9A-Za-z]{24})$/;

/** The vector store id of a corpus. */
export function vectorStoreIdOf(corpusId: string): string {
  const match = CORPUS_ID.exec(corpusId);
  if (!match) throw new Error(`not a corpus id: ${corpusId}`);
  return `vs_${match[1]}`;
}

/** The corpus id of a vector store id, or null when it is not one (nothing has that id then). */
export function corpusIdOf(vectorStoreId: string): string | null {
  const match = VECTOR_STORE_ID.exec(vectorStoreId);
  return match ? `corp_${match[1]}` : null;
}

/** A new file id, as OpenAI writes them (`file-` and random characters). */
export function newFileId(): string {
  return `file-${randomBase62(24)}`;
}

/** A new file batch id. */
export function newBatchId(): string {
  return `vsfb_${randomBase62(24)}`;
}
