/**
 * The in-memory indexes of all corpora in use: opened from the corpus's sealed index
 * snapshot when it holds exactly the corpus's chunks, otherwise built from the decrypted
 * chunk records; updated as documents are indexed or deleted, dropped with the corpus.
 * A large corpus's snapshot is rewritten a while after its index last changed, and when
 * the server stops; a document's deletion deletes the snapshot at once (it held the
 * document's vectors and terms).
 */
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { DataCipher } from "../../security/data-cipher.js";
import type { ChunkStore, IndexSource } from "../../store/chunk-store.js";
import type { SnapshotFiles } from "../../store/snapshot-files.js";
import { openContent, openTerms, openVector, sealTerms } from "../chunk-codec.js";
import { CorpusIndex, type IndexedChunk } from "./corpus-index.js";
import { fingerprintIds, openIndexSnapshot, writeIndexSnapshot } from "./index-snapshot.js";
import { withContext } from "../chunking/passage-context.js";
import { analyzeChunk, KEYWORD_ANALYSIS_VERSION } from "./keyword-analysis.js";
import { lancedb, type LanceDb } from "./lance-modules.js";

/** What happened to a corpus's index, for the log. */
export type CorpusIndexEvent =
  /** From a snapshot: `added` and `removed` chunks brought it up to date with the store. */
  | { type: "opened"; corpusId: string; from: "snapshot"; chunks: number; ms: number; added: number; removed: number }
  | { type: "opened"; corpusId: string; from: "chunks"; chunks: number; ms: number }
  /** A snapshot was not used: unreadable, tampered with or of another keyword analysis. It is deleted. */
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

/** A keyword analysis made for a chunk stored without one, sealed, to store. */
type AnalysedTerms = { id: string; terms: Buffer };
const DEFAULT_SNAPSHOT_DELAY_MS = 30_000;

export class CorpusIndexes {
  private connection: Promise<LanceDb.Connection> | undefined;
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

