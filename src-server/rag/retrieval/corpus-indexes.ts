/**
 * The in-memory indexes of all corpora in use: built from the decrypted chunk records
 * on first use, updated as documents are indexed or deleted, dropped with the corpus.
 */
import * as lancedb from "@lancedb/lancedb";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import { openContent, openTerms, openVector, sealTerms } from "../chunk-codec.js";
import { CorpusIndex, type IndexedChunk } from "./corpus-index.js";
import { analyzeChunk } from "./keyword-analysis.js";

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

  /**
   * The corpus's index, built from its encrypted chunks the first time: their vectors and
   * stored keyword analyses are decrypted; a chunk without an analysis of the current
   * version is analysed from its text, and the analysis stored for next time.
   */
  get(corpusId: string): Promise<CorpusIndex> {
    let index = this.indexes.get(corpusId);
    if (!index) {
      index = (async () => {
        const cipher = await this.keyring.cipher(corpusId);
        const store = this.chunks;
        const analysed: { id: string; terms: Buffer }[] = [];
        function* decrypted(): Generator<IndexedChunk> {
          for (const source of store.iterateIndexSources(corpusId)) {
            const vector = openVector(cipher, source.id, source.vector);
            const stored = source.terms && openTerms(cipher, source.id, source.terms);
            if (stored) {
              yield { id: source.id, documentId: source.documentId, vector, ...stored };
              continue;
            }
            const content = source.content ?? store.contentOf(source.id);
            if (!content) continue; // deleted meanwhile
            const fresh = analyzeChunk(openContent(cipher, source.id, content).text);
            analysed.push({ id: source.id, terms: sealTerms(cipher, source.id, fresh) });
            yield { id: source.id, documentId: source.documentId, vector, ...fresh };
          }
        }
        const opened = await CorpusIndex.open(await this.db(), corpusId, decrypted());
        if (analysed.length > 0) store.setTerms(analysed);
        return opened;
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
