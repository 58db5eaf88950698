/** SQLite access for documents and their indexing state (the persistent job queue). */
import type { DocumentFormat } from "../domain/vocabulary.js";
import type { Database } from "./database.js";
import { readPage, type Page, type PageRequest } from "./pagination.js";

export type DocumentStatus = "queued" | "processing" | "indexed" | "failed";

export interface DocumentRecord {
  id: string;
  corpusId: string;
  filename: string;
  contentType: string;
  format: DocumentFormat;
  bytes: number;
  sha256: string;
  status: DocumentStatus;
  error: { code: string; message: string } | null;
  pageCount: number | null;
  chunkCount: number;
  metadata: Record<string, unknown>;
  attempts: number;
  createdAt: number;
  updatedAt: number;
  indexedAt: number | null;
}

interface DocumentRow {
  id: string;
  corpus_id: string;
  filename: string;
  content_type: string;
  format: string;
  bytes: number;
  sha256: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  page_count: number | null;
  chunk_count: number;
  metadata: string;
  attempts: number;
  created_at: number;
  updated_at: number;
  indexed_at: number | null;
}

const toRecord = (r: DocumentRow): DocumentRecord => ({
  id: r.id,
  corpusId: r.corpus_id,
  filename: r.filename,
  contentType: r.content_type,
  format: r.format as DocumentFormat,
  bytes: r.bytes,
  sha256: r.sha256,
  status: r.status as DocumentStatus,
  error: r.error_code ? { code: r.error_code, message: r.error_message ?? "" } : null,
  pageCount: r.page_count,
  chunkCount: r.chunk_count,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  attempts: r.attempts,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  indexedAt: r.indexed_at,
});

export class DocumentStore {
  constructor(private readonly db: Database) {}

  /** Documents by status across every corpus (metrics). */
  countsByStatus(): Record<DocumentStatus, number> {
    const counts: Record<DocumentStatus, number> = { queued: 0, processing: 0, indexed: 0, failed: 0 };
    for (const row of this.db.prepare("SELECT status, COUNT(*) AS n FROM documents GROUP BY status").all() as { status: DocumentStatus; n: number }[]) counts[row.status] = row.n;
    return counts;
  }

  insert(d: DocumentRecord): void {
    this.db
      .prepare(
        `INSERT INTO documents (id, corpus_id, filename, content_type, format, bytes, sha256, status, error_code, error_message, page_count, chunk_count, metadata, attempts, created_at, updated_at, indexed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(d.id, d.corpusId, d.filename, d.contentType, d.format, d.bytes, d.sha256, d.status, d.error?.code ?? null, d.error?.message ?? null, d.pageCount, d.chunkCount, JSON.stringify(d.metadata), d.attempts, d.createdAt, d.updatedAt, d.indexedAt);
  }

  get(corpusId: string, id: string): DocumentRecord | undefined {
    const row = this.db.prepare("SELECT * FROM documents WHERE id = ? AND corpus_id = ?").get(id, corpusId) as DocumentRow | undefined;
    return row && toRecord(row);
  }

  getById(id: string): DocumentRecord | undefined {
    const row = this.db.prepare("SELECT * FROM documents WHERE id = ?").get(id) as DocumentRow | undefined;
    return row && toRecord(row);
  }

  findBySha256(corpusId: string, sha256: string): DocumentRecord | undefined {
    const row = this.db.prepare("SELECT * FROM documents WHERE corpus_id = ? AND sha256 = ?").get(corpusId, sha256) as DocumentRow | undefined;
    return row && toRecord(row);
  }

  /** A page of the corpus's documents, only those in `status` when given. */
  list(corpusId: string, page: PageRequest, status?: DocumentStatus): Page<DocumentRecord> {
    const query = status ? { table: "documents", where: "corpus_id = ? AND status = ?", params: [corpusId, status] } : { table: "documents", where: "corpus_id = ?", params: [corpusId] };
    const result = readPage<DocumentRow>(this.db, query, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  /** Every document of a corpus, oldest first (a corpus deletion moves their records to cold storage). */
  ofCorpus(corpusId: string): DocumentRecord[] {
    return (this.db.prepare("SELECT * FROM documents WHERE corpus_id = ? ORDER BY created_at, id").all(corpusId) as DocumentRow[]).map(toRecord);
  }

  /** Ids of indexed documents whose metadata equals every given value (JSON equality per key). */
  idsMatching(corpusId: string, filter: Record<string, string | number | boolean>): string[] {
    const conditions = Object.keys(filter).map(() => "json_extract(metadata, ?) = ?");
    const params: unknown[] = [corpusId];
    for (const [key, value] of Object.entries(filter)) params.push(`$.${JSON.stringify(key)}`, typeof value === "boolean" ? Number(value) : value);
    const sql = `SELECT id FROM documents WHERE corpus_id = ? AND status = 'indexed'${conditions.map((c) => ` AND ${c}`).join("")}`;
    return (this.db.prepare(sql).all(...params) as { id: string }[]).map((r) => r.id);
  }

  /** Takes the oldest queued document for indexing (atomically), or undefined. */
  claimNext(now: number): DocumentRecord | undefined {
    return this.db.transaction(() => {
      const row = this.db.prepare("SELECT * FROM documents WHERE status = 'queued' ORDER BY created_at, id LIMIT 1").get() as DocumentRow | undefined;
      if (!row) return undefined;
      this.db.prepare("UPDATE documents SET status = 'processing', attempts = attempts + 1, updated_at = ? WHERE id = ?").run(now, row.id);
      return toRecord({ ...row, status: "processing", attempts: row.attempts + 1, updated_at: now });
    })();
  }

  /** After a crash or kill: documents left `processing` go back to the queue. */
  requeueInterrupted(now: number): number {
    return this.db.prepare("UPDATE documents SET status = 'queued', updated_at = ? WHERE status = 'processing'").run(now).changes;
  }

  markFailed(id: string, error: { code: string; message: string }, now: number): void {
    this.db.prepare("UPDATE documents SET status = 'failed', error_code = ?, error_message = ?, updated_at = ? WHERE id = ?").run(error.code, error.message, now, id);
  }
}
