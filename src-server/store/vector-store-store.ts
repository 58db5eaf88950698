/**
 * What OpenAI's vector stores add to corpora, in the store's database (SQLite or Postgres):
 * a store's expiry policy and last activity (`vector_stores`), the files attached to it and
 * the documents they became (`vector_store_files`), and batches of attachments
 * (`vector_store_file_batches`). Every row goes with its corpus (foreign keys), and an
 * attachment goes with its document and its file.
 */
import { sql, type RawBuilder } from "kysely";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { SqlDatabase } from "./sql-database.js";

interface VectorStoresTable {
  corpus_id: string;
  description: string | null;
  expires_after_days: number | null;
  last_active_at: number;
  expired_at: number | null;
}

interface VectorStoreFilesTable {
  corpus_id: string;
  id: string;
  document_id: string | null;
  borrowed: number;
  batch_id: string | null;
  state: string;
  error_code: string | null;
  error_message: string | null;
  attributes: string;
  chunking: string;
  created_at: number;
}

interface VectorStoreFileBatchesTable {
  id: string;
  corpus_id: string;
  cancelled_at: number | null;
  created_at: number;
}

type Tables = { vector_stores: VectorStoresTable; vector_store_files: VectorStoreFilesTable; vector_store_file_batches: VectorStoreFileBatchesTable };

/** A vector store's own settings (a corpus without them never expires). */
export interface VectorStoreSettings {
  corpusId: string;
  description: string | null;
  /** Days after `lastActiveAt` when it expires; null = never. */
  expiresAfterDays: number | null;
  lastActiveAt: number;
  /** When its expiry was enforced (its documents deleted); null while it has not expired. */
  expiredAt: number | null;
}

/** OpenAI's status of a file in a vector store, derived from its attachment and its document. */
export type VectorStoreFileStatus = "in_progress" | "completed" | "failed" | "cancelled";

export type Attributes = Record<string, string | number | boolean>;

/** How a file is to be chunked, as the request said: Pustaka's own (`auto`) or fixed windows. */
export type FileChunking = { type: "auto" } | { type: "static"; maxChunkSizeTokens: number; chunkOverlapTokens: number };

export interface AttachmentRecord {
  corpusId: string;
  fileId: string;
  documentId: string | null;
  /** The document was the corpus's own (uploaded directly): detaching never deletes it. */
  borrowed: boolean;
  batchId: string | null;
  /** `attached`: its document says how it stands; `failed`: refused before it became one; `cancelled`. */
  state: "attached" | "failed" | "cancelled";
  error: { code: string; message: string } | null;
  attributes: Attributes;
  chunking: FileChunking;
  createdAt: number;
}

/** An attachment with its status and what its document takes in the index. */
export interface AttachmentView extends AttachmentRecord {
  status: VectorStoreFileStatus;
  /** The document's own failure (indexing), when it failed there. */
  documentError: { code: string; message: string } | null;
  usageBytes: number;
}

export interface FileCounts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

export interface BatchRecord {
  id: string;
  corpusId: string;
  cancelledAt: number | null;
  createdAt: number;
}

/** The status of a `vector_store_files` row, in SQL (unqualified columns are the row's). */
const STATUS: RawBuilder<VectorStoreFileStatus> = sql`(CASE WHEN state = 'cancelled' THEN 'cancelled' WHEN state = 'failed' THEN 'failed' ELSE COALESCE((SELECT CASE d.status WHEN 'indexed' THEN 'completed' WHEN 'failed' THEN 'failed' ELSE 'in_progress' END FROM documents d WHERE d.id = document_id), 'failed') END)`;

const toAttachment = (r: VectorStoreFilesTable): AttachmentRecord => ({
  corpusId: r.corpus_id,
  fileId: r.id,
  documentId: r.document_id,
  borrowed: Number(r.borrowed) === 1,
  batchId: r.batch_id,
  state: r.state as AttachmentRecord["state"],
  error: r.error_code ? { code: r.error_code, message: r.error_message ?? "" } : null,
  attributes: JSON.parse(r.attributes) as Attributes,
  chunking: JSON.parse(r.chunking) as FileChunking,
  createdAt: Number(r.created_at),
});

