/**
 * The in-memory indexes of all corpora in use: opened from the corpus's sealed index
 * snapshot when it holds exactly the corpus's chunks, otherwise built from the decrypted
 * chunk records; updated as documents are indexed or deleted, dropped with the corpus.
 * A large corpus's snapshot is rewritten a while after its index last changed, and when
 * the server stops; a document's deletion deletes the snapshot at once (it held the
 * document's vectors and terms).
 */
import * as lancedb from "@lancedb/lancedb";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { DataCipher } from "../../security/data-cipher.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import type { SnapshotFiles } from "../../store/snapshot-files.js";
import { openContent, openTerms, openVector, sealTerms } from "../chunk-codec.js";
import { CorpusIndex, type IndexedChunk } from "./corpus-index.js";
import { fingerprintIds, openIndexSnapshot, writeIndexSnapshot } from "./index-snapshot.js";
import { analyzeChunk, KEYWORD_ANALYSIS_VERSION } from "./keyword-analysis.js";

/** What happened to a corpus's index, for the log. */
export type CorpusIndexEvent =
  | { type: "opened"; corpusId: string; from: "snapshot" | "chunks"; chunks: number; ms: number }
  /** A snapshot was not used: stale (other chunks), unreadable or tampered with. It is deleted. */
  | { type: "snapshot.rejected"; corpusId: string; reason: string }
  | { type: "snapshot.written"; corpusId: string; chunks: number; bytes: number; ms: number }
  | { type: "snapshot.failed"; corpusId: string; error: string };

export interface CorpusIndexesOptions {
  /** Where snapshots are kept; without it every open rebuilds from the chunks. */
  snapshots?: SnapshotFiles | undefined;
  /** Corpora with fewer chunks get no snapshot (they rebuild about as fast as they would load). */
  snapshotMinChunks?: number | undefined;
  /** How long after its index last changed a corpus's snapshot is rewritten. */
  snapshotDelayMs?: number | undefined;
  onEvent?: ((event: CorpusIndexEvent) => void) | undefined;
}

const DEFAULT_SNAPSHOT_MIN_CHUNKS = 5000;
const DEFAULT_SNAPSHOT_DELAY_MS = 30_000;

export class CorpusIndexes {
  private connection: Promise<lancedb.Connection> | undefined;
  private readonly indexes = new Map<string, Promise<CorpusIndex>>();
  /** Per corpus: the index version its snapshot on disk holds. */
  private readonly snapshotVersions = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly writes = new Map<string, Promise<void>>();
  private readonly minChunks: number;
  private readonly delayMs: number;

  constructor(
    private readonly chunks: ChunkStore,
    private readonly keyring: CorpusKeyring,
    private readonly options: CorpusIndexesOptions = {},
  ) {
    this.minChunks = options.snapshotMinChunks ?? DEFAULT_SNAPSHOT_MIN_CHUNKS;
    this.delayMs = options.snapshotDelayMs ?? DEFAULT_SNAPSHOT_DELAY_MS;
  }

  private db(): Promise<lancedb.Connection> {
    this.connection ??= lancedb.connect("memory://");
    return this.connection;
  }

  /** Whether the corpus's index is in memory (built or being built). */
  isLoaded(corpusId: string): boolean {
    return this.indexes.has(corpusId);
  }

  /** The corpus's index, opened the first time it is asked for. */
  get(corpusId: string): Promise<CorpusIndex> {
    let index = this.indexes.get(corpusId);
    if (!index) {
      index = (async () => {
        const started = performance.now();
        const cipher = await this.keyring.cipher(corpusId);
        const fromSnapshot = await this.openSnapshot(corpusId, cipher);
        const opened = fromSnapshot ?? (await this.build(corpusId, cipher));
        this.options.onEvent?.({ type: "opened", corpusId, from: fromSnapshot ? "snapshot" : "chunks", chunks: opened.size, ms: Math.round(performance.now() - started) });
        if (fromSnapshot) this.snapshotVersions.set(corpusId, opened.version);
        else this.schedule(corpusId, opened, 0);
        return opened;
      })();
      index.catch(() => this.indexes.delete(corpusId));
      this.indexes.set(corpusId, index);
    }
    return index;
  }

  /**
   * The index from the corpus's snapshot, or null when it has none that holds exactly its
   * chunks (a snapshot that is stale, unreadable or tampered with is deleted).
   */
  private async openSnapshot(corpusId: string, cipher: DataCipher): Promise<CorpusIndex | null> {
    const files = this.options.snapshots;
    const reader = await files?.openRead(corpusId);
    if (!files || !reader) return null;
    let reason: string;
    try {
      const snapshot = await openIndexSnapshot(reader, cipher, corpusId);
      if (snapshot.analysisVersion !== KEYWORD_ANALYSIS_VERSION) reason = "made by another keyword analysis";
      else if (snapshot.fingerprint !== fingerprintIds(this.chunks.iterateIds(corpusId))) reason = "the corpus's chunks changed since";
      else return await CorpusIndex.openFromSnapshot(await this.db(), corpusId, snapshot);
    } catch (error) {
      reason = (error as Error).message;
    } finally {
      await reader.close();
    }
    this.options.onEvent?.({ type: "snapshot.rejected", corpusId, reason });
    await files.delete(corpusId);
    return null;
  }

