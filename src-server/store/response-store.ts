/**
 * Stored responses (the Responses API's `previous_response_id`) in the store's database.
 * Bodies arrive and leave sealed; this store never sees plaintext.
 */
import type { SqlDatabase } from "./sql-database.js";

export interface StoredResponseRecord {
  id: string;
  workspaceId: string;
  keyProvider: string;
  wrappedKey: Buffer;
  /** Sealed JSON: the response as answered and the conversation it ends. */
  body: Buffer;
  createdAt: number;
  /** When the retention ends (Unix seconds); null = kept until deleted. */
  expiresAt: number | null;
}

export class ResponseStore {
  constructor(private readonly store: SqlDatabase) {}

  async insert(r: StoredResponseRecord): Promise<void> {
    await this.store.db
      .insertInto("responses")
      .values({ id: r.id, workspace_id: r.workspaceId, key_provider: r.keyProvider, wrapped_key: r.wrappedKey, body: r.body, created_at: r.createdAt, expires_at: r.expiresAt })
      .execute();
  }

  /** The response if it belongs to the workspace and its retention has not ended. */
  async get(workspaceId: string, id: string, now: number): Promise<StoredResponseRecord | undefined> {
    const row = await this.store.db
      .selectFrom("responses")
      .selectAll()
      .where("id", "=", id)
      .where("workspace_id", "=", workspaceId)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
      .executeTakeFirst();
    return row && { id: row.id, workspaceId: row.workspace_id, keyProvider: row.key_provider, wrappedKey: row.wrapped_key, body: row.body, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  /** The wrapped data key of a response (any workspace), for the keyring. */
  async wrappedKey(id: string): Promise<Buffer | undefined> {
    const row = await this.store.db.selectFrom("responses").select("wrapped_key").where("id", "=", id).executeTakeFirst();
    return row?.wrapped_key;
  }

  /** True when a row was deleted. */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom("responses").where("id", "=", id).where("workspace_id", "=", workspaceId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Deletes every response whose retention has ended; returns their ids. */
  async deleteExpired(now: number): Promise<string[]> {
    const rows = await this.store.db.deleteFrom("responses").where("expires_at", "is not", null).where("expires_at", "<=", now).returning("id").execute();
    return rows.map((r) => r.id);
  }
}
