/**
 * The tombstone catalogue in the primary database (migration 008; SQLite or Postgres):
 * which deletions are under way, retained or being destroyed, with their expiry.
 * Committing a deletion here deletes the primary rows and marks the tombstone retained in
 * one transaction, and only when every row being deleted was copied to cold storage
 * first. Starting a purge destroys wrapped corpus keys in the same transaction that marks
 * tombstones purging; with several replicas, each tombstone is marked purging by exactly
 * one of them (a conditional update), which destroys and reports it.
 */
import { sql, type Selectable } from "kysely";
import { corpusRowsLock } from "./chunk-store.js";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { TombstonesTable } from "./schema.js";
import { reclaimSpace, type ReclaimResult } from "./space-reclaim.js";
import type { Sql, SqlDatabase } from "./sql-database.js";
import type { CorpusFeed } from "./corpus-feed.js";

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

/** What `startPurge` did: the tombstones this call moved to `purging` (its to destroy and report), and the keys it destroyed. */
export interface PurgeStart {
  purging: string[];
  keysDestroyed: string[];
}

type TombstoneRow = Selectable<TombstonesTable>;

/** Ids read per query when checking that every row of a deletion was copied. */
const ID_PAGE = 10_000;

const toRecord = (r: TombstoneRow): TombstoneRecord => ({
  id: r.id,
  kind: r.kind,
  workspaceId: r.workspace_id,
  corpusId: r.corpus_id,
  documentId: r.document_id,
  status: r.status,
  documents: r.documents,
  chunks: r.chunks,
  bytes: r.bytes,
  deletedAt: r.created_at,
  expiresAt: r.expires_at,
});

export class TombstoneCatalog {
  /** `feed`: where replicas sharing the store learn of deleted corpora and documents (none for a lone server). */
  constructor(
    private readonly store: SqlDatabase,
    private readonly feed: CorpusFeed | null = null,
  ) {}