  /**
   * The index built from the corpus's encrypted chunks: their vectors and stored keyword
   * analyses are decrypted; a chunk without an analysis of the current version is analysed
   * from its text, and the analysis stored for next time.
   */
  private async build(corpusId: string, cipher: DataCipher): Promise<CorpusIndex> {
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
  }

  /** Adds a newly indexed document's chunks, if the corpus's index is in memory. */
  async addChunks(corpusId: string, chunks: IndexedChunk[]): Promise<void> {
    const index = this.indexes.get(corpusId);
    if (!index) return;
    const opened = await index;
    await opened.add(chunks);
    this.schedule(corpusId, opened, this.delayMs);
  }

  /** Removes a deleted document's chunks; the corpus's snapshot, which held them, is deleted. */
  async removeDocument(corpusId: string, documentId: string): Promise<void> {
    const index = this.indexes.get(corpusId);
    const opened = index ? await index : null;
    await opened?.removeDocument(documentId);
    // After the removal: a snapshot being written meanwhile has been committed by now.
    await this.writes.get(corpusId);
    this.snapshotVersions.delete(corpusId);
    await this.options.snapshots?.delete(corpusId);
    if (opened) this.schedule(corpusId, opened, this.delayMs);
  }

  /** Forgets the corpus: its index is dropped from memory and its snapshot deleted. */
  async drop(corpusId: string): Promise<void> {
    const index = this.indexes.get(corpusId);
    this.indexes.delete(corpusId);
    this.cancel(corpusId);
    await this.writes.get(corpusId);
    this.snapshotVersions.delete(corpusId);
    await this.options.snapshots?.delete(corpusId);
    if (index) await (await index.catch(() => null))?.close();
  }

  /**
   * Deletes the snapshots of corpora that no longer exist (a deletion cut off by a stop,
   * a workspace deleted with its corpora). Run at start, before any index is opened.
   */
  async sweepSnapshots(exists: (corpusId: string) => boolean): Promise<number> {
    const files = this.options.snapshots;
    if (!files) return 0;
    let removed = 0;
    for (const corpusId of await files.list()) {
      if (exists(corpusId)) continue;
      await files.delete(corpusId);
      removed++;
    }
    return removed;
  }

  /** Writes the snapshots of corpora changed since theirs was written (the tests' and the stop's flush). */
  async flushSnapshots(): Promise<void> {
    for (const corpusId of [...this.timers.keys()]) {
      this.cancel(corpusId);
      await this.writeSnapshot(corpusId);
    }
    await Promise.all(this.writes.values());
  }

  /** Writes any pending snapshot, then frees every index. */
  async close(): Promise<void> {
    await this.flushSnapshots();
    for (const id of [...this.indexes.keys()]) {
      const index = this.indexes.get(id);
      this.indexes.delete(id);
      if (index) await (await index.catch(() => null))?.close();
    }
    if (this.connection) (await this.connection).close();
  }

  private cancel(corpusId: string): void {
    clearTimeout(this.timers.get(corpusId));
    this.timers.delete(corpusId);
  }

  /** Plans a snapshot write `delayMs` from now (later changes push it back), if the corpus is large enough to get one. */
  private schedule(corpusId: string, index: CorpusIndex, delayMs: number): void {
    if (!this.options.snapshots) return;
    this.cancel(corpusId);
    if (index.size < this.minChunks || this.snapshotVersions.get(corpusId) === index.version) return;
    const timer = setTimeout(() => {
      this.timers.delete(corpusId);
      void this.writeSnapshot(corpusId);
    }, delayMs);
    timer.unref();
    this.timers.set(corpusId, timer);
  }

  /** Writes the corpus's snapshot, unless the one on disk is current; one write per corpus at a time. */
  private writeSnapshot(corpusId: string): Promise<void> {
    const running = this.writes.get(corpusId);
    if (running) return running.then(() => this.writeSnapshot(corpusId));
    const files = this.options.snapshots;
    const index = this.indexes.get(corpusId);
    if (!files || !index) return Promise.resolve();
    const write = (async () => {
      const opened = await index;
      if (opened.size < this.minChunks || this.snapshotVersions.get(corpusId) === opened.version) return;
      // The vector index is built first: both are CPU work, and searches wait for neither.
      await opened.vectorIndexBuilt();
      const started = performance.now();
      const cipher = await this.keyring.cipher(corpusId);
      const writer = await files.create(corpusId);
      let bytes = 0;
      const counted = { write: async (b: Buffer) => ((bytes += b.length), writer.write(b)), commit: () => writer.commit(), abort: () => writer.abort() };
      try {
        let rows = 0;
        const version = await opened.exportSnapshot(async (content) => {
          rows = content.rows;
          await writeIndexSnapshot(counted, cipher, corpusId, content);
          await writer.commit();
        });
        this.snapshotVersions.set(corpusId, version);
        this.options.onEvent?.({ type: "snapshot.written", corpusId, chunks: rows, bytes, ms: Math.round(performance.now() - started) });
      } catch (error) {
        await writer.abort();
        this.options.onEvent?.({ type: "snapshot.failed", corpusId, error: (error as Error).message });
      }
    })()
      .catch((error: unknown) => this.options.onEvent?.({ type: "snapshot.failed", corpusId, error: (error as Error).message }))
      .finally(() => this.writes.delete(corpusId));
    this.writes.set(corpusId, write);
    return write;
  }
}
