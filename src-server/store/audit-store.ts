/**
 * SQLite access for the audit log: chained appends in one transaction, keyset reads by
 * sequence number (so long exports never hold the connection), and filtered pages.
 * The hashes are the caller's (`seal`); the database checks that each row extends its chain.
 */
import type { Database } from "./database.js";

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

const TRIGGERS = ["audit_events_no_update", "audit_events_no_delete", "audit_events_chained"];

export class AuditStore {
  constructor(private readonly db: Database) {}

  /**
   * Appends drafts in order, each after its chain's current head (read inside the
   * transaction, so several writers — the server and the CLI — interleave safely).
   * Returns the new heads of the chains touched.
   */
  append(drafts: readonly AuditDraft[], seal: (draft: AuditDraft, seq: number, prevHash: string) => string, genesis: string): ChainHead[] {
    const headOf = this.db.prepare<[string], { seq: number; hash: string }>("SELECT seq, hash FROM audit_events WHERE chain = ? ORDER BY seq DESC LIMIT 1");
    const insert = this.db.prepare(
      "INSERT INTO audit_events (id, chain, seq, at_ms, type, actor, outcome, request_id, body, prev_hash, hash) VALUES (@id, @chain, @seq, @at_ms, @type, @actor, @outcome, @request_id, @body, @prev_hash, @hash)",
    );
    return this.db
      .transaction(() => {
        const heads = new Map<string, { seq: number; hash: string }>();
        for (const draft of drafts) {
          const head = heads.get(draft.chain) ?? headOf.get(draft.chain) ?? { seq: 0, hash: genesis };
          const seq = head.seq + 1;
          const hash = seal(draft, seq, head.hash);
          insert.run({ id: draft.id, chain: draft.chain, seq, at_ms: draft.atMs, type: draft.type, actor: draft.actor, outcome: draft.outcome, request_id: draft.requestId, body: draft.body, prev_hash: head.hash, hash });
          heads.set(draft.chain, { seq, hash });
        }
        return [...heads].map(([chain, head]) => ({ chain, ...head }));
      })
      .immediate();
  }

  heads(): ChainHead[] {
    return this.db.prepare<[], ChainHead>("SELECT chain, MAX(seq) AS seq, hash FROM audit_events GROUP BY chain").all();
  }

  chains(): string[] {
    return this.db
      .prepare<[], { chain: string }>("SELECT DISTINCT chain FROM audit_events ORDER BY chain")
      .all()
      .map((r) => r.chain);
  }

  /** Rows `fromSeq` … `toSeq` of a chain in order, `batch` at a time. */
  range(chain: string, fromSeq: number, toSeq: number, batch: number): AuditRow[] {
    return this.db.prepare<[string, number, number, number], AuditRow>("SELECT * FROM audit_events WHERE chain = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?").all(chain, fromSeq, toSeq, batch);
  }

  /** Sequence numbers bounding the entries of `chain` made at or after `sinceMs` and before `untilMs` (a contiguous run: from the first such entry to the last). */
  seqBounds(chain: string, sinceMs: number | undefined, untilMs: number | undefined): { first: number; last: number } | null {
    const first = this.db.prepare<[string, number], { seq: number }>("SELECT MIN(seq) AS seq FROM audit_events WHERE chain = ? AND at_ms >= ?").get(chain, sinceMs ?? Number.MIN_SAFE_INTEGER)?.seq;
    const last = this.db.prepare<[string, number], { seq: number }>("SELECT MAX(seq) AS seq FROM audit_events WHERE chain = ? AND at_ms < ?").get(chain, untilMs ?? Number.MAX_SAFE_INTEGER)?.seq;
    if (first == null || last == null || first > last) return null;
    return { first, last };
  }

  /** The hash of entry `seq` of a chain (null when absent). */
  hashAt(chain: string, seq: number): string | null {
    return this.db.prepare<[string, number], { hash: string }>("SELECT hash FROM audit_events WHERE chain = ? AND seq = ?").get(chain, seq)?.hash ?? null;
  }

  /** The last entry made before `ms` (the anchor of an export that starts there). */
  headBefore(chain: string, ms: number): { seq: number; hash: string } | null {
    return this.db.prepare<[string, number], { seq: number; hash: string }>("SELECT seq, hash FROM audit_events WHERE chain = ? AND at_ms < ? ORDER BY seq DESC LIMIT 1").get(chain, ms) ?? null;
  }

  /** One page, newest first, after (older than) the `afterSeq` cursor. */
  page(filter: AuditFilter, limit: number, afterSeq: number | undefined, order: "asc" | "desc"): { data: AuditRow[]; hasMore: boolean } {
    const where = ["chain = ?"];
    const params: unknown[] = [filter.chain];
    if (filter.type) {
      if (filter.type.endsWith(".")) {
        where.push("type >= ? AND type < ?");
        params.push(filter.type, `${filter.type.slice(0, -1)}/`);
      } else {
        where.push("type = ?");
        params.push(filter.type);
      }
    }
    if (filter.actor) {
      where.push("actor = ?");
      params.push(filter.actor);
    }
    if (filter.outcome) {
      where.push("outcome = ?");
      params.push(filter.outcome);
    }
    if (filter.requestId) {
      where.push("request_id = ?");
      params.push(filter.requestId);
    }
    if (filter.sinceMs !== undefined) {
      where.push("at_ms >= ?");
      params.push(filter.sinceMs);
    }
    if (filter.untilMs !== undefined) {
      where.push("at_ms < ?");
      params.push(filter.untilMs);
    }
    if (afterSeq !== undefined) {
      where.push(order === "desc" ? "seq < ?" : "seq > ?");
      params.push(afterSeq);
    }
    const rows = this.db.prepare(`SELECT * FROM audit_events WHERE ${where.join(" AND ")} ORDER BY seq ${order === "desc" ? "DESC" : "ASC"} LIMIT ?`).all(...params, limit + 1) as AuditRow[];
    return { data: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  seqOf(chain: string, id: string): number | undefined {
    return this.db.prepare<[string, string], { seq: number }>("SELECT seq FROM audit_events WHERE chain = ? AND id = ?").get(chain, id)?.seq;
  }

  /** Names of the append-only triggers that are missing (someone dropped them). */
  missingTriggers(): string[] {
    const present = new Set(
      this.db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'")
        .all()
        .map((r) => r.name),
    );
    return TRIGGERS.filter((name) => !present.has(name));
  }
}
