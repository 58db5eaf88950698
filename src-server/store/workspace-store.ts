/** Workspaces in the store's database (SQLite or Postgres). */
import { sql } from "kysely";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { SqlDatabase } from "./sql-database.js";

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: number;
}

interface WorkspaceRow {
  id: string;
  name: string;
  created_at: number;
}

const toRecord = (row: WorkspaceRow): WorkspaceRecord => ({ id: row.id, name: row.name, createdAt: Number(row.created_at) });

export class WorkspaceStore {
  constructor(private readonly store: SqlDatabase) {}

  async insert(record: WorkspaceRecord): Promise<void> {
    await this.store.db.insertInto("workspaces").values({ id: record.id, name: record.name, created_at: record.createdAt }).execute();
  }

  /**
   * Inserts the workspace unless one with its id exists (replicas bootstrapping the
   * default workspace together). True when this call created it.
   */
  async insertIfAbsent(record: WorkspaceRecord): Promise<boolean> {
    const result = await this.store.db
      .insertInto("workspaces")
      .values({ id: record.id, name: record.name, created_at: record.createdAt })
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async get(id: string): Promise<WorkspaceRecord | undefined> {
    const row = await this.store.db.selectFrom("workspaces").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(page: PageRequest): Promise<Page<WorkspaceRecord>> {
    const result = await readSqlPage<WorkspaceRow>(this.store.db, { table: "workspaces", where: sql`1 = 1` }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }
}
