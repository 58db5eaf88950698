/**
 * Named leases in the store's database, so periodic work shared by replicas (purging
 * expired tombstones, sessions and stored responses) runs on one of them at a time. A lease
 * is taken when it is free or expired, renewed by its holder, and lapses on its own when a
 * holder dies, so a killed replica never blocks the work for longer than the lease.
 */
import type { SqlDatabase } from "./sql-database.js";

/** Each serving replica's heartbeat: `replica:<id>`, renewed every few seconds. */
export const REPLICA_LEASE_PREFIX = "replica:";

export class LeaseStore {
  constructor(private readonly store: SqlDatabase) {}

  /** Takes or renews `name` for `holder` until `now + ttlMs`; false when another holder has it. */
  async acquire(name: string, holder: string, ttlMs: number, now = Date.now()): Promise<boolean> {
    const result = await this.store.db
      .insertInto("leases")
      .values({ name, holder, expires_at: now + ttlMs })
      .onConflict((oc) =>
        oc
          .column("name")
          .doUpdateSet((eb) => ({ holder: eb.ref("excluded.holder"), expires_at: eb.ref("excluded.expires_at") }))
          .where((eb) => eb.or([eb("leases.expires_at", "<=", now), eb("leases.holder", "=", holder)])),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Gives the lease back (only its holder can). */
  async release(name: string, holder: string): Promise<void> {
    await this.store.db.deleteFrom("leases").where("name", "=", name).where("holder", "=", holder).execute();
  }

  async holder(name: string, now = Date.now()): Promise<string | null> {
    const row = await this.store.db.selectFrom("leases").select(["holder", "expires_at"]).where("name", "=", name).executeTakeFirst();
    return row && row.expires_at > now ? row.holder : null;
  }

  /** Leases whose name starts with `prefix` and that are held now (e.g. the replicas alive). */
  async live(prefix: string, now = Date.now()): Promise<{ name: string; holder: string; expiresAt: number }[]> {
    const rows = await this.store.db.selectFrom("leases").selectAll().where("expires_at", ">", now).orderBy("name").execute();
    return rows.filter((r) => r.name.startsWith(prefix)).map((r) => ({ name: r.name, holder: r.holder, expiresAt: Number(r.expires_at) }));
  }
}
