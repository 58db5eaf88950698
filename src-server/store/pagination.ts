/**
 * Cursor pagination over tables ordered by (created_at, id), shared by every list.
 */
import type { Database } from "./database.js";

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
