/**
 * Indexing progress, published per corpus for the SSE progress stream. In-process only:
 * subscribers see what happens while they listen (a snapshot comes from the stores).
 */
import { EventEmitter } from "node:events";
import type { DocumentStatus } from "../store/document-store.js";

/** Where an indexed document's time went, in milliseconds (embedding during semantic chunking counts as embed). */
export interface StageTimings {
  parseMs: number;
  chunkMs: number;
  embedMs: number;
  storeMs: number;
  pages: number | null;
}

export type CorpusEvent =
  | { type: "document.status"; documentId: string; status: DocumentStatus; error: { code: string; message: string } | null; chunkCount: number; timings?: StageTimings }
  | { type: "document.progress"; documentId: string; stage: "parsing" | "chunking" | "embedding" | "storing"; done: number; total: number }
  | { type: "corpus.deleted" };

export class CorpusEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Many progress bars may watch one corpus.
    this.emitter.setMaxListeners(0);
  }

  publish(corpusId: string, event: CorpusEvent): void {
    this.emitter.emit(corpusId, event);
  }

  /** Calls `listener` for every event of the corpus until the returned function is called. */
  subscribe(corpusId: string, listener: (event: CorpusEvent) => void): () => void {
    this.emitter.on(corpusId, listener);
    return () => this.emitter.off(corpusId, listener);
  }
}