  /** Records a deletion about to start (`moving`); the primary rows stay until `commit…`. A tombstone already recorded is left as it is. */
  async begin(t: NewTombstone): Promise<void> {
    await this.store.db
      .insertInto("tombstones")
      .values({ id: t.id, kind: t.kind, workspace_id: t.workspaceId, corpus_id: t.corpusId, document_id: t.documentId, status: "moving", created_at: t.deletedAt, expires_at: t.expiresAt })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  async get(id: string): Promise<TombstoneRecord | undefined> {
    const row = await this.store.db.selectFrom("tombstones").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** One page, newest deletions first by default; `workspaceId` null = every workspace. */
  async list(workspaceId: string | null, page: PageRequest): Promise<Page<TombstoneRecord>> {
    const where = workspaceId === null ? sql`1 = 1` : sql`workspace_id = ${workspaceId}`;
    const result = await readSqlPage<TombstoneRow>(this.store.db, { table: "tombstones", where }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  async withStatus(status: TombstoneStatus): Promise<TombstoneRecord[]> {
    if (status === "purged") return [];
    const rows = await this.store.db.selectFrom("tombstones").selectAll().where("status", "=", status).orderBy("created_at").orderBy("id").execute();
    return rows.map(toRecord);
  }

  /** Retained tombstones whose window ended at `now` (Unix seconds) or before. */
  async expired(now: number): Promise<TombstoneRecord[]> {
    const rows = await this.store.db.selectFrom("tombstones").selectAll().where("status", "=", "retained").where("expires_at", "<=", now).orderBy("expires_at").orderBy("id").execute();
    return rows.map(toRecord);
  }

  /**
   * Deletes the corpus (its documents and chunks by cascade), keeps its wrapped key until
   * `destroyKeyAfter`, and marks the tombstone retained, in one transaction. Returns false,
   * changing nothing, when the corpus holds a document or chunk that was not copied.
   */
  commitCorpusDeletion(id: string, copied: CopiedRows, counts: TombstoneCounts, destroyKeyAfter: number): Promise<boolean> {
    return this.store.transaction(async (tx) => {
      // No chunk is committed to the corpus between the check and the delete (another replica's indexer).
      await this.store.lock(tx, [corpusRowsLock(id)]);
      if (!(await allCopied(tx, "documents", "corpus_id", id, copied.documentIds))) return false;
      if (!(await allCopied(tx, "chunks", "corpus_id", id, copied.chunkIds))) return false;
      await tx.deleteFrom("corpora").where("id", "=", id).execute();
      await tx.updateTable("corpus_keys").set({ destroy_after: destroyKeyAfter }).where("corpus_id", "=", id).execute();
      await markRetained(tx, id, counts);
      await this.feed?.record(tx, { corpusId: id, documentId: null, change: "corpus_removed" });
      return true;
    });
  }

  /**
   * As `commitCorpusDeletion`, for one document (of corpus `corpusId`), the documents that
   * came out of it (`copied.documentIds`: an e-mail's attachments) and their chunks. A child
   * added since the copy (one being staged) makes it refuse, like a chunk that was not copied.
   */
  commitDocumentDeletion(id: string, corpusId: string, copied: CopiedRows, counts: TombstoneCounts): Promise<boolean> {
    return this.store.transaction(async (tx) => {
      await this.store.lock(tx, [corpusRowsLock(corpusId)]);
      for (const documentId of copied.documentIds.size > 0 ? copied.documentIds : [id]) {
        if (!(await allCopied(tx, "chunks", "document_id", documentId, copied.chunkIds))) return false;
        if (!(await allCopied(tx, "documents", "parent_document_id", documentId, copied.documentIds))) return false;
      }
      // The documents that came out of it go by cascade.
      await tx.deleteFrom("documents").where("id", "=", id).execute();
      await markRetained(tx, id, counts);
      for (const documentId of copied.documentIds.size > 0 ? copied.documentIds : [id]) await this.feed?.record(tx, { corpusId, documentId, change: "removed" });
      return true;
    });
  }

  /** Marks a tombstone retained (its primary rows are gone) with what it holds. */
  async markRetained(id: string, counts: TombstoneCounts): Promise<void> {
    await markRetained(this.store.db, id, counts);
  }

  /**
   * Marks the given tombstones purging and, in the same transaction, destroys the wrapped
   * key of every deleted corpus that no retained or moving tombstone needs any more and
   * whose key was due (`destroy_after <= now`; keys of corpora deleted before tombstones
   * existed are covered too). Each tombstone moves from `retained` to `purging` by a
   * conditional update: only the call whose update changed it gets it in `purging` (with
   * several replicas purging at once, each tombstone goes to one of them), and each key is
   * reported by the call whose delete removed it.
   */
  startPurge(ids: readonly string[], now: number): Promise<PurgeStart> {
    return this.store.transaction(async (tx) => {
      const purging: string[] = [];
      for (const id of ids) {
        const marked = await tx.updateTable("tombstones").set({ status: "purging" }).where("id", "=", id).where("status", "=", "retained").executeTakeFirst();
        if (Number(marked.numUpdatedRows) === 1) purging.push(id);
      }
      const destroyed = await tx
        .deleteFrom("corpus_keys")
        .where("destroy_after", "is not", null)
        .where("destroy_after", "<=", now)
        .where((eb) => eb.not(eb.exists(eb.selectFrom("corpora").select(sql.lit(1).as("one")).whereRef("corpora.id", "=", "corpus_keys.corpus_id"))))
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom("tombstones")
                .select(sql.lit(1).as("one"))
                .whereRef("tombstones.corpus_id", "=", "corpus_keys.corpus_id")
                .where("tombstones.status", "in", ["moving", "retained"]),
            ),
          ),
        )
        .returning("corpus_id")
        .execute();
      const keysDestroyed = destroyed.map((r) => r.corpus_id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return { purging, keysDestroyed };
    });
  }

  /** Forgets a tombstone whose cold contents were destroyed; false when it was no longer there (forgotten by another purge). */
  async remove(id: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom("tombstones").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * Frees the primary database's deleted pages and empties its log (see space-reclaim.ts).
   * SQLite only: the pragmas run on its connection while no other query or transaction
   * holds it. Postgres has no equivalent to run from here (its autovacuum reclaims dead
   * rows, its checkpoints recycle the log): nothing is done there.
   */
  async reclaimSpace(): Promise<ReclaimResult> {
    const raw = this.store.sqlite;
    if (this.store.dialect !== "sqlite" || !raw) return { freedPages: 0, walTruncated: false };
    return this.store.db.connection().execute(() => Promise.resolve(reclaimSpace(raw)));
  }
}

/** Marks a tombstone retained, through `db` (the store or a transaction). */
async function markRetained(db: Sql, id: string, counts: TombstoneCounts): Promise<void> {
  await db.updateTable("tombstones").set({ status: "retained", documents: counts.documents, chunks: counts.chunks, bytes: counts.bytes }).where("id", "=", id).execute();
}

/** Whether every id of `table` whose `column` is `value` is in `copied` (read in pages by id, in the transaction `tx`). */
async function allCopied(tx: Sql, table: "documents" | "chunks", column: "corpus_id" | "document_id" | "parent_document_id", value: string, copied: ReadonlySet<string>): Promise<boolean> {
  let after = "";
  for (;;) {
    const rows = await tx
      .selectFrom(table)
      .select("id")
      .where(column as "corpus_id", "=", value)
      .where("id", ">", after)
      .orderBy("id")
      .limit(ID_PAGE)
      .execute();
    for (const row of rows) if (!copied.has(row.id)) return false;
    if (rows.length < ID_PAGE) return true;
    after = rows.at(-1)!.id;
  }
}
