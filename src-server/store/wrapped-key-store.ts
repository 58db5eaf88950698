/**
 * Every wrapped data key in the database, whatever record it protects (corpora, including
 * deleted ones whose key waits out its retention, and conversations), for rewrapping
 * under a new key-encryption key. Only the wrapped keys and their provider ids change;
 * the data they protect is never read or written here.
 */
import { sql } from "kysely";
import { ServiceError } from "../errors.js";
import type { Sql, SqlDatabase } from "./sql-database.js";

export type WrappedKeyKind = "corpus" | "conversation";

export interface WrappedKeyRow {
  kind: WrappedKeyKind;
  /** The corpus or conversation id. */
  id: string;
  /** Id of the key provider (and KEK) that wrapped it. */
  provider: string;
  wrappedKey: Buffer;
}

const KINDS: readonly WrappedKeyKind[] = ["corpus", "conversation"];

/** Each kind's keys as (id, provider, wrapped_key), from where they are stored, by id. */
function keysOf(db: Sql, kind: WrappedKeyKind): Promise<{ id: string; provider: string; wrapped_key: Buffer }[]> {
  return kind === "corpus"
    ? db.selectFrom("corpus_keys").select(["corpus_id as id", "provider", "wrapped_key"]).orderBy("corpus_id").execute()
    : db.selectFrom("conversations").select(["id", "key_provider as provider", "wrapped_key"]).orderBy("id").execute();
}

function countByProvider(db: Sql, kind: WrappedKeyKind): Promise<{ provider: string; n: number }[]> {
  return kind === "corpus"
    ? db.selectFrom("corpus_keys").select((eb) => ["provider", eb.fn.countAll<number>().as("n")]).groupBy("provider").execute()
    : db.selectFrom("conversations").select((eb) => ["key_provider as provider", eb.fn.countAll<number>().as("n")]).groupBy("key_provider").execute();
}

/** Replaces one wrapped key if it is still `expected`; the number of rows changed. */
async function rewrap(db: Sql, kind: WrappedKeyKind, id: string, expected: Buffer, provider: string, rewrapped: Buffer): Promise<number> {
  const result =
    kind === "corpus"
      ? await db.updateTable("corpus_keys").set({ provider, wrapped_key: rewrapped }).where("corpus_id", "=", id).where("wrapped_key", "=", expected).executeTakeFirst()
      : await db.updateTable("conversations").set({ key_provider: provider, wrapped_key: rewrapped }).where("id", "=", id).where("wrapped_key", "=", expected).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

async function countNotWrappedBy(db: Sql, kind: WrappedKeyKind, provider: string): Promise<number> {
  const row =
    kind === "corpus"
      ? await db.selectFrom("corpus_keys").select((eb) => eb.fn.countAll<number>().as("n")).where("provider", "!=", provider).executeTakeFirstOrThrow()
      : await db.selectFrom("conversations").select((eb) => eb.fn.countAll<number>().as("n")).where("key_provider", "!=", provider).executeTakeFirstOrThrow();
  return Number(row.n);
}

export class WrappedKeyStore {
  constructor(private readonly store: SqlDatabase) {}

  async all(): Promise<WrappedKeyRow[]> {
    const rows: WrappedKeyRow[] = [];
    for (const kind of KINDS) {
      for (const r of await keysOf(this.store.db, kind)) rows.push({ kind, id: r.id, provider: r.provider, wrappedKey: Buffer.from(r.wrapped_key) });
    }
    return rows;
  }

  /** How many wrapped keys each provider id holds. */
  async countByProvider(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const kind of KINDS) {
      for (const r of await countByProvider(this.store.db, kind)) counts[r.provider] = (counts[r.provider] ?? 0) + Number(r.n);
    }
    return counts;
  }

  /**
   * Replaces wrapped keys read by `all()` with their rewrapped bytes under `provider`, in
   * one transaction. Throws (changing nothing) when a key changed or appeared meanwhile,
   * so no key is left wrapped by a KEK that is about to be retired.
   */
  async replace(rows: (WrappedKeyRow & { rewrapped: Buffer })[], provider: string): Promise<Record<WrappedKeyKind, number>> {
    return this.store.transaction(async (tx) => {
      // Keys written by others wait until this transaction ends, so the count of keys not
      // rewrapped below is exact when it commits. SQLite's transaction already holds the
      // database's write lock; Postgres needs the tables locked against writers (the mode
      // that also serializes two rotations, where a weaker one could deadlock them).
      if (this.store.dialect === "postgres") await sql`LOCK TABLE corpus_keys, conversations IN SHARE ROW EXCLUSIVE MODE`.execute(tx);
      const counts: Record<WrappedKeyKind, number> = { corpus: 0, conversation: 0 };
      for (const row of rows) {
        if ((await rewrap(tx, row.kind, row.id, row.wrappedKey, provider, row.rewrapped)) !== 1) {
          throw new ServiceError("conflict", `the wrapped key of ${row.kind} ${row.id} changed during the rotation; nothing was rewrapped, run it again`, { code: "kek_rotation_conflict" });
        }
        counts[row.kind] += 1;
      }
      for (const kind of KINDS) {
        const n = await countNotWrappedBy(tx, kind, provider);
        if (n > 0) throw new ServiceError("conflict", `${n} ${kind} key(s) were added during the rotation; nothing was rewrapped, run it again`, { code: "kek_rotation_conflict" });
      }
      return counts;
    });
  }
}
