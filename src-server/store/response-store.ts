/**
 * SQLite access for stored responses (the Responses API's `previous_response_id`).
 * Bodies arrive and leave sealed; this store never sees plaintext.
 */
import type { Database } from "./database.js";

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

interface Row {
  id: string;
  workspace_id: string;
  key_provider: string;
  wrapped_key: Buffer;
  body: Buffer;
  created_at: number;
  expires_at: number | null;
}

export class ResponseStore {
  constructor(private readonly db: Database) {}

  insert(r: StoredResponseRecord): void {
    this.db
      .prepare("INSERT INTO responses (id, workspace_id, key_provider, wrapped_key, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(r.id, r.workspaceId, r.keyProvider, r.wrappedKey, r.body, r.createdAt, r.expiresAt);
  }

  /** The response if it belongs to the workspace and its retention has not ended. */
  get(workspaceId: string, id: string, now: number): StoredResponseRecord | undefined {
    const row = this.db.prepare("SELECT * FROM responses WHERE id = ? AND workspace_id = ? AND (expires_at IS NULL OR expires_at > ?)").get(id, workspaceId, now) as Row | undefined;
    return row && { id: row.id, workspaceId: row.workspace_id, keyProvider: row.key_provider, wrappedKey: row.wrapped_key, body: row.body, createdAt: row.created_at, expiresAt: row.expires_at };
  }

  /** The wrapped data key of a response (any workspace), for the keyring. */
  wrappedKey(id: string): Buffer | undefined {
    return (this.db.prepare("SELECT wrapped_key FROM responses WHERE id = ?").get(id) as { wrapped_key: Buffer } | undefined)?.wrapped_key;
  }

  /** True when a row was deleted. */
  delete(workspaceId: string, id: string): boolean {
    return this.db.prepare("DELETE FROM responses WHERE id = ? AND workspace_id = ?").run(id, workspaceId).changes > 0;
  }

  /** Deletes every response whose retention has ended; returns their ids. */
  deleteExpired(now: number): string[] {
    const rows = this.db.prepare("DELETE FROM responses WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING id").all(now) as { id: string }[];
    return rows.map((r) => r.id);
  }
}
