/**
 * Deletion, tombstones and retention (spec: "embeddings wiped from primary storage, kept
 * as tombstones in cold storage until the retention window expires").
 *
 * Burying a corpus or a document, in an order that never loses data on a crash:
 *   1. the catalogue records the deletion (`moving`); the rows stay in primary;
 *   2. the sealed originals, chunk rows (ciphertext and encrypted vectors as stored) and
 *      a manifest of the deleted records (sealed under the corpus key) are copied to the
 *      cold store, durably;
 *   3. one primary transaction deletes the rows and marks the tombstone `retained`,
 *      refusing if a row appeared that was not copied (then 2 runs again);
 *   4. the primary originals are removed and the freed pages reclaimed.
 * A crash anywhere leaves either the rows in primary (the deletion runs again from 2 at
 * the next start or purge; copying is idempotent) or the tombstone retained.
 *
 * The purge destroys expired tombstones: it destroys the corpus's wrapped data key first
 * (crypto-shredding: any copy of the ciphertext becomes unreadable) once no tombstone of
 * a deleted corpus needs it, then the cold rows and files, and reports what it destroyed.
 * Replicas sharing the database may purge at the same moment: each expired tombstone is
 * destroyed and reported by the one whose purge moved it to `purging` (a conditional
 * update in the catalogue), each key by the one whose delete removed it.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { Clock } from "../domain/clock.js";
import { secondsOf } from "../domain/clock.js";
import type { Principal } from "../domain/scopes.js";
import { ServiceError, conflict, notFound } from "../errors.js";
import type { CorpusKeyring } from "../security/corpus-keyring.js";
import type { BlobStorage } from "../store/blob-store.js";
import type { ChunkStore, SealedChunk } from "../store/chunk-store.js";
import type { ColdStore } from "../store/cold-store.js";
import type { CorpusRecord, CorpusStore } from "../store/corpus-store.js";
import type { DocumentRecord, DocumentStore } from "../store/document-store.js";
import type { Page, PageRequest } from "../store/pagination.js";
import type { CopiedRows, TombstoneCatalog, TombstoneCounts, TombstoneRecord } from "../store/tombstone-catalog.js";

/** Chunk bytes written to the cold store per call (one durable commit each). */
const BATCH_BYTES = 8 * 1024 * 1024;
/** Originals copied to the cold store at once (their fsyncs overlap). */
const BLOB_CONCURRENCY = 4;
/** Copies attempted when the indexer keeps adding chunks to what is being deleted. */
const MAX_ATTEMPTS = 5;

export interface TombstoneServiceDeps {
  catalog: TombstoneCatalog;
  cold: ColdStore;
  corpora: CorpusStore;
  documents: DocumentStore;
  chunks: ChunkStore;
  /** Stored originals exactly as on disk (sealed): moved as they are, never opened. */
  blobs: BlobStorage;
  keyring: CorpusKeyring;
  clock: Clock;
  /** Told what every purge destroyed (scheduled, on request, or right after a deletion with retention 0). */
  onPurged?: (result: PurgeResult) => void;
}

export interface PurgeResult {
  /** Unix seconds, by the service's clock. */
  purgedAt: number;
  /** Tombstones destroyed (cold rows and files), as they were listed before. */
  tombstones: TombstoneRecord[];
  /** Deleted corpora whose wrapped data key was destroyed: their ciphertext is unreadable everywhere now. */
  keysDestroyed: string[];
}

type Copied = CopiedRows & { counts: TombstoneCounts };

export class TombstoneService {
  private readonly locks = new Map<string, Promise<unknown>>();
  private purging: Promise<PurgeResult> | undefined;

  constructor(private readonly deps: TombstoneServiceDeps) {}

  /**
   * Moves the corpus's documents, chunks and originals to cold storage and wipes them from
   * primary. Idempotent. With retention 0 the tombstone is destroyed at once (`purged`).
   */
  buryCorpus(corpus: CorpusRecord): Promise<TombstoneRecord> {
    return this.buryAndPurgeIfDue(corpus.id, null);
  }

  /** The same for one document of a corpus. Idempotent. */
  buryDocument(corpusId: string, documentId: string): Promise<TombstoneRecord> {
    return this.buryAndPurgeIfDue(corpusId, documentId);
  }

  /**
   * Steps 1–2 of burying a corpus only: the tombstone is `moving`, the cold store holds a
   * full copy, primary still holds everything. What a crash right before the primary
   * deletion leaves behind; `recover()` (run at start) finishes it. For tests and tools.
   */
  copyCorpus(corpus: CorpusRecord): Promise<TombstoneRecord> {
    return this.bury(corpus.id, null, false);
  }