const toSettings = (r: VectorStoresTable): VectorStoreSettings => ({
  corpusId: r.corpus_id,
  description: r.description,
  expiresAfterDays: r.expires_after_days === null ? null : Number(r.expires_after_days),
  lastActiveAt: Number(r.last_active_at),
  expiredAt: r.expired_at === null ? null : Number(r.expired_at),
});

const emptyCounts = (): FileCounts => ({ in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 });

export class VectorStoreStore {
  constructor(private readonly store: SqlDatabase) {}

  private get db() {
    return this.store.db.withTables<Tables>();
  }

  // ── vector stores ──

  async settings(corpusId: string): Promise<VectorStoreSettings | undefined> {
    const row = await this.db.selectFrom("vector_stores").selectAll().where("corpus_id", "=", corpusId).executeTakeFirst();
    return row && toSettings(row);
  }

  /** The settings of several corpora at once (those that have some). */
  async settingsOf(corpusIds: readonly string[]): Promise<Map<string, VectorStoreSettings>> {
    if (corpusIds.length === 0) return new Map();
    const rows = await this.db.selectFrom("vector_stores").selectAll().where("corpus_id", "in", [...corpusIds]).execute();
    return new Map(rows.map((r) => [r.corpus_id, toSettings(r)]));
  }

  /** Stores (or replaces) a corpus's vector-store settings. */
  async putSettings(s: VectorStoreSettings): Promise<void> {
    const values = { corpus_id: s.corpusId, description: s.description, expires_after_days: s.expiresAfterDays, last_active_at: s.lastActiveAt, expired_at: s.expiredAt };
    await this.db
      .insertInto("vector_stores")
      .values(values)
      .onConflict((oc) => oc.column("corpus_id").doUpdateSet({ description: values.description, expires_after_days: values.expires_after_days, last_active_at: values.last_active_at, expired_at: values.expired_at }))
      .execute();
  }

  /** Records activity (a search, an attachment): expiry counts from here. Nothing for a store that expired. */
  async touch(corpusId: string, at: number): Promise<void> {
    await this.db.updateTable("vector_stores").set({ last_active_at: at }).where("corpus_id", "=", corpusId).where("expired_at", "is", null).execute();
  }

