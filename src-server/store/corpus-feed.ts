/**
 * The corpus change feed (`corpus_changes`): one row per change to a corpus's chunks,
 * written in the transaction that makes the change, so replicas sharing the store learn of
 * it exactly when it commits. On Postgres the same transaction sends a `pustaka_corpus`
 * notification (delivered at commit) so followers apply it within milliseconds; the
 * feed's sequence numbers let a follower that missed notifications catch up by polling.
 */
import { sql } from "kysely";
import type { Sql, SqlDatabase } from "./sql-database.js";

export type CorpusChange = "indexed" | "removed" | "corpus_removed";

export interface CorpusChangeRow {
  seq: number;
  corpusId: string;
  documentId: string | null;
  change: CorpusChange;
  origin: string;
  atMs: number;
}

export const CORPUS_CHANNEL = "pustaka_corpus";

export class CorpusFeed {
  /** `origin`: the replica writing (its own changes it has applied already). */
  constructor(
    private readonly store: SqlDatabase,
    readonly origin: string,
  ) {}

  /**
   * Records a change inside the caller's transaction `tx`, as its last statement: the feed's
   * lock is then held only through the commit, and sequence numbers are committed in order
   * (a follower that has seen `seq` never later finds a smaller one committed).
   */
  async record(tx: Sql, change: { corpusId: string; documentId: string | null; change: CorpusChange }): Promise<void> {
    await this.store.lock(tx, ["corpus-feed"]);
    await tx.insertInto("corpus_changes").values({ corpus_id: change.corpusId, document_id: change.documentId, change: change.change, origin: this.origin, at_ms: Date.now() }).execute();
    if (this.store.dialect === "postgres") await sql`SELECT pg_notify(${CORPUS_CHANNEL}, ${change.corpusId})`.execute(tx);
  }

  /** Changes after `seq`, oldest first. */
  async since(seq: number, limit = 1000): Promise<CorpusChangeRow[]> {
    const rows = await this.store.db.selectFrom("corpus_changes").selectAll().where("seq", ">", seq).orderBy("seq").limit(limit).execute();
    return rows.map((r) => ({ seq: Number(r.seq), corpusId: r.corpus_id, documentId: r.document_id, change: r.change, origin: r.origin, atMs: Number(r.at_ms) }));
  }

  /** The newest sequence number (0 when the feed is empty). */
  async head(): Promise<number> {
    const row = await this.store.db
      .selectFrom("corpus_changes")
      .select((eb) => eb.fn.max<number | null>("seq").as("seq"))
      .executeTakeFirstOrThrow();
    return Number(row.seq ?? 0);
  }

  /** The oldest sequence number kept (0 when empty): a follower behind it missed pruned changes. */
  async tail(): Promise<number> {
    const row = await this.store.db
      .selectFrom("corpus_changes")
      .select((eb) => eb.fn.min<number | null>("seq").as("seq"))
      .executeTakeFirstOrThrow();
    return Number(row.seq ?? 0);
  }

  /** Forgets changes older than `beforeMs` (followers are seconds behind, never hours). */
  async prune(beforeMs: number): Promise<number> {
    const result = await this.store.db.deleteFrom("corpus_changes").where("at_ms", "<", beforeMs).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