  /**
   * Finishes deletions a crash or a failure interrupted (tombstones still `moving`), and
   * destructions a crash interrupted (`purging`). Run at start; the purge runs it too.
   */
  async recover(): Promise<{ completed: string[]; destroyed: string[] }> {
    const completed: string[] = [];
    for (const t of await this.deps.catalog.withStatus("moving")) {
      // Decided under the corpus's lock: a deletion in flight may finish it meanwhile.
      const rowsThere = await this.exclusive(t.corpusId, async () => {
        if ((await this.deps.catalog.get(t.id))?.status !== "moving") return false;
        const corpusThere = (await this.deps.corpora.getAny(t.corpusId)) !== undefined;
        if (corpusThere && (t.documentId === null || (await this.deps.documents.getById(t.documentId)) !== undefined)) return true;
        // The rows left primary another way (their corpus was deleted with its workspace): keep what was copied.
        const held = await this.deps.cold.stat(t.id);
        await this.deps.catalog.markRetained(t.id, { documents: t.documents, chunks: held.chunks, bytes: held.bytes });
        return false;
      });
      if (rowsThere) await this.bury(t.corpusId, t.documentId, true);
      completed.push(t.id);
    }
    const destroyed = (await this.destroyPurging()).map((t) => t.id);
    return { completed, destroyed };
  }

  /**
   * Destroys every tombstone whose retention ended (by the service clock) and the wrapped
   * keys of deleted corpora that nothing retained needs any more. Concurrent calls share
   * one run. The caller audits the result.
   */
  purge(): Promise<PurgeResult> {
    this.purging ??= this.runPurge().finally(() => (this.purging = undefined));
    return this.purging;
  }

  /** Resolves once no deletion or purge is running (before closing the stores). */
  async idle(): Promise<void> {
    while (this.purging || this.locks.size > 0) await Promise.allSettled([this.purging, ...this.locks.values()]);
  }

  /** Tombstones with their expiry: every workspace's with `workspaces.manage`, the caller's own with `audit.read`. */
  async list(principal: Principal, page: PageRequest, workspaceId?: string): Promise<Page<TombstoneRecord>> {
    const everyWorkspace = principal.scopes.has("workspaces.manage");
    if (!everyWorkspace && !principal.scopes.has("audit.read")) {
      throw new ServiceError("permission", "listing tombstones needs the 'workspaces.manage' scope (every workspace) or 'audit.read' (this workspace)", { code: "insufficient_scope" });
    }
    if (workspaceId !== undefined && !everyWorkspace && workspaceId !== principal.workspaceId) {
      throw notFound(`no workspace '${workspaceId}'`, "workspace_not_found", "workspace_id");
    }
    return this.deps.catalog.list(workspaceId ?? (everyWorkspace ? null : principal.workspaceId), page);
  }

  /** `purge()` on an operator's request (`workspaces.manage`: it acts on every workspace). */
  purgeNow(principal: Principal): Promise<PurgeResult> {
    if (!principal.scopes.has("workspaces.manage")) {
      throw new ServiceError("permission", "purging tombstones needs the 'workspaces.manage' scope", { code: "insufficient_scope" });
    }
    return this.purge();
  }

  private async buryAndPurgeIfDue(corpusId: string, documentId: string | null): Promise<TombstoneRecord> {
    const tombstone = await this.bury(corpusId, documentId, true);
    if (tombstone.status !== "retained" || tombstone.expiresAt > secondsOf(this.deps.clock)) return tombstone;
    await this.purge();
    return (await this.deps.catalog.get(tombstone.id)) ?? { ...tombstone, status: "purged" };
  }

  private async runPurge(): Promise<PurgeResult> {
    const now = secondsOf(this.deps.clock);
    await this.recover();
    const expired = await this.deps.catalog.expired(now);
    // Keys first: from this commit on, every copy of the corpus's ciphertext is unreadable.
    // Of the expired tombstones, this purge destroys (and reports) those it moved to `purging`:
    // another replica purging at the same moment gets the others.
    const started = await this.deps.catalog.startPurge(
      expired.map((t) => t.id),
      now,
    );
    const { keysDestroyed } = started;
    for (const corpusId of keysDestroyed) this.deps.keyring.forget(corpusId);
    const won = new Set(started.purging);
    const tombstones = await this.destroy(expired.filter((t) => won.has(t.id)).map((t) => ({ ...t, status: "purging" as const })));
    const result = { purgedAt: now, tombstones, keysDestroyed };
    if (keysDestroyed.length > 0 || tombstones.length > 0) {
      await this.deps.catalog.reclaimSpace();
      this.deps.onPurged?.(result);
    }
    return result;
  }

  /** Destroys the cold contents of tombstones left purging (a purge a stop interrupted), then forgets them. */
  private async destroyPurging(): Promise<TombstoneRecord[]> {
    return this.destroy(await this.deps.catalog.withStatus("purging"));
  }

  /** Destroys the cold contents of `tombstones` (marked purging), then forgets them. */
  private async destroy(tombstones: TombstoneRecord[]): Promise<TombstoneRecord[]> {
    for (const t of tombstones) {
      await this.deps.cold.destroy(t.id);
      await this.deps.catalog.remove(t.id);
    }
    if (tombstones.length > 0) await this.deps.cold.compact();
    return tombstones;
  }

