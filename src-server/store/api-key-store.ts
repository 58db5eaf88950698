/** API keys in the store's database (SQLite or Postgres). Secrets are never stored, only their SHA-256. */
import { sql } from "kysely";
import type { Scope } from "../domain/scopes.js";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { Sql, SqlDatabase } from "./sql-database.js";

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  secretSha256: string;
  scopes: Scope[];
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  secret_sha256: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

const orNull = (value: number | null): number | null => (value === null ? null : Number(value));

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  prefix: row.prefix,
  secretSha256: row.secret_sha256,
  scopes: JSON.parse(row.scopes) as Scope[],
  createdAt: Number(row.created_at),
  expiresAt: orNull(row.expires_at),
  revokedAt: orNull(row.revoked_at),
  lastUsedAt: orNull(row.last_used_at),
});

const toRow = (record: ApiKeyRecord): ApiKeyRow => ({
  id: record.id,
  workspace_id: record.workspaceId,
  name: record.name,
  prefix: record.prefix,
  secret_sha256: record.secretSha256,
  scopes: JSON.stringify(record.scopes),
  created_at: record.createdAt,
  expires_at: record.expiresAt,
  revoked_at: record.revokedAt,
  last_used_at: record.lastUsedAt,
});

export class ApiKeyStore {
  constructor(private readonly store: SqlDatabase) {}

  async insert(record: ApiKeyRecord): Promise<void> {
    await this.store.db.insertInto("api_keys").values(toRow(record)).execute();
  }

  /**
   * Inserts the key unless one with the same secret exists (replicas registering
   * `PUSTAKA_API_KEY` together). True when this call inserted it.
   */
  async insertIfSecretAbsent(record: ApiKeyRecord): Promise<boolean> {
    const result = await this.store.db
      .insertInto("api_keys")
      .values(toRow(record))
      .onConflict((oc) => oc.column("secret_sha256").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /**
   * Inserts the key only when its workspace has no active key, checked and written in one
   * transaction under a per-workspace lock: of replicas starting together, exactly one
   * generates the first admin key. True when this call inserted it.
   */
  insertIfNoneActive(record: ApiKeyRecord): Promise<boolean> {
    return this.store.transaction(async (tx) => {
      await this.store.lock(tx, [`api_keys:first:${record.workspaceId}`]);
      if ((await countActive(tx, record.workspaceId)) > 0) return false;
      await tx.insertInto("api_keys").values(toRow(record)).execute();
      return true;
    });
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.store.db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Candidates for a presented secret; the caller compares digests in constant time. */
  async findByPrefix(prefix: string): Promise<ApiKeyRecord[]> {
    const rows = await this.store.db.selectFrom("api_keys").selectAll().where("prefix", "=", prefix).execute();
    return rows.map(toRecord);
  }

  async findByDigest(secretSha256: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.store.db.selectFrom("api_keys").selectAll().where("secret_sha256", "=", secretSha256).executeTakeFirst();
    return row && toRecord(row);
  }

  countActive(workspaceId: string): Promise<number> {
    return countActive(this.store.db, workspaceId);
  }

  async list(workspaceId: string, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    const result = await readSqlPage<ApiKeyRow>(this.store.db, { table: "api_keys", where: sql`workspace_id = ${workspaceId}` }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  /** Marks the key revoked at `at`; a key already revoked keeps its first time. */
  async revoke(id: string, at: number): Promise<void> {
    await this.store.db.updateTable("api_keys").set({ revoked_at: at }).where("id", "=", id).where("revoked_at", "is", null).execute();
  }

  /**
   * Records a use of the key at `at`: one indexed single-row UPDATE, outside any
   * transaction, that only moves `last_used_at` forward (replicas touching the same key
   * together, or one with a clock behind, cannot move it back). Callers throttle it.
   */
  async touch(id: string, at: number): Promise<void> {
    await this.store.db
      .updateTable("api_keys")
      .set({ last_used_at: at })
      .where("id", "=", id)
      .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", at)]))
      .execute();
  }
}

async function countActive(db: Sql, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom("api_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("workspace_id", "=", workspaceId)
    .where("revoked_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
