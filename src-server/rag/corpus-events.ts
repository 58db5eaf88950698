/**
 * Indexing progress, published per corpus for the SSE progress stream: subscribers see
 * what happens while they listen (a snapshot comes from the stores), on any replica.
 */
import { EventEmitter } from "node:events";
import type { DocumentStatus } from "../store/document-store.js";
import type { MessageBus } from "../store/message-bus.js";

/** Where an indexed document's time went, in milliseconds (embedding during semantic chunking counts as embed). */
export interface StageTimings {
  parseMs: number;
  chunkMs: number;
  embedMs: number;
  /** Tokens evaluated by the embedding model for this document (its share of a group's). */
  embedTokens: number;
  storeMs: number;
  pages: number | null;
}

export type CorpusEvent =
  | { type: "document.status"; documentId: string; status: DocumentStatus; error: { code: string; message: string } | null; chunkCount: number; timings?: StageTimings }
  /** `ocr`: the parse's progress counts pages read by OCR (of the pages that need it). */
  | { type: "document.progress"; documentId: string; stage: "parsing" | "chunking" | "embedding" | "storing"; done: number; total: number; ocr?: boolean }
  | { type: "corpus.deleted" };

const CHANNEL = "pustaka_corpus_events";

export class CorpusEvents {
  private readonly emitter = new EventEmitter();
  private readonly unsubscribe: (() => void) | null = null;

  /**
   * With a bus (replicas sharing a store), events published here also reach the other
   * replicas' subscribers, and theirs reach this one's: a progress bar connected to any
   * replica sees a document indexed by any other. Delivery is best effort (the stores hold
   * the truth a client reads on reconnecting).
   */
  constructor(private readonly shared: { bus: MessageBus; origin: string; onError?: (error: unknown) => void } | null = null) {
    // Many progress bars may watch one corpus.
    this.emitter.setMaxListeners(0);
    if (shared) {
      this.unsubscribe = shared.bus.subscribe(CHANNEL, (payload) => {
        try {
          const message = JSON.parse(payload) as { origin: string; corpusId: string; event: CorpusEvent };
          if (message.origin !== shared.origin) this.emitter.emit(message.corpusId, message.event);
        } catch (error) {
          shared.onError?.(error);
        }
      });
    }
  }

  publish(corpusId: string, event: CorpusEvent): void {
    this.emitter.emit(corpusId, event);
    if (this.shared) {
      const { bus, origin, onError } = this.shared;
      bus.publish(CHANNEL, JSON.stringify({ origin, corpusId, event })).catch((error: unknown) => onError?.(error));
    }
  }

  close(): void {
    this.unsubscribe?.();
  }

  /** Calls `listener` for every event of the corpus until the returned function is called. */
  subscribe(corpusId: string, listener: (event: CorpusEvent) => void): () => void {
    this.emitter.on(corpusId, listener);
    return () => this.emitter.off(corpusId, listener);
  }
}
