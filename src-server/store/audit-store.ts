/**
 * The audit log in the store's database (SQLite, or Postgres shared by several replicas):
 * chained appends in one transaction, keyset reads by sequence number (so long exports
 * never hold a connection), and filtered pages. The hashes are the caller's (`seal`); the
 * database checks that each row extends its chain and refuses to change or remove one.
 */
import { sql } from "kysely";
import type { Sql, SqlDatabase } from "./sql-database.js";

export interface AuditRow {
  id: string;
  chain: string;
  seq: number;
  at_ms: number;
  type: string;
  actor: string;
  outcome: "success" | "failure";
  request_id: string | null;
  /** Canonical JSON of the entry's data. */
  body: string;
  prev_hash: string;
  hash: string;
}

export interface ChainHead {
  chain: string;
  seq: number;
  hash: string;
}

/** An entry before it has a place in its chain. */
export interface AuditDraft {
  id: string;
  chain: string;
  atMs: number;
  type: string;
  actor: string;
  outcome: "success" | "failure";
  requestId: string | null;
  body: string;
}

export interface AuditFilter {
  chain: string;
  /** Exact type, or a prefix ending in `.` (`document.` = every document event). */
  type?: string | undefined;
  actor?: string | undefined;
  outcome?: "success" | "failure" | undefined;
  requestId?: string | undefined;
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
}

/** The append-only triggers each database must hold (migration 007 on SQLite, the baseline on Postgres). */
const TRIGGERS = {
  sqlite: ["audit_events_no_update", "audit_events_no_delete", "audit_events_chained"],
  postgres: ["audit_events_no_update", "audit_events_no_delete", "audit_events_no_truncate", "audit_events_chained"],
} as const;

/**
 * The advisory lock a chain's appends serialize on. `SqlDatabase.lock` hashes
 * `pustaka:` + this key, which is exactly the key the Postgres trigger `audit_events_extend`
 * (postgres-baseline.ts) locks, `'pustaka:audit:' || NEW.chain`: an insert that did not take
 * the lock first still waits for a writer that did.
 */
export const chainLockKey = (chain: string): string => `audit:${chain}`;

/** Rows per INSERT statement (11 parameters each: well within SQLite's and Postgres's limits). */
const INSERT_CHUNK = 200;

export class AuditStore {
  constructor(private readonly store: SqlDatabase) {}

  /**
   * Appends drafts in order, each after its chain's current head. The chains touched are
   * locked (in sorted order) before their heads are read, inside the transaction, so
   * several writers — the server, the CLI, other replicas — extend a chain one after the
   * other, never from the same head. Returns the new heads of the chains touched.
   */
  async append(drafts: readonly AuditDraft[], seal: (draft: AuditDraft, seq: number, prevHash: string) => string, genesis: string): Promise<ChainHead[]> {
    if (drafts.length === 0) return [];
    const chains = [...new Set(drafts.map((d) => d.chain))].sort();
    return this.store.transaction(async (tx) => {
      await this.store.lock(tx, chains.map(chainLockKey));
      const heads = new Map<string, { seq: number; hash: string }>();
      for (const chain of chains) heads.set(chain, (await headOf(tx, chain)) ?? { seq: 0, hash: genesis });
      const rows: AuditRow[] = drafts.map((draft) => {
        const head = heads.get(draft.chain)!;
        const seq = head.seq + 1;
        const hash = seal(draft, seq, head.hash);
        heads.set(draft.chain, { seq, hash });
        return { id: draft.id, chain: draft.chain, seq, at_ms: draft.atMs, type: draft.type, actor: draft.actor, outcome: draft.outcome, request_id: draft.requestId, body: draft.body, prev_hash: head.hash, hash };
      });
      // Several rows per statement, in chain order: each row's insert trigger sees the rows before it.
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.insertInto("audit_events").values(rows.slice(i, i + INSERT_CHUNK)).execute();
      return chains.map((chain) => ({ chain, ...heads.get(chain)! }));
    });
  }

  /** The last entry of every chain. */
  async heads(): Promise<ChainHead[]> {
    return this.store.db
      .selectFrom("audit_events as e")
      .innerJoin((eb) => eb.selectFrom("audit_events").select(["chain", (f) => f.fn.max("seq").as("seq")]).groupBy("chain").as("h"), (join) => join.onRef("h.chain", "=", "e.chain").onRef("h.seq", "=", "e.seq"))
      .select(["e.chain", "e.seq", "e.hash"])
      .orderBy("e.chain")
      .execute();
  }

  async chains(): Promise<string[]> {
    const rows = await this.store.db.selectFrom("audit_events").select("chain").distinct().orderBy("chain").execute();
    return rows.map((r) => r.chain);
  }