  /** Marks the store expired (once: false when it already was). */
  async markExpired(corpusId: string, at: number): Promise<boolean> {
    const result = await this.db.updateTable("vector_stores").set({ expired_at: at }).where("corpus_id", "=", corpusId).where("expired_at", "is", null).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Corpora whose store's expiry has passed by `now` but has not been enforced. */
  async dueToExpire(now: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom("vector_stores")
      .select("corpus_id")
      .where("expired_at", "is", null)
      .where("expires_after_days", "is not", null)
      .where(sql<boolean>`last_active_at + expires_after_days * 86400 <= ${now}`)
      .execute();
    return rows.map((r) => r.corpus_id);
  }

  // ── attachments ──

  /**
   * Stores an attachment, or replaces one that failed or was cancelled (attaching again
   * retries it). False, storing nothing, when the file is attached already and stands.
   */
  async attach(a: AttachmentRecord): Promise<boolean> {
    const values = {
      corpus_id: a.corpusId,
      id: a.fileId,
      document_id: a.documentId,
      borrowed: a.borrowed ? 1 : 0,
      batch_id: a.batchId,
      state: a.state,
      error_code: a.error?.code ?? null,
      error_message: a.error?.message ?? null,
      attributes: JSON.stringify(a.attributes),
      chunking: JSON.stringify(a.chunking),
      created_at: a.createdAt,
    };
    const { corpus_id: _c, id: _i, ...rest } = values;
    const result = await this.db
      .insertInto("vector_store_files")
      .values(values)
      .onConflict((oc) => oc.columns(["corpus_id", "id"]).doUpdateSet(rest).where("vector_store_files.state", "<>", "attached"))
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async attachment(corpusId: string, fileId: string): Promise<AttachmentView | undefined> {
    const row = await this.db.selectFrom("vector_store_files").selectAll().where("corpus_id", "=", corpusId).where("id", "=", fileId).executeTakeFirst();
    return row && (await this.views([toAttachment(row)]))[0];
  }

  /** A page of a store's attachments (of one batch with `batchId`), only those in `status` when given. */
  async attachments(corpusId: string, page: PageRequest, filter: { status?: VectorStoreFileStatus | undefined; batchId?: string | undefined } = {}): Promise<Page<AttachmentView>> {
    let where = sql`corpus_id = ${corpusId}`;
    if (filter.batchId !== undefined) where = sql`${where} AND batch_id = ${filter.batchId}`;
    if (filter.status !== undefined) where = sql`${where} AND ${STATUS} = ${filter.status}`;
    const result = await readSqlPage<VectorStoreFilesTable>(this.store.db, { table: "vector_store_files", where }, page);
    return { data: await this.views(result.data.map(toAttachment)), hasMore: result.hasMore };
  }

  /** Every attachment of a file, in every store (a file deleted leaves every store). */
  async attachmentsOfFile(fileId: string): Promise<AttachmentRecord[]> {
    const rows = await this.db.selectFrom("vector_store_files").selectAll().where("id", "=", fileId).orderBy("created_at").execute();
    return rows.map(toAttachment);
  }

  /** The attachments of a batch, in order. */
  async attachmentsOfBatch(batchId: string): Promise<AttachmentRecord[]> {
    const rows = await this.db.selectFrom("vector_store_files").selectAll().where("batch_id", "=", batchId).orderBy("created_at").orderBy("id").execute();
    return rows.map(toAttachment);
  }

  /** A standing attachment joins a later batch that names its file again (the batch then counts it). */
  async moveToBatch(corpusId: string, fileId: string, batchId: string): Promise<void> {
    await this.db.updateTable("vector_store_files").set({ batch_id: batchId }).where("corpus_id", "=", corpusId).where("id", "=", fileId).execute();
  }

  /** The file id each of these documents was attached as (documents uploaded to the corpus directly have none). */
  async fileIdsOf(corpusId: string, documentIds: readonly string[]): Promise<Map<string, string>> {
    if (documentIds.length === 0) return new Map();
    const rows = await this.db.selectFrom("vector_store_files").select(["id", "document_id"]).where("corpus_id", "=", corpusId).where("document_id", "in", [...documentIds]).orderBy("created_at").execute();
    const out = new Map<string, string>();
    for (const r of rows) if (r.document_id && !out.has(r.document_id)) out.set(r.document_id, r.id);
    return out;
  }

  /** Whether a document is borrowed by the attachments that share it (undefined: none does). */
  async borrowed(documentId: string): Promise<boolean | undefined> {
    const row = await this.db.selectFrom("vector_store_files").select("borrowed").where("document_id", "=", documentId).limit(1).executeTakeFirst();
    return row && Number(row.borrowed) === 1;
  }

  /** How many attachments point at a document (two files with the same content share it). */
  async referencesTo(documentId: string): Promise<number> {
    const row = await this.db.selectFrom("vector_store_files").select((eb) => eb.fn.countAll<number>().as("n")).where("document_id", "=", documentId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The attachment's new attributes, mirrored into its document's metadata (so `/v1/rag` filters and the workbench see them). */
  async setAttributes(corpusId: string, fileId: string, attributes: Attributes): Promise<void> {
    await this.store.transaction(async (tx) => {
      const db = tx.withTables<Tables>();
      const row = await db.updateTable("vector_store_files").set({ attributes: JSON.stringify(attributes) }).where("corpus_id", "=", corpusId).where("id", "=", fileId).returning("document_id").executeTakeFirst();
      if (row?.document_id) await db.updateTable("documents").set({ metadata: JSON.stringify(attributes) }).where("id", "=", row.document_id).execute();
    });
  }

  /** Marks an attachment cancelled and forgets its document (the caller deletes that). */
  async cancel(corpusId: string, fileId: string): Promise<void> {
    await this.db.updateTable("vector_store_files").set({ state: "cancelled", document_id: null }).where("corpus_id", "=", corpusId).where("id", "=", fileId).execute();
  }

  async detach(corpusId: string, fileId: string): Promise<boolean> {
    const result = await this.db.deleteFrom("vector_store_files").where("corpus_id", "=", corpusId).where("id", "=", fileId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Counts by status of a store's attachments, or of one batch's. */
  async counts(which: { corpusId: string } | { batchId: string }): Promise<FileCounts> {
    const where = "corpusId" in which ? sql`corpus_id = ${which.corpusId}` : sql`batch_id = ${which.batchId}`;
    const { rows } = await sql<{ status: VectorStoreFileStatus; n: number | string }>`SELECT ${STATUS} AS status, COUNT(*) AS n FROM vector_store_files WHERE ${where} GROUP BY 1`.execute(this.store.db);
    const counts = emptyCounts();
    for (const { status, n } of rows) {
      counts[status] += Number(n);
      counts.total += Number(n);
    }
    return counts;
  }

  /** How the indexer is to chunk a document attached as a file (null: as its corpus says). */
  async chunkingOf(documentId: string): Promise<FileChunking | null> {
    const row = await this.db.selectFrom("vector_store_files").select("chunking").where("document_id", "=", documentId).limit(1).executeTakeFirst();
    return row ? (JSON.parse(row.chunking) as FileChunking) : null;
  }

  /** Bytes the index holds for a corpus (chunk text and vectors, sealed), or for some of its documents. */
  async usageBytes(corpusId: string): Promise<number> {
    const { rows } = await sql<{ n: number | string | null }>`SELECT SUM(LENGTH(content) + LENGTH(vector)) AS n FROM chunks WHERE corpus_id = ${corpusId}`.execute(this.store.db);
    return Number(rows[0]?.n ?? 0);
  }

  private async documentUsage(documentIds: readonly string[]): Promise<Map<string, number>> {
    if (documentIds.length === 0) return new Map();
    const { rows } = await sql<{ document_id: string; n: number | string | null }>`SELECT document_id, SUM(LENGTH(content) + LENGTH(vector)) AS n FROM chunks WHERE document_id IN (${sql.join([...documentIds])}) GROUP BY document_id`.execute(this.store.db);
    return new Map(rows.map((r) => [r.document_id, Number(r.n ?? 0)]));
  }

  /** Attachments with their status and usage, their documents read in one query. */
  private async views(records: AttachmentRecord[]): Promise<AttachmentView[]> {
    const ids = [...new Set(records.map((r) => r.documentId).filter((id): id is string => id !== null))];
    const documents = ids.length === 0 ? [] : await this.db.selectFrom("documents").select(["id", "status", "error_code", "error_message"]).where("id", "in", ids).execute();
    const byId = new Map(documents.map((d) => [d.id, d]));
    const usage = await this.documentUsage(ids);
    return records.map((r) => {
      const document = r.documentId ? byId.get(r.documentId) : undefined;
      let status: VectorStoreFileStatus;
      if (r.state === "cancelled") status = "cancelled";
      else if (r.state === "failed" || !document) status = "failed";
      else status = document.status === "indexed" ? "completed" : document.status === "failed" ? "failed" : "in_progress";
      const documentError = document?.status === "failed" && document.error_code ? { code: document.error_code, message: document.error_message ?? "" } : null;
      return { ...r, status, documentError, usageBytes: r.documentId ? (usage.get(r.documentId) ?? 0) : 0 };
    });
  }

  // ── batches ──

  async insertBatch(b: BatchRecord): Promise<void> {
    await this.db.insertInto("vector_store_file_batches").values({ id: b.id, corpus_id: b.corpusId, cancelled_at: b.cancelledAt, created_at: b.createdAt }).execute();
  }

  async batch(corpusId: string, id: string): Promise<BatchRecord | undefined> {
    const row = await this.db.selectFrom("vector_store_file_batches").selectAll().where("corpus_id", "=", corpusId).where("id", "=", id).executeTakeFirst();
    return row && { id: row.id, corpusId: row.corpus_id, cancelledAt: row.cancelled_at === null ? null : Number(row.cancelled_at), createdAt: Number(row.created_at) };
  }

  async markBatchCancelled(id: string, at: number): Promise<void> {
    await this.db.updateTable("vector_store_file_batches").set({ cancelled_at: at }).where("id", "=", id).where("cancelled_at", "is", null).execute();
  }
}
