/**
 * Remote models added through the admin API, in the store's database. Secrets arrive and
 * leave sealed; this store never sees an upstream's key.
 */
import type { RemoteModelsTable } from "./schema.js";
import type { SqlDatabase } from "./sql-database.js";

export interface RemoteModelRecord {
  id: string;
  /** JSON of what the model is, without secrets. */
  spec: string;
  keyProvider: string;
  wrappedKey: Buffer;
  /** Sealed JSON: each replica's API key and client certificate. */
  secrets: Buffer;
  createdAt: number;
  createdBy: string;
}

const record = (row: RemoteModelsTable): RemoteModelRecord => ({ id: row.id, spec: row.spec, keyProvider: row.key_provider, wrappedKey: row.wrapped_key, secrets: row.secrets, createdAt: row.created_at, createdBy: row.created_by });

export class RemoteModelStore {
  constructor(private readonly store: SqlDatabase) {}

  async insert(r: RemoteModelRecord): Promise<void> {
    await this.store.db
      .insertInto("remote_models")
      .values({ id: r.id, spec: r.spec, key_provider: r.keyProvider, wrapped_key: r.wrappedKey, secrets: r.secrets, created_at: r.createdAt, created_by: r.createdBy })
      .execute();
  }

  async list(): Promise<RemoteModelRecord[]> {
    const rows = await this.store.db.selectFrom("remote_models").selectAll().orderBy("created_at").orderBy("id").execute();
    return rows.map(record);
  }

  async get(id: string): Promise<RemoteModelRecord | undefined> {
    const row = await this.store.db.selectFrom("remote_models").selectAll().where("id", "=", id).executeTakeFirst();
    return row && record(row);
  }

  /** The wrapped data key of a remote model's secrets, for the keyring. */
  async wrappedKey(id: string): Promise<Buffer | undefined> {
    const row = await this.store.db.selectFrom("remote_models").select("wrapped_key").where("id", "=", id).executeTakeFirst();
    return row?.wrapped_key;
  }

  /** True when a row was deleted (its sealed secrets and wrapped key with it). */
  async delete(id: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom("remote_models").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
