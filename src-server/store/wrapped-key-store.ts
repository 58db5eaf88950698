/**
 * Every wrapped data key in the database, whatever record it protects (corpora, including
 * deleted ones whose key waits out its retention, conversations, stored responses, remote
 * models' secrets and the shared signing keys), for rewrapping
 * under a new key-encryption key. Only the wrapped keys and their provider ids change;
 * the data they protect is never read or written here.
 */
import { sql, type RawBuilder } from "kysely";
import { ServiceError } from "../errors.js";
import type { Sql, SqlDatabase } from "./sql-database.js";

export type WrappedKeyKind = "corpus" | "conversation" | "response" | "remote_model" | "signing_key";

export interface WrappedKeyRow {
  kind: WrappedKeyKind;
  /** The record's id (a signing key's: `purpose:kid`). */
  id: string;
  /** Id of the key provider (and KEK) that wrapped it. */
  provider: string;
  wrappedKey: Buffer;
}

/** Where each kind keeps its wrapped keys: the table, the record's id, the provider column. */
const KINDS: Record<WrappedKeyKind, { table: string; id: RawBuilder<string>; provider: string }> = {
  corpus: { table: "corpus_keys", id: sql<string>`corpus_id`, provider: "provider" },
  conversation: { table: "conversations", id: sql<string>`id`, provider: "key_provider" },
  response: { table: "responses", id: sql<string>`id`, provider: "key_provider" },
  remote_model: { table: "remote_models", id: sql<string>`id`, provider: "key_provider" },
  signing_key: { table: "signing_keys", id: sql<string>`purpose || ':' || kid`, provider: "key_provider" },
};
const KIND_NAMES = Object.keys(KINDS) as WrappedKeyKind[];

/** Each kind's keys as (id, provider, wrapped_key), from where they are stored, by id. */
async function keysOf(db: Sql, kind: WrappedKeyKind): Promise<{ id: string; provider: string; wrapped_key: Buffer }[]> {
  const k = KINDS[kind];
  const { rows } = await sql<{ id: string; provider: string; wrapped_key: Buffer }>`SELECT ${k.id} AS id, ${sql.ref(k.provider)} AS provider, wrapped_key FROM ${sql.table(k.table)} ORDER BY 1`.execute(db);
  return rows;
}

async function countByProvider(db: Sql, kind: WrappedKeyKind): Promise<{ provider: string; n: number }[]> {
  const k = KINDS[kind];
  const { rows } = await sql<{ provider: string; n: number }>`SELECT ${sql.ref(k.provider)} AS provider, COUNT(*) AS n FROM ${sql.table(k.table)} GROUP BY ${sql.ref(k.provider)}`.execute(db);
  return rows;
}

/** Replaces one wrapped key if it is still `expected`; the number of rows changed. */
async function rewrap(db: Sql, kind: WrappedKeyKind, id: string, expected: Buffer, provider: string, rewrapped: Buffer): Promise<number> {
  const k = KINDS[kind];
  const result = await sql`UPDATE ${sql.table(k.table)} SET ${sql.ref(k.provider)} = ${provider}, wrapped_key = ${rewrapped} WHERE ${k.id} = ${id} AND wrapped_key = ${expected}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

async function countNotWrappedBy(db: Sql, kind: WrappedKeyKind, provider: string): Promise<number> {
  const k = KINDS[kind];
  const { rows } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM ${sql.table(k.table)} WHERE ${sql.ref(k.provider)} <> ${provider}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export class WrappedKeyStore {
  constructor(private readonly store: SqlDatabase) {}

  async all(): Promise<WrappedKeyRow[]> {
    const rows: WrappedKeyRow[] = [];
    for (const kind of KIND_NAMES) {
      for (const r of await keysOf(this.store.db, kind)) rows.push({ kind, id: r.id, provider: r.provider, wrappedKey: Buffer.from(r.wrapped_key) });
    }
    return rows;
  }

  /** How many wrapped keys each provider id holds. */
  async countByProvider(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const kind of KIND_NAMES) {
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
      if (this.store.dialect === "postgres") await sql`LOCK TABLE corpus_keys, conversations, responses, remote_models, signing_keys IN SHARE ROW EXCLUSIVE MODE`.execute(tx);
      const counts: Record<WrappedKeyKind, number> = { corpus: 0, conversation: 0, response: 0, remote_model: 0, signing_key: 0 };
      for (const row of rows) {
        if ((await rewrap(tx, row.kind, row.id, row.wrappedKey, provider, row.rewrapped)) !== 1) {
          throw new ServiceError("conflict", `the wrapped key of ${row.kind} ${row.id} changed during the rotation; nothing was rewrapped, run it again`, { code: "kek_rotation_conflict" });
        }
        counts[row.kind] += 1;
      }
      for (const kind of KIND_NAMES) {
        const n = await countNotWrappedBy(tx, kind, provider);
        if (n > 0) throw new ServiceError("conflict", `${n} ${kind} key(s) were added during the rotation; nothing was rewrapped, run it again`, { code: "kek_rotation_conflict" });
      }
      return counts;
    });
  }
}