  private db(): Promise<LanceDb.Connection> {
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
        const opened = fromSnapshot?.index ?? (await this.build(corpusId, cipher));
        const ms = Math.round(performance.now() - started);
        this.options.onEvent?.(fromSnapshot ? { type: "opened", corpusId, from: "snapshot", chunks: opened.size, ms, added: fromSnapshot.added, removed: fromSnapshot.removed } : { type: "opened", corpusId, from: "chunks", chunks: opened.size, ms });
        // A snapshot used as it was is current; one brought up to date, or none, is (re)written.
        if (fromSnapshot && fromSnapshot.added + fromSnapshot.removed === 0) this.snapshotVersions.set(corpusId, opened.version);
        else this.schedule(corpusId, opened, 0);
        return opened;
      })();
      index.catch(() => this.indexes.delete(corpusId));
      this.indexes.set(corpusId, index);
    }
    return index;
  }

  /**
   * The index from the corpus's snapshot, or null when it has none it can use (one that
   * is unreadable, tampered with or of another keyword analysis is deleted). A snapshot
   * older than the corpus's chunks is brought up to date: chunks stored since are
   * decrypted and added, chunks deleted since removed (and counted in the result).
   */
  private async openSnapshot(corpusId: string, cipher: DataCipher): Promise<{ index: CorpusIndex; added: number; removed: number } | null> {
    const files = this.options.snapshots;
    const reader = await files?.openRead(corpusId);
    if (!files || !reader) return null;
    let reason: string;
    try {
      const snapshot = await openIndexSnapshot(reader, cipher, corpusId);
      if (snapshot.analysisVersion !== KEYWORD_ANALYSIS_VERSION) reason = "made by another keyword analysis";
      else {
        const stored = await this.chunks.idsOfCorpus(corpusId);
        const index = await CorpusIndex.openFromSnapshot(await this.db(), corpusId, snapshot);
        try {
          const changes = snapshot.fingerprint === fingerprintIds(stored) ? { added: 0, removed: 0 } : await this.reconcile(index, stored, cipher);
          index.startVectorIndex();
          return { index, ...changes };
        } catch (error) {
          await index.close().catch(() => undefined);
          throw error;
        }
      }
    } catch (error) {
      reason = (error as Error).message;
    } finally {
      await reader.close();
    }
    this.options.onEvent?.({ type: "snapshot.rejected", corpusId, reason });
    await files.delete(corpusId);
    return null;
  }

  /** Makes `index` hold exactly the chunks `stored` (ascending ids): adds the missing, removes the gone. */
  private async reconcile(index: CorpusIndex, stored: readonly string[], cipher: DataCipher, heldBefore?: readonly string[]): Promise<{ added: number; removed: number }> {
    const held = heldBefore ?? (await index.chunkIds());
    const storedSet = new Set(stored);
    const heldSet = new Set(held);
    const gone = held.filter((id) => !storedSet.has(id));
    const missing = stored.filter((id) => !heldSet.has(id));
    await index.removeChunks(gone);
    let added = 0;
    for (let at = 0; at < missing.length; at += 2000) {
      const analysed: AnalysedTerms[] = [];
      const chunks: IndexedChunk[] = [];
      for await (const chunk of this.decrypt(await this.chunks.indexSourcesOf(missing.slice(at, at + 2000)), cipher, analysed)) chunks.push(chunk);
      await index.add(chunks);
      if (analysed.length > 0) await this.chunks.setTerms(analysed);
      added += chunks.length;
    }
    return { added, removed: gone.length };
  }

  /**
   * Decrypts index sources into chunks to index: their vectors and stored keyword
   * analyses; a chunk without an analysis of the current version is analysed from its
   * text, and the analysis sealed into `analysed`, to store.
   */
  private async *decrypt(sources: AsyncIterable<IndexSource> | Iterable<IndexSource>, cipher: DataCipher, analysed: AnalysedTerms[]): AsyncGenerator<IndexedChunk> {
    for await (const source of sources) {
      const vector = openVector(cipher, source.id, source.vector);
      const stored = source.terms && openTerms(cipher, source.id, source.terms);
      if (stored) {
        yield { id: source.id, documentId: source.documentId, vector, ...stored };
        continue;
      }
      const content = source.content ?? (await this.chunks.contentOf(source.id));
      if (!content) continue; // deleted meanwhile
      const opened = openContent(cipher, source.id, content);
      const fresh = analyzeChunk(withContext(opened.context, opened.text));
      analysed.push({ id: source.id, terms: sealTerms(cipher, source.id, fresh) });
      yield { id: source.id, documentId: source.documentId, vector, ...fresh };
    }
  }

  /** The index built from the corpus's encrypted chunks, read from the store a page at a time. */
  private async build(corpusId: string, cipher: DataCipher): Promise<CorpusIndex> {
    const analysed: AnalysedTerms[] = [];
    const opened = await CorpusIndex.open(await this.db(), corpusId, this.decrypt(this.chunks.iterateIndexSources(corpusId), cipher, analysed));
    if (analysed.length > 0) await this.chunks.setTerms(analysed);
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

  /**
   * Another replica committed a document: its chunks, read from the store and decrypted,
   * join the index if the corpus's index is in memory here (chunks it holds are skipped;
   * a document deleted meanwhile has none to read). Returns the chunks added.
   */
  async applyIndexed(corpusId: string, documentId: string): Promise<number> {
    const index = this.indexes.get(corpusId);
    if (!index) return 0;
    const opened = await index;
    const cipher = await this.keyring.cipher(corpusId);
    const analysed: AnalysedTerms[] = [];
    const chunks: IndexedChunk[] = [];
    for await (const chunk of this.decrypt(await this.chunks.indexSourcesOf(await this.chunks.idsOfDocument(documentId)), cipher, analysed)) chunks.push(chunk);
    const before = opened.size;
    await opened.add(chunks);
    if (analysed.length > 0) await this.chunks.setTerms(analysed);
    this.schedule(corpusId, opened, this.delayMs);
    return opened.size - before;
  }

  /**
   * Makes a loaded index hold exactly the corpus's stored chunks (after missed changes: a
   * follower that fell behind the feed). Reads what the index holds before what the store
   * holds, so a chunk committed and added meanwhile is never taken for a deleted one.
   */
  async refresh(corpusId: string): Promise<{ added: number; removed: number } | null> {
    const index = this.indexes.get(corpusId);
    if (!index) return null;
    const opened = await index;
    const held = await opened.chunkIds();
    const stored = await this.chunks.idsOfCorpus(corpusId);
    const changes = await this.reconcile(opened, stored, await this.keyring.cipher(corpusId), held);
    if (changes.added + changes.removed > 0) this.schedule(corpusId, opened, this.delayMs);
    return changes;
  }

  /** Ids of the corpora whose index is in memory. */
  loaded(): string[] {
    return [...this.indexes.keys()];
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
  async sweepSnapshots(exists: (corpusId: string) => boolean | Promise<boolean>): Promise<number> {
    const files = this.options.snapshots;
    if (!files) return 0;
    let removed = 0;
    for (const corpusId of await files.list()) {
      if (await exists(corpusId)) continue;
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
