/**
 * The tombstone catalogue in the primary database (migration 008): which deletions are
 * under way, retained or being destroyed, with their expiry. Committing a deletion here
 * deletes the primary rows and marks the tombstone retained in one transaction, and
 * only when every row being deleted was copied to cold storage first. Starting a purge
 * destroys wrapped corpus keys in the same transaction that marks tombstones purging.
 */
import type { Database } from "./database.js";
import { readPage, type Page, type PageRequest } from "./pagination.js";
import { reclaimSpace, type ReclaimResult } from "./space-reclaim.js";

export type TombstoneKind = "corpus" | "document";
/** As stored: `moving`, `retained`, `purging`; `purged` only in results (a destroyed tombstone is no longer stored). */
export type TombstoneStatus = "moving" | "retained" | "purging" | "purged";

export interface TombstoneRecord {
  /** The deleted corpus's or document's id. */
  id: string;
  kind: TombstoneKind;
  workspaceId: string;
  corpusId: string;
  documentId: string | null;
  status: TombstoneStatus;
  documents: number;
  chunks: number;
  bytes: number;
  /** Unix seconds. */
  deletedAt: number;
  /** Unix seconds; the purge destroys the tombstone from then on. */
  expiresAt: number;
}

export type NewTombstone = Pick<TombstoneRecord, "id" | "kind" | "workspaceId" | "corpusId" | "documentId" | "deletedAt" | "expiresAt">;
export type TombstoneCounts = Pick<TombstoneRecord, "documents" | "chunks" | "bytes">;

/** Ids of what was copied to cold storage: the primary deletion refuses to drop anything else. */
export interface CopiedRows {
  documentIds: ReadonlySet<string>;
  chunkIds: ReadonlySet<string>;
}

interface TombstoneRow {
  id: string;
  kind: string;
  workspace_id: string;
  corpus_id: string;
  document_id: string | null;
  status: string;
  documents: number;
  chunks: number;
  bytes: number;
  created_at: number;
  expires_at: number;
}

const toRecord = (r: TombstoneRow): TombstoneRecord => ({
  id: r.id,
  kind: r.kind as TombstoneKind,
  workspaceId: r.workspace_id,
  corpusId: r.corpus_id,
  documentId: r.document_id,
  status: r.status as TombstoneStatus,
  documents: r.documents,
  chunks: r.chunks,
  bytes: r.bytes,
  deletedAt: r.created_at,
  expiresAt: r.expires_at,
});

export class TombstoneCatalog {
  constructor(private readonly db: Database) {}

  /** Records a deletion about to start (`moving`); the primary rows stay until `commit…`. */
  begin(t: NewTombstone): void {
    this.db
      .prepare("INSERT INTO tombstones (id, kind, workspace_id, corpus_id, document_id, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 'moving', ?, ?)")
      .run(t.id, t.kind, t.workspaceId, t.corpusId, t.documentId, t.deletedAt, t.expiresAt);
  }

  get(id: string): TombstoneRecord | undefined {
    const row = this.db.prepare("SELECT * FROM tombstones WHERE id = ?").get(id) as TombstoneRow | undefined;
    return row && toRecord(row);
  }

