/** SQLite access for browser sessions. Secrets are never stored, only their SHA-256. */
import type { Scope } from "../domain/scopes.js";
import type { Database } from "./database.js";

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
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
});

export class SessionStore {
  constructor(private readonly db: Database) {}

  insert(s: SessionRecord): void {
    this.db
      .prepare("INSERT INTO sessions (id, workspace_id, secret_sha256, scopes, user_agent, created_at, expires_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .run(s.id, s.workspaceId, s.secretSha256, JSON.stringify(s.scopes), s.userAgent, s.createdAt, s.expiresAt, s.lastUsedAt);
  }

  findByDigest(secretSha256: string): SessionRecord | undefined {
    const row = this.db.prepare("SELECT * FROM sessions WHERE secret_sha256 = ?").get(secretSha256) as SessionRow | undefined;
    return row && toRecord(row);
  }

  /** Slides the expiry forward on use. */
  touch(id: string, at: number, expiresAt: number): void {
    this.db.prepare("UPDATE sessions SET last_used_at = ?, expires_at = ? WHERE id = ?").run(at, expiresAt, id);
  }

  delete(id: string): void {
    this.db.prepare("DELETE FROM sessions WHERE id = ?").run(id);
  }

  deleteExpired(now: number): number {
    return this.db.prepare("DELETE FROM sessions WHERE expires_at <= ?").run(now).changes;
  }
}
