/** SQLite access for corpora and their wrapped data keys. */
import type { ChunkingStrategy, EmbeddingPrompts, SearchDefaults } from "../domain/vocabulary.js";
import type { Database } from "./database.js";
import { readPage, type Page, type PageRequest } from "./pagination.js";

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
  dimensions: r.dimensions,
  embeddingPrompts: { query: r.query_prompt, document: r.document_prompt },
  rerankModel: r.rerank_model ?? null,
  searchDefaults: r.search_defaults ? (JSON.parse(r.search_defaults) as SearchDefaults) : null,
  retentionDays: r.retention_days,
  metadata: JSON.parse(r.metadata) as Record<string, string>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface DocumentCounts {
  queued: number;
  processing: number;
  indexed: number;
  failed: number;
  total: number;
}

export class CorpusStore {
  constructor(private readonly db: Database) {}

  insert(c: CorpusRecord, key: { provider: string; wrappedKey: Buffer }): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO corpora (id, workspace_id, name, chunking, embedding_model, dimensions, query_prompt, document_prompt, rerank_model, search_defaults, retention_days, metadata, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(c.id, c.workspaceId, c.name, c.chunking, c.embeddingModel, c.dimensions, c.embeddingPrompts.query, c.embeddingPrompts.document, c.rerankModel, c.searchDefaults && JSON.stringify(c.searchDefaults), c.retentionDays, JSON.stringify(c.metadata), c.createdAt, c.updatedAt);
      this.db.prepare("INSERT INTO corpus_keys (corpus_id, provider, wrapped_key, created_at) VALUES (?, ?, ?, ?)").run(c.id, key.provider, key.wrappedKey, c.createdAt);
    })();
  }

  /** The corpus if it exists in `workspaceId` (other workspaces' corpora do not exist for the caller). */
  get(workspaceId: string, id: string): CorpusRecord | undefined {
    const row = this.db.prepare("SELECT * FROM corpora WHERE id = ? AND workspace_id = ?").get(id, workspaceId) as CorpusRow | undefined;
    return row && toRecord(row);
  }

  getAny(id: string): CorpusRecord | undefined {
    const row = this.db.prepare("SELECT * FROM corpora WHERE id = ?").get(id) as CorpusRow | undefined;
    return row && toRecord(row);
  }

  list(workspaceId: string, page: PageRequest): Page<CorpusRecord> {
    const result = readPage<CorpusRow>(this.db, { table: "corpora", where: "workspace_id = ?", params: [workspaceId] }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  update(id: string, fields: { name?: string; retentionDays?: number; metadata?: Record<string, string>; rerankModel?: string | null; searchDefaults?: SearchDefaults | null }, at: number): void {
    const current = this.getAny(id);
    if (!current) return;
    const searchDefaults = fields.searchDefaults === undefined ? current.searchDefaults : fields.searchDefaults;
    this.db
      .prepare("UPDATE corpora SET name = ?, retention_days = ?, metadata = ?, rerank_model = ?, search_defaults = ?, updated_at = ? WHERE id = ?")
      .run(fields.name ?? current.name, fields.retentionDays ?? current.retentionDays, JSON.stringify(fields.metadata ?? current.metadata), fields.rerankModel === undefined ? current.rerankModel : fields.rerankModel, searchDefaults && JSON.stringify(searchDefaults), at, id);
  }

  touch(id: string, at: number): void {
    this.db.prepare("UPDATE corpora SET updated_at = ? WHERE id = ?").run(at, id);
  }

  counts(id: string): DocumentCounts {
    const rows = this.db.prepare("SELECT status, COUNT(*) AS n FROM documents WHERE corpus_id = ? GROUP BY status").all(id) as { status: string; n: number }[];
    const counts: DocumentCounts = { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 };
    for (const { status, n } of rows) {
      if (status in counts) counts[status as keyof DocumentCounts] = n;
      counts.total += n;
    }
    return counts;
  }

  chunkCount(id: string): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM chunks WHERE corpus_id = ?").get(id) as { n: number }).n;
  }

  wrappedKey(id: string): { provider: string; wrappedKey: Buffer; destroyAfter: number | null } | undefined {
    const row = this.db.prepare("SELECT provider, wrapped_key, destroy_after FROM corpus_keys WHERE corpus_id = ?").get(id) as
      | { provider: string; wrapped_key: Buffer; destroy_after: number | null }
      | undefined;
    return row && { provider: row.provider, wrappedKey: row.wrapped_key, destroyAfter: row.destroy_after };
  }
}
