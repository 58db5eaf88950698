/** Model files registered at run time, in the store's database. */
import type { SqlDatabase } from "./sql-database.js";

export interface ModelFileRecord {
  id: string;
  path: string;
  createdAt: number;
}

export class ModelFileStore {
  constructor(private readonly store: SqlDatabase) {}

  /**
   * Records a file under its id, replacing any record with the same id or the same path
   * (both are unique). One upsert cannot name two unique keys on Postgres, so the rows in
   * the way are deleted first, under a lock that keeps concurrent registrations apart.
   */
  async insert(r: ModelFileRecord): Promise<void> {
    await this.store.transaction(async (tx) => {
      await this.store.lock(tx, ["model_files"]);
      await tx
        .deleteFrom("model_files")
        .where((eb) => eb.or([eb("id", "=", r.id), eb("path", "=", r.path)]))
        .execute();
      await tx.insertInto("model_files").values({ id: r.id, path: r.path, created_at: r.createdAt }).execute();
    });
  }

  async all(): Promise<ModelFileRecord[]> {
    const rows = await this.store.db.selectFrom("model_files").select(["id", "path", "created_at"]).orderBy("created_at").orderBy("id").execute();
    return rows.map((r) => ({ id: r.id, path: r.path, createdAt: r.created_at }));
  }
}
