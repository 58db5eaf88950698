/** Corpora and their wrapped data keys, in the store's database (SQLite or Postgres). */
import { sql, type Updateable } from "kysely";
import type { ChunkingStrategy, EmbeddingPrompts, SearchDefaults } from "../domain/vocabulary.js";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { CorporaTable } from "./schema.js";
import type { SqlDatabase } from "./sql-database.js";

export interface CorpusRecord {
  id: string;
  workspaceId: string;
  name: string;
  chunking: ChunkingStrategy;
  embeddingModel: string;
  dimensions: number;
  /** What the chunks were embedded with, and what queries get (fixed at creation). */
  embeddingPrompts: EmbeddingPrompts;
  /** The reranker its queries use unless a query says otherwise; null for none. */
  rerankModel: string | null;
  /** How its searches run when a request does not say; null for the server's defaults. */
  searchDefaults: SearchDefaults | null;
  /** Languages its scans and images are read in by OCR (Tesseract codes); null or absent: the default (eng, msa). */
  ocrLanguages?: string[] | null;
  retentionDays: number;
  metadata: Record<string, string>;
  createdAt: number;
  updatedAt: number;
}

interface CorpusRow {
  id: string;
  workspace_id: string;
  name: string;
  chunking: string;
  embedding_model: string;
  dimensions: number;
  query_prompt: string;
  document_prompt: string;
  rerank_model: string | null;
  search_defaults: string | null;
  ocr_languages?: string | null;
  retention_days: number;
  metadata: string;
  created_at: number;
  updated_at: number;
}

const toRecord = (r: CorpusRow): CorpusRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  chunking: r.chunking as ChunkingStrategy,
  embeddingModel: r.embedding_model,
  dimensions: Number(r.dimensions),
  embeddingPrompts: { query: r.query_prompt, document: r.document_prompt },
  rerankModel: r.rerank_model ?? null,
  searchDefaults: r.search_defaults ? (JSON.parse(r.search_defaults) as SearchDefaults) : null,
  ...(r.ocr_languages ? { ocrLanguages: JSON.parse(r.ocr_languages) as string[] } : {}),
  retentionDays: Number(r.retention_days),
  metadata: JSON.parse(r.metadata) as Record<string, string>,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export interface DocumentCounts {
  queued: number;
  processing: number;
  indexed: number;
  failed: number;
  total: number;
}

/** A corpus's data key as stored: wrapped by the key provider `provider`. */
export interface StoredCorpusKey {
  provider: string;
  wrappedKey: Buffer;
  /** When the purge may destroy it (Unix seconds) once no corpus or tombstone needs it; null while its corpus exists. */
  destroyAfter: number | null;
}

export class CorpusStore {
  constructor(private readonly store: SqlDatabase) {}

