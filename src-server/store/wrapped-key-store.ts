/**
 * Every wrapped data key in the database, whatever record it protects (corpora, including
 * deleted ones whose key waits out its retention, and conversations), for rewrapping
 * under a new key-encryption key. Only the wrapped keys and their provider ids change;
 * the data they protect is never read or written here.
 */
import { ServiceError } from "../errors.js";
import type { Database } from "./database.js";

export type WrappedKeyKind = "corpus" | "conversation";

export interface WrappedKeyRow {
  kind: WrappedKeyKind;
  /** The corpus or conversation id. */
  id: string;
  /** Id of the key provider (and KEK) that wrapped it. */
  provider: string;
  wrappedKey: Buffer;
}

/** Where each kind of wrapped key is stored. */
const TABLES: Record<WrappedKeyKind, { table: string; id: string; provider: string }> = {
  corpus: { table: "corpus_keys", id: "corpus_id", provider: "provider" },
  conversation: { table: "conversations", id: "id", provider: "key_provider" },
};

export class WrappedKeyStore {
  constructor(private readonly db: Database) {}

  all(): WrappedKeyRow[] {
    return (Object.entries(TABLES) as [WrappedKeyKind, (typeof TABLES)[WrappedKeyKind]][]).flatMap(([kind, t]) =>
      (this.db.prepare(`SELECT ${t.id} AS id, ${t.provider} AS provider, wrapped_key FROM ${t.table} ORDER BY ${t.id}`).all() as { id: string; provider: string; wrapped_key: Buffer }[]).map(
        (r) => ({ kind, id: r.id, provider: r.provider, wrappedKey: r.wrapped_key }),
      ),
    );
  }

  /** How many wrapped keys each provider id holds. */
  countByProvider(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const t of Object.values(TABLES)) {
      for (const r of this.db.prepare(`SELECT ${t.provider} AS provider, COUNT(*) AS n FROM ${t.table} GROUP BY ${t.provider}`).all() as { provider: string; n: number }[]) {
        counts[r.provider] = (counts[r.provider] ?? 0) + r.n;
      }
    }
    return counts;
  }

  /**
   * Replaces wrapped keys read by `all()` with their rewrapped bytes under `provider`, in
   * one transaction. Throws (changing nothing) when a key changed or appeared meanwhile,
   * so no key is left wrapped by a KEK that is about to be retired.
   */
  replace(rows: (WrappedKeyRow & { rewrapped: Buffer })[], provider: string): Record<WrappedKeyKind, number> {
    const counts: Record<WrappedKeyKind, number> = { corpus: 0, conversation: 0 };
    this.db.transaction(() => {
      for (const row of rows) {
        const t = TABLES[row.kind];
        const result = this.db
          .prepare(`UPDATE ${t.table} SET ${t.provider} = ?, wrapped_key = ? WHERE ${t.id} = ? AND wrapped_key = ?`)
          .run(provider, row.rewrapped, row.id, row.wrappedKey);
        if (result.changes !== 1) throw new ServiceError("conflict", `the wrapped key of ${row.kind} ${row.id} changed during the rotation; nothing was rewrapped, run it again`, { code: "kek_rotation_conflict" });
        counts[row.kind] += 1;
      }
      for (const [kind, t] of Object.entries(TABLES)) {
        const { n } = this.db.prepare(`SELECT COUNT(*) AS n FROM ${t.table} WHERE ${t.provider} != ?`).get(provider) as { n: number };
        if (n > 0) throw new ServiceError("conflict", `${n} ${kind} key(s) were added during the rotation; nothing was rewrapped, run it again`, { code: "kek_rotation_conflict" });
      }
    })();
    return counts;
  }
}