  /** One page, newest deletions first by default; `workspaceId` null = every workspace. */
  list(workspaceId: string | null, page: PageRequest): Page<TombstoneRecord> {
    const where = workspaceId === null ? { where: "1 = 1", params: [] } : { where: "workspace_id = ?", params: [workspaceId] };
    const result = readPage<TombstoneRow>(this.db, { table: "tombstones", ...where }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  withStatus(status: TombstoneStatus): TombstoneRecord[] {
    return (this.db.prepare("SELECT * FROM tombstones WHERE status = ? ORDER BY created_at, id").all(status) as TombstoneRow[]).map(toRecord);
  }

  /** Retained tombstones whose window ended at `now` (Unix seconds) or before. */
  expired(now: number): TombstoneRecord[] {
    return (this.db.prepare("SELECT * FROM tombstones WHERE status = 'retained' AND expires_at <= ? ORDER BY expires_at, id").all(now) as TombstoneRow[]).map(toRecord);
  }

  /**
   * Deletes the corpus (its documents and chunks by cascade), keeps its wrapped key until
   * `destroyKeyAfter`, and marks the tombstone retained, in one transaction. Returns false,
   * changing nothing, when the corpus holds a document or chunk that was not copied.
   */
  commitCorpusDeletion(id: string, copied: CopiedRows, counts: TombstoneCounts, destroyKeyAfter: number): boolean {
    return this.db.transaction(() => {
      if (!this.allCopied("SELECT id FROM documents WHERE corpus_id = ?", id, copied.documentIds)) return false;
      if (!this.allCopied("SELECT id FROM chunks WHERE corpus_id = ?", id, copied.chunkIds)) return false;
      this.db.prepare("DELETE FROM corpora WHERE id = ?").run(id);
      this.db.prepare("UPDATE corpus_keys SET destroy_after = ? WHERE corpus_id = ?").run(destroyKeyAfter, id);
      this.markRetained(id, counts);
      return true;
    })();
  }

  /** As `commitCorpusDeletion`, for one document and its chunks. */
  commitDocumentDeletion(id: string, copied: CopiedRows, counts: TombstoneCounts): boolean {
    return this.db.transaction(() => {
      if (!this.allCopied("SELECT id FROM chunks WHERE document_id = ?", id, copied.chunkIds)) return false;
      this.db.prepare("DELETE FROM documents WHERE id = ?").run(id);
      this.markRetained(id, counts);
      return true;
    })();
  }

  /** Marks a tombstone retained (its primary rows are gone) with what it holds. */
  markRetained(id: string, counts: TombstoneCounts): void {
    this.db.prepare("UPDATE tombstones SET status = 'retained', documents = ?, chunks = ?, bytes = ? WHERE id = ?").run(counts.documents, counts.chunks, counts.bytes, id);
  }

  /**
   * Marks the given tombstones purging and, in the same transaction, destroys the wrapped
   * key of every deleted corpus that no retained or moving tombstone needs any more and
   * whose key was due (`destroy_after <= now`; keys of corpora deleted before tombstones
   * existed are covered too). Returns the corpus ids whose keys were destroyed.
   */
  startPurge(ids: readonly string[], now: number): string[] {
    return this.db.transaction(() => {
      const mark = this.db.prepare("UPDATE tombstones SET status = 'purging' WHERE id = ? AND status = 'retained'");
      for (const id of ids) mark.run(id);
      const due = this.db
        .prepare(
          `SELECT k.corpus_id FROM corpus_keys k
           WHERE k.destroy_after IS NOT NULL AND k.destroy_after <= ?
             AND NOT EXISTS (SELECT 1 FROM corpora c WHERE c.id = k.corpus_id)
             AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.corpus_id = k.corpus_id AND t.status IN ('moving', 'retained'))
           ORDER BY k.corpus_id`,
        )
        .pluck()
        .all(now) as string[];
      const destroy = this.db.prepare("DELETE FROM corpus_keys WHERE corpus_id = ?");
      for (const corpusId of due) destroy.run(corpusId);
      return due;
    })();
  }

  /** Forgets a tombstone whose cold contents were destroyed. */
  remove(id: string): void {
    this.db.prepare("DELETE FROM tombstones WHERE id = ?").run(id);
  }

  /** Frees the primary database's deleted pages and empties its log (see space-reclaim.ts). */
  reclaimSpace(): ReclaimResult {
    return reclaimSpace(this.db);
  }

  private allCopied(sql: string, id: string, copied: ReadonlySet<string>): boolean {
    for (const rowId of this.db.prepare(sql).pluck().iterate(id) as IterableIterator<string>) if (!copied.has(rowId)) return false;
    return true;
  }
}
