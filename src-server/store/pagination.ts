/**
 * Cursor pagination over tables ordered by (created_at, id), shared by every list.
 */
import { sql, type RawBuilder } from "kysely";
import type { Database } from "./database.js";
import type { Sql } from "./sql-database.js";

export interface PageRequest {
  /** 1–100. */
  limit: number;
  order: "asc" | "desc";
  /** Return items after this id in the chosen order. */
  after?: string | undefined;
  /** Return items before this id in the chosen order. */
  before?: string | undefined;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export interface PageQuery {
  table: string;
  /** SQL condition on the table's columns (trusted, from code), e.g. `workspace_id = ?`. */
  where: string;
  params: unknown[];
}

/**
 * Reads one page of rows. A cursor that does not exist (or belongs elsewhere) gives an
 * empty page rather than an error, as OpenAI's lists do.
 */
export function readPage<Row>(db: Database, query: PageQuery, page: PageRequest): Page<Row> {
  const conditions = [query.where];
  const params = [...query.params];
  // "after" walks forward in the requested order, "before" walks backward.
  const cursorCondition = (cursor: string, forward: boolean): void => {
    const ascending = (page.order === "asc") === forward;
    const cmp = ascending ? ">" : "<";
    conditions.push(`(created_at, id) ${cmp} (SELECT created_at, id FROM ${query.table} WHERE id = ? AND ${query.where})`);
    params.push(cursor, ...query.params);
  };
  if (page.after) cursorCondition(page.after, true);
  if (page.before) cursorCondition(page.before, false);
  // With only "before", read backwards from the cursor and reverse, so the page touches it.
  const reverse = Boolean(page.before && !page.after);
  const ascending = (page.order === "asc") !== reverse;
  const direction = ascending ? "ASC" : "DESC";
  const sql = `SELECT * FROM ${query.table} WHERE ${conditions.join(" AND ")} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`;
  const rows = db.prepare(sql).all(...params, page.limit + 1) as Row[];
  const hasMore = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (reverse) data.reverse();
  return { data, hasMore };
}

/** A page's query on the asynchronous store: a table and a condition written with Kysely's `sql` tag. */
export interface SqlPageQuery {
  table: "workspaces" | "api_keys" | "corpora" | "documents" | "service_accounts" | "tombstones" | "openai_files" | "vector_store_files";
  /** e.g. sql`workspace_id = ${workspaceId}` (parameters stay parameters). */
  where: RawBuilder<unknown>;
  /** The order: creation (default), or `position` (documents within their parent); ties by id. */
  key?: "created_at" | "position";
}

/** `readPage` on SQLite or Postgres (the same query, compiled for each by Kysely). */
export async function readSqlPage<Row>(db: Sql, query: SqlPageQuery, page: PageRequest): Promise<Page<Row>> {
  const table = sql.table(query.table);
  // A linked document stored without a place (none should be) sorts first, by id.
  const key = query.key === "position" ? sql.raw("COALESCE(position, 0)") : sql.ref("created_at");
  const conditions: RawBuilder<unknown>[] = [query.where];
  const cursorCondition = (cursor: string, forward: boolean): void => {
    const ascending = (page.order === "asc") === forward;
    conditions.push(sql`(${key}, id) ${sql.raw(ascending ? ">" : "<")} (SELECT ${key}, id FROM ${table} WHERE id = ${cursor} AND ${query.where})`);
  };
  if (page.after) cursorCondition(page.after, true);
  if (page.before) cursorCondition(page.before, false);
  const reverse = Boolean(page.before && !page.after);
  const direction = sql.raw((page.order === "asc") !== reverse ? "ASC" : "DESC");
  const { rows } = await sql<Row>`SELECT * FROM ${table} WHERE ${sql.join(conditions, sql` AND `)} ORDER BY ${key} ${direction}, id ${direction} LIMIT ${page.limit + 1}`.execute(db);
  const hasMore = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (reverse) data.reverse();
  return { data, hasMore };
}
