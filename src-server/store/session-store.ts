/** Browser sessions in the store's database (SQLite or Postgres). Secrets are never stored, only their SHA-256. */
import type { Scope } from "../domain/scopes.js";
import type { SqlDatabase } from "./sql-database.js";

export interface SessionRecord {
  id: string;
  workspaceId: string;
  secretSha256: string;
  scopes: Scope[];
  userAgent: string;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number;
}

interface SessionRow {
  id: string;
  workspace_id: string;
  secret_sha256: string;
  scopes: string;
  user_agent: string;
  created_at: number;
  expires_at: number;
  last_used_at: number;
}

const toRecord = (r: SessionRow): SessionRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  secretSha256: r.secret_sha256,
  scopes: JSON.parse(r.scopes) as Scope[],
  userAgent: r.user_agent,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  lastUsedAt: Number(r.last_used_at),
});

/**
 * Every write is one statement whose condition is checked on the row it changes, so
 * replicas sharing the database stay correct without locks: a sweep never deletes a
 * session that a concurrent touch has just extended (on Postgres the DELETE re-checks
 * `expires_at` on the updated row), and a touch never revives a session already expired
 * or deleted.
 */
export class SessionStore {
  constructor(private readonly store: SqlDatabase) {}

  async insert(s: SessionRecord): Promise<void> {
    await this.store.db
      .insertInto("sessions")
      .values({ id: s.id, workspace_id: s.workspaceId, secret_sha256: s.secretSha256, scopes: JSON.stringify(s.scopes), user_agent: s.userAgent, created_at: s.createdAt, expires_at: s.expiresAt, last_used_at: s.lastUsedAt })
      .execute();
  }

  async findByDigest(secretSha256: string): Promise<SessionRecord | undefined> {
    const row = await this.store.db.selectFrom("sessions").selectAll().where("secret_sha256", "=", secretSha256).executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Slides the expiry forward on use. Only a live session is touched, and only forward in
   * time (a replica whose touch arrives late, or whose clock is behind, changes nothing).
   * True when the session was updated.
   */
  async touch(id: string, at: number, expiresAt: number): Promise<boolean> {
    const result = await this.store.db
      .updateTable("sessions")
      .set({ last_used_at: at, expires_at: expiresAt })
      .where("id", "=", id)
      .where("expires_at", ">", at)
      .where("last_used_at", "<", at)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes the session holding this secret's digest; true when there was one. */
  async deleteByDigest(secretSha256: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom("sessions").where("secret_sha256", "=", secretSha256).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Deletes the sessions expired at `now`; returns how many this call deleted. */
  async deleteExpired(now: number): Promise<number> {
    const result = await this.store.db.deleteFrom("sessions").where("expires_at", "<=", now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** Sign-in tokens (their SHA-256) in the store's database: a link printed by one replica works at every replica. */
export class SqlSignInTokens {
  constructor(private readonly store: SqlDatabase) {}

  async add(digest: string, expiresAt: number): Promise<void> {
    await this.store.db.insertInto("sign_in_tokens").values({ secret_sha256: digest, expires_at: expiresAt }).execute();
  }

  async expiry(digest: string): Promise<number | undefined> {
    const row = await this.store.db.selectFrom("sign_in_tokens").select("expires_at").where("secret_sha256", "=", digest).executeTakeFirst();
    return row ? Number(row.expires_at) : undefined;
  }

  async deleteExpired(now: number): Promise<void> {
    await this.store.db.deleteFrom("sign_in_tokens").where("expires_at", "<=", now).execute();
  }
}