  /**
   * Stores the corpus and, in the same transaction, its data key: inserted unless the
   * key is stored already (`CorpusKeyring.create` stores it first), and claimed by the
   * corpus (no longer due for destruction). Throws, storing nothing, when a different
   * key is stored for this id: data sealed under `key` could never be opened.
   */
  async insert(c: CorpusRecord, key: { provider: string; wrappedKey: Buffer }): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx
        .insertInto("corpora")
        .values({
          id: c.id,
          workspace_id: c.workspaceId,
          name: c.name,
          chunking: c.chunking,
          embedding_model: c.embeddingModel,
          dimensions: c.dimensions,
          query_prompt: c.embeddingPrompts.query,
          document_prompt: c.embeddingPrompts.document,
          rerank_model: c.rerankModel,
          search_defaults: c.searchDefaults && JSON.stringify(c.searchDefaults),
          ocr_languages: c.ocrLanguages ? JSON.stringify(c.ocrLanguages) : null,
          retention_days: c.retentionDays,
          metadata: JSON.stringify(c.metadata),
          created_at: c.createdAt,
          updated_at: c.updatedAt,
        })
        .execute();
      await tx
        .insertInto("corpus_keys")
        .values({ corpus_id: c.id, provider: key.provider, wrapped_key: key.wrappedKey, created_at: c.createdAt, destroy_after: null })
        .onConflict((oc) => oc.column("corpus_id").doNothing())
        .execute();
      const stored = await tx.updateTable("corpus_keys").set({ destroy_after: null }).where("corpus_id", "=", c.id).returning("wrapped_key").executeTakeFirstOrThrow();
      if (!Buffer.from(stored.wrapped_key).equals(key.wrappedKey)) throw new Error(`corpus ${c.id} already has a different data key stored; nothing was stored`);
    });
  }

  /**
   * Stores a corpus's data key unless one is stored already (insert-if-absent), then
   * reads back the one stored: whoever inserted first wins, and every caller gets the
   * same key. A key inserted here is due for destruction at `destroyAfter` unless its
   * corpus is stored by then (`insert` claims it), so a corpus that never came to be
   * leaves no key behind.
   */
  async insertKeyIfAbsent(id: string, key: { provider: string; wrappedKey: Buffer }, at: number, destroyAfter: number): Promise<StoredCorpusKey> {
    // Only the purge deletes a key, and not one this young; should it have between the two
    // statements, the caller's key is stored again.
    for (let attempt = 0; attempt < 3; attempt++) {
      await this.store.db
        .insertInto("corpus_keys")
        .values({ corpus_id: id, provider: key.provider, wrapped_key: key.wrappedKey, created_at: at, destroy_after: destroyAfter })
        .onConflict((oc) => oc.column("corpus_id").doNothing())
        .execute();
      const stored = await this.wrappedKey(id);
      if (stored) return stored;
    }
    throw new Error(`the data key of corpus ${id} was deleted as soon as it was stored`);
  }

  /** The corpus if it exists in `workspaceId` (other workspaces' corpora do not exist for the caller). */
  async get(workspaceId: string, id: string): Promise<CorpusRecord | undefined> {
    const row = await this.store.db.selectFrom("corpora").selectAll().where("id", "=", id).where("workspace_id", "=", workspaceId).executeTakeFirst();
    return row && toRecord(row);
  }

  async getAny(id: string): Promise<CorpusRecord | undefined> {
    const row = await this.store.db.selectFrom("corpora").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The ids of every corpus (of every workspace). */
  async ids(): Promise<string[]> {
    const rows = await this.store.db.selectFrom("corpora").select("id").orderBy("id").execute();
    return rows.map((r) => r.id);
  }

  async list(workspaceId: string, page: PageRequest): Promise<Page<CorpusRecord>> {
    const result = await readSqlPage<CorpusRow>(this.store.db, { table: "corpora", where: sql`workspace_id = ${workspaceId}` }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  /** Changes the fields given (undefined: unchanged; null: back to none), in one statement. */
  async update(id: string, fields: { name?: string; retentionDays?: number; metadata?: Record<string, string>; rerankModel?: string | null; searchDefaults?: SearchDefaults | null; ocrLanguages?: string[] | null }, at: number): Promise<void> {
    const set: Updateable<CorporaTable> = { updated_at: at };
    if (fields.name !== undefined) set.name = fields.name;
    if (fields.retentionDays !== undefined) set.retention_days = fields.retentionDays;
    if (fields.metadata !== undefined) set.metadata = JSON.stringify(fields.metadata);
    if (fields.rerankModel !== undefined) set.rerank_model = fields.rerankModel;
    if (fields.searchDefaults !== undefined) set.search_defaults = fields.searchDefaults && JSON.stringify(fields.searchDefaults);
    if (fields.ocrLanguages !== undefined) set.ocr_languages = fields.ocrLanguages && JSON.stringify(fields.ocrLanguages);
    await this.store.db.updateTable("corpora").set(set).where("id", "=", id).execute();
  }

  async touch(id: string, at: number): Promise<void> {
    await this.store.db.updateTable("corpora").set({ updated_at: at }).where("id", "=", id).execute();
  }

  async counts(id: string): Promise<DocumentCounts> {
    const rows = await this.store.db
      .selectFrom("documents")
      .select((eb) => ["status", eb.fn.countAll<number>().as("n")])
      .where("corpus_id", "=", id)
      .groupBy("status")
      .execute();
    const counts: DocumentCounts = { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 };
    for (const { status, n } of rows) {
      if (status in counts) counts[status as keyof DocumentCounts] = Number(n);
      counts.total += Number(n);
    }
    return counts;
  }

  async chunkCount(id: string): Promise<number> {
    const row = await this.store.db
      .selectFrom("chunks")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("corpus_id", "=", id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async wrappedKey(id: string): Promise<StoredCorpusKey | undefined> {
    const row = await this.store.db.selectFrom("corpus_keys").select(["provider", "wrapped_key", "destroy_after"]).where("corpus_id", "=", id).executeTakeFirst();
    return row && { provider: row.provider, wrappedKey: Buffer.from(row.wrapped_key), destroyAfter: row.destroy_after === null ? null : Number(row.destroy_after) };
  }
}