  /** One corpus at a time: a document deletion and its corpus's deletion never interleave. */
  private async exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(work);
    this.locks.set(key, current);
    try {
      return await current;
    } finally {
      if (this.locks.get(key) === current) this.locks.delete(key);
    }
  }

  private bury(corpusId: string, documentId: string | null, commit: boolean): Promise<TombstoneRecord> {
    const id = documentId ?? corpusId;
    return this.exclusive(corpusId, async () => {
      const existing = await this.deps.catalog.get(id);
      if (existing && existing.status !== "moving") return existing;
      // Read again under the lock: what the caller saw may have changed meanwhile.
      const corpus = await this.deps.corpora.getAny(corpusId);
      const document = documentId === null ? null : await this.deps.documents.getById(documentId);
      if (!corpus) throw notFound(`No corpus '${corpusId}'`, "corpus_not_found", "corpus_id");
      if (document === undefined || (document && document.corpusId !== corpusId)) throw notFound(`No document '${documentId}' in corpus '${corpusId}'`, "document_not_found", "document_id");
      let tombstone = existing;
      if (!tombstone) {
        const deletedAt = secondsOf(this.deps.clock);
        await this.deps.catalog.begin({ id, kind: document ? "document" : "corpus", workspaceId: corpus.workspaceId, corpusId, documentId, deletedAt, expiresAt: deletedAt + corpus.retentionDays * 86400 });
        tombstone = (await this.deps.catalog.get(id))!;
      } else {
        // An interrupted copy: start it clean (primary still holds every row).
        await this.deps.cold.destroy(id);
      }
      let buried: ReadonlySet<string> = new Set();
      for (let attempt = 1; ; attempt++) {
        const copied = await this.copy(tombstone, corpus, document);
        buried = copied.documentIds;
        if (!commit) return tombstone;
        const committed = document
          ? await this.deps.catalog.commitDocumentDeletion(id, corpusId, copied, copied.counts)
          : await this.deps.catalog.commitCorpusDeletion(id, copied, copied.counts, tombstone.expiresAt);
        if (committed) break;
        if (attempt === MAX_ATTEMPTS) throw conflict(`'${id}' kept changing while it was being deleted (indexing); retry`, "deletion_conflict");
        await this.deps.cold.destroy(id);
      }
      // Primary rows are gone; a crash before the next lines leaves only orphaned originals, swept at start.
      // A document's tombstone holds the documents that came out of it too (an e-mail's attachments).
      if (document) for (const id of buried) await this.deps.blobs.delete(corpusId, id);
      else await this.deps.blobs.deleteCorpus(corpusId);
      await this.deps.catalog.reclaimSpace();
      return (await this.deps.catalog.get(id))!;
    });
  }

  /** Step 2: sealed originals, then chunk rows, then the sealed manifest, into the cold store. */
  private async copy(tombstone: TombstoneRecord, corpus: CorpusRecord, document: DocumentRecord | null): Promise<Copied> {
    const { cold, blobs, chunks } = this.deps;
    // A document goes with every document that came out of it (an e-mail's attachments, a mailbox's messages).
    const documents = document ? [document, ...(await this.deps.documents.descendantsOf(document.id))] : await this.deps.documents.ofCorpus(corpus.id);
    let bytes = 0;
    let next = 0;
    const copyBlobs = async () => {
      while (next < documents.length) {
        const d = documents[next++]!;
        const source = await blobs.openRead(corpus.id, d.id);
        if (!source) continue;
        const written = await cold.putBlob(tombstone.id, d.id, source);
        bytes += written;
      }
    };
    await Promise.all(Array.from({ length: Math.min(BLOB_CONCURRENCY, documents.length) }, copyBlobs));
    const chunkIds = new Set<string>();
    let batch: SealedChunk[] = [];
    let batchBytes = 0;
    async function* chunksToCopy(): AsyncGenerator<SealedChunk> {
      if (!document) yield* chunks.iterateCorpus(corpus.id);
      else for (const d of documents) yield* await chunks.ofDocument(d.id);
    }
    for await (const chunk of chunksToCopy()) {
      chunkIds.add(chunk.id);
      bytes += chunk.content.length + chunk.vector.length;
      batchBytes += chunk.content.length + chunk.vector.length;
      batch.push(chunk);
      if (batchBytes >= BATCH_BYTES) {
        await cold.putChunks(tombstone.id, batch);
        batch = [];
        batchBytes = 0;
        // Let requests in between batches: a local cold store resolves at once.
        await yieldToLoop();
      }
    }
    if (batch.length > 0) await cold.putChunks(tombstone.id, batch);
    // Names, file names and metadata go cold sealed: once the key is destroyed, they are unreadable too.
    const cipher = await this.deps.keyring.cipher(corpus.id);
    const manifest = cipher.seal(Buffer.from(JSON.stringify({ version: 1, kind: tombstone.kind, corpus, documents }), "utf8"), `tombstone:${tombstone.id}`);
    await cold.putManifest(tombstone.id, manifest);
    bytes += manifest.length;
    return { documentIds: new Set(documents.map((d) => d.id)), chunkIds, counts: { documents: documents.length, chunks: chunkIds.size, bytes } };
  }
}
