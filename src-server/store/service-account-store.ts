/** SQLite access for service accounts and used OAuth assertions. Secrets are stored only as their SHA-256. */
import type { Scope } from "../domain/scopes.js";
import type { Database } from "./database.js";
import { readPage, type Page, type PageRequest } from "./pagination.js";

export interface ServiceAccountRecord {
  id: string;
  workspaceId: string;
  name: string;
  scopes: Scope[];
  secretPrefix: string | null;
  secretSha256: string | null;
  publicJwk: Record<string, unknown> | null;
  disabledAt: number | null;
  createdAt: number;
  lastTokenAt: number | null;
}

interface Row {
  id: string;
  workspace_id: string;
  name: string;
  scopes: string;
  secret_prefix: string | null;
  secret_sha256: string | null;
  public_jwk: string | null;
  disabled_at: number | null;
  created_at: number;
  last_token_at: number | null;
}

const toRecord = (r: Row): ServiceAccountRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  scopes: JSON.parse(r.scopes) as Scope[],
  secretPrefix: r.secret_prefix,
  secretSha256: r.secret_sha256,
  publicJwk: r.public_jwk === null ? null : (JSON.parse(r.public_jwk) as Record<string, unknown>),
  disabledAt: r.disabled_at,
  createdAt: r.created_at,
  lastTokenAt: r.last_token_at,
});

export class ServiceAccountStore {
  constructor(private readonly db: Database) {}

  insert(a: ServiceAccountRecord): void {
    this.db
      .prepare(
        `INSERT INTO service_accounts (id, workspace_id, name, scopes, secret_prefix, secret_sha256, public_jwk, disabled_at, created_at, last_token_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(a.id, a.workspaceId, a.name, JSON.stringify(a.scopes), a.secretPrefix, a.secretSha256, a.publicJwk === null ? null : JSON.stringify(a.publicJwk), a.disabledAt, a.createdAt, a.lastTokenAt);
  }

  get(id: string): ServiceAccountRecord | undefined {
    const row = this.db.prepare<[string], Row>("SELECT * FROM service_accounts WHERE id = ?").get(id);
    return row ? toRecord(row) : undefined;
  }

  list(workspaceId: string, page: PageRequest): Page<ServiceAccountRecord> {
    const result = readPage<Row>(this.db, { table: "service_accounts", where: "workspace_id = ?", params: [workspaceId] }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  update(id: string, fields: Partial<Pick<ServiceAccountRecord, "name" | "scopes" | "secretPrefix" | "secretSha256" | "publicJwk" | "disabledAt" | "lastTokenAt">>): void {
    const sets: string[] = [];
    const params: unknown[] = [];
    const column = { name: "name", scopes: "scopes", secretPrefix: "secret_prefix", secretSha256: "secret_sha256", publicJwk: "public_jwk", disabledAt: "disabled_at", lastTokenAt: "last_token_at" } as const;
    for (const [key, value] of Object.entries(fields) as [keyof typeof column, unknown][]) {
      if (value === undefined) continue;
      sets.push(`${column[key]} = ?`);
      params.push(key === "scopes" || (key === "publicJwk" && value !== null) ? JSON.stringify(value) : value);
    }
    if (sets.length === 0) return;
    this.db.prepare(`UPDATE service_accounts SET ${sets.join(", ")} WHERE id = ?`).run(...params, id);
  }

  delete(id: string): void {
    this.db.prepare("DELETE FROM service_accounts WHERE id = ?").run(id);
  }

  /** Records an assertion's `jti`; false when it was already used (a replay). Expired records are dropped first. */
  useAssertion(clientId: string, jti: string, expiresAt: number, now: number): boolean {
    return this.db.transaction(() => {
      this.db.prepare("DELETE FROM oauth_used_assertions WHERE expires_at < ?").run(now);
      const result = this.db.prepare("INSERT OR IGNORE INTO oauth_used_assertions (jti, client_id, expires_at) VALUES (?, ?, ?)").run(jti, clientId, expiresAt);
      return result.changes === 1;
    })();
  }
}
