/**
 * The in-memory indexes of all corpora in use: built from the decrypted chunk records
 * on first use, updated as documents are indexed or deleted, dropped with the corpus.
 */
import * as lancedb from "@lancedb/lancedb";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import { openContent, openVector } from "../chunk-codec.js";
import { CorpusIndex, type IndexedChunk } from "./corpus-index.js";

export class CorpusIndexes {
  private connection: Promise<lancedb.Connection> | undefined;
  private readonly indexes = new Map<string, Promise<CorpusIndex>>();

  constructor(
    private readonly chunks: ChunkStore,
    private readonly keyring: CorpusKeyring,
  ) {}

  private db(): Promise<lancedb.Connection> {
    this.connection ??= lancedb.connect("memory://");
    return this.connection;
  }

  /** Whether the corpus's index is in memory (built or being built). */
  isLoaded(corpusId: string): boolean {
    return this.indexes.has(corpusId);
  }

  /** The corpus's index, built from its encrypted chunks the first time. */
  get(corpusId: string): Promise<CorpusIndex> {
    let index = this.indexes.get(corpusId);
    if (!index) {
      index = (async () => {
        const cipher = await this.keyring.cipher(corpusId);
        const store = this.chunks;
        function* decrypted(): Generator<IndexedChunk> {
          for (const sealed of store.iterateCorpus(corpusId)) {
            yield { id: sealed.id, documentId: sealed.documentId, text: openContent(cipher, sealed.id, sealed.content).text, vector: openVector(cipher, sealed.id, sealed.vector) };
          }
        }
        return CorpusIndex.open(await this.db(), corpusId, decrypted());
      })();
      index.catch(() => this.indexes.delete(corpusId));
      this.indexes.set(corpusId, index);
    }
    return index;
  }

  /** Adds a newly indexed document's chunks, if the corpus's index is in memory. */
  async addChunks(corpusId: string, chunks: IndexedChunk[]): Promise<void> {
    const index = this.indexes.get(corpusId);
    if (index) await (await index).add(chunks);
  }

  async removeDocument(corpusId: string, documentId: string): Promise<void> {
    const index = this.indexes.get(corpusId);
    if (index) await (await index).removeDocument(documentId);
  }

  async drop(corpusId: string): Promise<void> {
    const index = this.indexes.get(corpusId);
    this.indexes.delete(corpusId);
    if (index) await (await index.catch(() => null))?.close();
  }

  async close(): Promise<void> {
    for (const id of [...this.indexes.keys()]) await this.drop(id);
    if (this.connection) (await this.connection).close();
  }
}
