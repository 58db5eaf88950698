/** Service accounts and used OAuth assertions in the store's database. Secrets are stored only as their SHA-256. */
import { sql } from "kysely";
import type { Scope } from "../domain/scopes.js";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { ServiceAccountsTable } from "./schema.js";
import type { SqlDatabase } from "./sql-database.js";

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

type Row = ServiceAccountsTable;

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
  constructor(private readonly store: SqlDatabase) {}

  async insert(a: ServiceAccountRecord): Promise<void> {
    await this.store.db
      .insertInto("service_accounts")
      .values({
        id: a.id,
        workspace_id: a.workspaceId,
        name: a.name,
        scopes: JSON.stringify(a.scopes),
        secret_prefix: a.secretPrefix,
        secret_sha256: a.secretSha256,
        public_jwk: a.publicJwk === null ? null : JSON.stringify(a.publicJwk),
        disabled_at: a.disabledAt,
        created_at: a.createdAt,
        last_token_at: a.lastTokenAt,
      })
      .execute();
  }

  async get(id: string): Promise<ServiceAccountRecord | undefined> {
    const row = await this.store.db.selectFrom("service_accounts").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async list(workspaceId: string, page: PageRequest): Promise<Page<ServiceAccountRecord>> {
    const result = await readSqlPage<Row>(this.store.db, { table: "service_accounts", where: sql`workspace_id = ${workspaceId}` }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  async update(id: string, fields: Partial<Pick<ServiceAccountRecord, "name" | "scopes" | "secretPrefix" | "secretSha256" | "publicJwk" | "disabledAt" | "lastTokenAt">>): Promise<void> {
    const set: Partial<Omit<Row, "id" | "workspace_id" | "created_at">> = {};
    if (fields.name !== undefined) set.name = fields.name;
    if (fields.scopes !== undefined) set.scopes = JSON.stringify(fields.scopes);
    if (fields.secretPrefix !== undefined) set.secret_prefix = fields.secretPrefix;
    if (fields.secretSha256 !== undefined) set.secret_sha256 = fields.secretSha256;
    if (fields.publicJwk !== undefined) set.public_jwk = fields.publicJwk === null ? null : JSON.stringify(fields.publicJwk);
    if (fields.disabledAt !== undefined) set.disabled_at = fields.disabledAt;
    if (fields.lastTokenAt !== undefined) set.last_token_at = fields.lastTokenAt;
    if (Object.keys(set).length === 0) return;
    await this.store.db.updateTable("service_accounts").set(set).where("id", "=", id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.store.db.deleteFrom("service_accounts").where("id", "=", id).execute();
  }

  /**
   * Records an assertion's `jti`; false when it was already used (a replay). Expired records
   * are dropped first. The insert itself is the test: (client_id, jti) is the primary key,
   * so of two requests racing with one assertion, on one replica or several, exactly one
   * inserts the row and the other meets the conflict (Postgres makes it wait for the first
   * to commit, and inserts after all if the first rolled back).
   */
  async useAssertion(clientId: string, jti: string, expiresAt: number, now: number): Promise<boolean> {
    // Its own statement, not a transaction with the insert: a record is dropped only once its
    // assertion has expired too, so nothing this deletes could make a replay pass.
    await this.store.db.deleteFrom("oauth_used_assertions").where("expires_at", "<", now).execute();
    const result = await this.store.db
      .insertInto("oauth_used_assertions")
      .values({ jti, client_id: clientId, expires_at: expiresAt })
      .onConflict((oc) => oc.columns(["client_id", "jti"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}
