/**
 * Files uploaded through OpenAI's Files API (`/v1/files`), per workspace, in the store's
 * database (SQLite or Postgres): what they are, and the wrapped data key their sealed bytes
 * are opened with (the bytes are in a `FileBlobStorage`).
 */
import { sql } from "kysely";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { SqlDatabase } from "./sql-database.js";

/** The table as Kysely sees it (kept beside its only store). */
export interface OpenAiFilesTable {
  id: string;
  workspace_id: string;
  filename: string;
  purpose: string;
  bytes: number;
  sha256: string;
  key_provider: string;
  wrapped_key: Buffer;
  created_at: number;
  expires_at: number | null;
}

export interface OpenAiFileRecord {
  id: string;
  workspaceId: string;
  filename: string;
  purpose: string;
  bytes: number;
  sha256: string;
  createdAt: number;
  /** Unix seconds; null = kept until deleted. */
  expiresAt: number | null;
}

const toRecord = (r: OpenAiFilesTable): OpenAiFileRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  filename: r.filename,
  purpose: r.purpose,
  bytes: Number(r.bytes),
  sha256: r.sha256,
  createdAt: Number(r.created_at),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
});

export class OpenAiFileStore {
  constructor(private readonly store: SqlDatabase) {}

  private get db() {
    return this.store.db.withTables<{ openai_files: OpenAiFilesTable }>();
  }

  async insert(file: OpenAiFileRecord, key: { provider: string; wrappedKey: Buffer }): Promise<void> {
    await this.db
      .insertInto("openai_files")
      .values({
        id: file.id,
        workspace_id: file.workspaceId,
        filename: file.filename,
        purpose: file.purpose,
        bytes: file.bytes,
        sha256: file.sha256,
        key_provider: key.provider,
        wrapped_key: key.wrappedKey,
        created_at: file.createdAt,
        expires_at: file.expiresAt,
      })
      .execute();
  }

  /** The file if it exists in `workspaceId` and has not expired by `now` (another workspace's file does not exist for the caller). */
  async get(workspaceId: string, id: string, now: number): Promise<OpenAiFileRecord | undefined> {
    const row = await this.db
      .selectFrom("openai_files")
      .selectAll()
      .where("id", "=", id)
      .where("workspace_id", "=", workspaceId)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** A page of the workspace's files that have not expired, only those of `purpose` when given. */
  async list(workspaceId: string, page: PageRequest, now: number, purpose?: string): Promise<Page<OpenAiFileRecord>> {
    const live = sql`workspace_id = ${workspaceId} AND (expires_at IS NULL OR expires_at > ${now})`;
    const where = purpose === undefined ? live : sql`${live} AND purpose = ${purpose}`;
    const result = await readSqlPage<OpenAiFilesTable>(this.store.db, { table: "openai_files", where }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  /** Ids of files whose expiry has passed (every workspace), oldest first. */
  async expired(now: number, limit = 500): Promise<string[]> {
    const rows = await this.db.selectFrom("openai_files").select("id").where("expires_at", "is not", null).where("expires_at", "<=", now).orderBy("expires_at").limit(limit).execute();
    return rows.map((r) => r.id);
  }

  /** The file whatever its workspace or expiry (clean-up). */
  async getAny(id: string): Promise<OpenAiFileRecord | undefined> {
    const row = await this.db.selectFrom("openai_files").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  async wrappedKey(id: string): Promise<Buffer | undefined> {
    const row = await this.db.selectFrom("openai_files").select("wrapped_key").where("id", "=", id).executeTakeFirst();
    return row ? Buffer.from(row.wrapped_key) : undefined;
  }

  /** Deletes the record and its wrapped key (the sealed bytes become unreadable); true when it existed. */
  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom("openai_files").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