  /** Rows `fromSeq` … `toSeq` of a chain in order, `batch` at a time. */
  range(chain: string, fromSeq: number, toSeq: number, batch: number): Promise<AuditRow[]> {
    return this.store.db.selectFrom("audit_events").selectAll().where("chain", "=", chain).where("seq", ">=", fromSeq).where("seq", "<=", toSeq).orderBy("seq").limit(batch).execute();
  }

  /** Sequence numbers bounding the entries of `chain` made at or after `sinceMs` and before `untilMs` (a contiguous run: from the first such entry to the last). */
  async seqBounds(chain: string, sinceMs: number | undefined, untilMs: number | undefined): Promise<{ first: number; last: number } | null> {
    const first = await this.store.db
      .selectFrom("audit_events")
      .select((eb) => eb.fn.min("seq").as("seq"))
      .where("chain", "=", chain)
      .where("at_ms", ">=", sinceMs ?? Number.MIN_SAFE_INTEGER)
      .executeTakeFirst();
    const last = await this.store.db
      .selectFrom("audit_events")
      .select((eb) => eb.fn.max("seq").as("seq"))
      .where("chain", "=", chain)
      .where("at_ms", "<", untilMs ?? Number.MAX_SAFE_INTEGER)
      .executeTakeFirst();
    if (first?.seq == null || last?.seq == null || first.seq > last.seq) return null;
    return { first: first.seq, last: last.seq };
  }

  /** The hash of entry `seq` of a chain (null when absent). */
  async hashAt(chain: string, seq: number): Promise<string | null> {
    const row = await this.store.db.selectFrom("audit_events").select("hash").where("chain", "=", chain).where("seq", "=", seq).executeTakeFirst();
    return row?.hash ?? null;
  }

  /** The last entry made before `ms` (the anchor of an export that starts there). */
  async headBefore(chain: string, ms: number): Promise<{ seq: number; hash: string } | null> {
    const row = await this.store.db.selectFrom("audit_events").select(["seq", "hash"]).where("chain", "=", chain).where("at_ms", "<", ms).orderBy("seq", "desc").limit(1).executeTakeFirst();
    return row ?? null;
  }

  /** One page, newest first, after (older than) the `afterSeq` cursor. */
  async page(filter: AuditFilter, limit: number, afterSeq: number | undefined, order: "asc" | "desc"): Promise<{ data: AuditRow[]; hasMore: boolean }> {
    const { type } = filter;
    const rows = await this.store.db
      .selectFrom("audit_events")
      .selectAll()
      .where("chain", "=", filter.chain)
      // A prefix compares its characters exactly (a `>=`/`<` range would depend on the collation, and LIKE on the dialect's case rules).
      .$if(Boolean(type) && type!.endsWith("."), (q) => q.where(sql<boolean>`substr(type, 1, ${[...type!].length}) = ${type!}`))
      .$if(Boolean(type) && !type!.endsWith("."), (q) => q.where("type", "=", type!))
      .$if(Boolean(filter.actor), (q) => q.where("actor", "=", filter.actor!))
      .$if(Boolean(filter.outcome), (q) => q.where("outcome", "=", filter.outcome!))
      .$if(Boolean(filter.requestId), (q) => q.where("request_id", "=", filter.requestId!))
      .$if(filter.sinceMs !== undefined, (q) => q.where("at_ms", ">=", filter.sinceMs!))
      .$if(filter.untilMs !== undefined, (q) => q.where("at_ms", "<", filter.untilMs!))
      .$if(afterSeq !== undefined, (q) => q.where("seq", order === "desc" ? "<" : ">", afterSeq!))
      .orderBy("seq", order)
      .limit(limit + 1)
      .execute();
    return { data: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  async seqOf(chain: string, id: string): Promise<number | undefined> {
    const row = await this.store.db.selectFrom("audit_events").select("seq").where("chain", "=", chain).where("id", "=", id).executeTakeFirst();
    return row?.seq;
  }

  /** Names of the append-only triggers that are missing (someone dropped them) or, on Postgres, disabled. */
  async missingTriggers(): Promise<string[]> {
    // Each database lists its triggers in its own catalog: the one place this store asks by dialect.
    const query =
      this.store.dialect === "postgres"
        ? // tgenabled 'O' (origin) or 'A' (always) fire in ordinary sessions; 'D' is disabled, 'R' fires only on replicas.
          sql<{ name: string }>`SELECT tgname AS name FROM pg_trigger WHERE tgrelid = to_regclass('audit_events') AND NOT tgisinternal AND tgenabled IN ('O', 'A')`
        : sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'`;
    const present = new Set((await query.execute(this.store.db)).rows.map((r) => r.name));
    return TRIGGERS[this.store.dialect].filter((name) => !present.has(name));
  }
}

/** A chain's last entry, read inside the appending transaction. */
async function headOf(tx: Sql, chain: string): Promise<{ seq: number; hash: string } | undefined> {
  return tx.selectFrom("audit_events").select(["seq", "hash"]).where("chain", "=", chain).orderBy("seq", "desc").limit(1).executeTakeFirst();
}
