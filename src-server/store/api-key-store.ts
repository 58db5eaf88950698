/** SQLite access for API keys. Secrets are never stored, only their SHA-256. */
import type { Scope } from "../domain/scopes.js";
import type { Database } from "./database.js";
import { readPage, type Page, type PageRequest } from "./pagination.js";

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

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  prefix: row.prefix,
  secretSha256: row.secret_sha256,
  scopes: JSON.parse(row.scopes) as Scope[],
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
});

export class ApiKeyStore {
  constructor(private readonly db: Database) {}

  insert(record: ApiKeyRecord): void {
    this.db
      .prepare(
        `INSERT INTO api_keys (id, workspace_id, name, prefix, secret_sha256, scopes, created_at, expires_at, revoked_at, last_used_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        record.id,
        record.workspaceId,
        record.name,
        record.prefix,
        record.secretSha256,
        JSON.stringify(record.scopes),
        record.createdAt,
        record.expiresAt,
        record.revokedAt,
        record.lastUsedAt,
      );
  }

  get(id: string): ApiKeyRecord | undefined {
    const row = this.db.prepare("SELECT * FROM api_keys WHERE id = ?").get(id) as ApiKeyRow | undefined;
    return row && toRecord(row);
  }

  /** Candidates for a presented secret; the caller compares digests in constant time. */
  findByPrefix(prefix: string): ApiKeyRecord[] {
    return (this.db.prepare("SELECT * FROM api_keys WHERE prefix = ?").all(prefix) as ApiKeyRow[]).map(toRecord);
  }

  findByDigest(secretSha256: string): ApiKeyRecord | undefined {
    const row = this.db.prepare("SELECT * FROM api_keys WHERE secret_sha256 = ?").get(secretSha256) as ApiKeyRow | undefined;
    return row && toRecord(row);
  }

  countActive(workspaceId: string): number {
    const row = this.db
      .prepare("SELECT COUNT(*) AS n FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL")
      .get(workspaceId) as { n: number };
    return row.n;
  }

  list(workspaceId: string, page: PageRequest): Page<ApiKeyRecord> {
    const result = readPage<ApiKeyRow>(this.db, { table: "api_keys", where: "workspace_id = ?", params: [workspaceId] }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  revoke(id: string, at: number): void {
    this.db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id);
  }

  touch(id: string, at: number): void {
    this.db.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").run(at, id);
  }
}
