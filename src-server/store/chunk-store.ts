/**
 * SQLite access for chunks. Content and vectors arrive and leave sealed: this store
 * never sees plaintext.
 */
import type { Database } from "./database.js";

export interface SealedChunk {
  id: string;
  corpusId: string;
  documentId: string;
  index: number;
  start: number;
  end: number;
  pageStart: number | null;
  pageEnd: number | null;
  tokenCount: number;
  /** Sealed JSON `ChunkContent` (`{ text, headingPath, pageBreaks? }`). */
  content: Buffer;
  /** Sealed little-endian float32 vector. */
  vector: Buffer;
  /** Sealed keyword analysis (`ChunkTerms`); null for chunks stored before it was kept. */
  terms?: Buffer | null;
}

/** What rebuilding a corpus's index reads of a chunk: its content only when no analysis is stored. */
export interface IndexSource {
  id: string;
  documentId: string;
  vector: Buffer;
  terms: Buffer | null;
  content: Buffer | null;
}

interface ChunkRow {
  id: string;
  corpus_id: string;
  document_id: string;
  idx: number;
  start_offset: number;
  end_offset: number;
  page_start: number | null;
  page_end: number | null;
  token_count: number;
  content: Buffer;
  vector: Buffer;
  terms: Buffer | null;
}

const toSealed = (r: ChunkRow): SealedChunk => ({
  id: r.id,
  corpusId: r.corpus_id,
  documentId: r.document_id,
  index: r.idx,
  start: r.start_offset,
  end: r.end_offset,
  pageStart: r.page_start,
  pageEnd: r.page_end,
  tokenCount: r.token_count,
  content: r.content,
  vector: r.vector,
  terms: r.terms,
});

export class ChunkStore {
  constructor(private readonly db: Database) {}

  /**
   * Stores a document's chunks and marks it indexed in one transaction: after a crash a
   * document has either all its chunks or none, never a part, never twice.
   */
  commitDocument(documentId: string, chunks: SealedChunk[], pageCount: number | null, now: number): void {
    const insert = this.db.prepare(
      `INSERT INTO chunks (id, corpus_id, document_id, idx, start_offset, end_offset, page_start, page_end, token_count, content, vector, terms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM chunks WHERE document_id = ?").run(documentId);
      for (const c of chunks) insert.run(c.id, c.corpusId, c.documentId, c.index, c.start, c.end, c.pageStart, c.pageEnd, c.tokenCount, c.content, c.vector, c.terms ?? null);
      this.db
        .prepare("UPDATE documents SET status = 'indexed', chunk_count = ?, page_count = ?, error_code = NULL, error_message = NULL, indexed_at = ?, updated_at = ? WHERE id = ?")
        .run(chunks.length, pageCount, now, now, documentId);
    })();
  }

  /**
   * Every chunk of a corpus, for building its in-memory index, read in pages: no cursor
   * stays open while the consumer awaits (better-sqlite3 forbids other statements then).
   */
  *iterateCorpus(corpusId: string, pageSize = 2000): Generator<SealedChunk> {
    const page = this.db.prepare("SELECT * FROM chunks WHERE corpus_id = ? AND id > ? ORDER BY id LIMIT ?");
    let after = "";
    for (;;) {
      const rows = page.all(corpusId, after, pageSize) as ChunkRow[];
      for (const row of rows) yield toSealed(row);
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  /**
   * A corpus's chunks as its in-memory index is built from them, in pages like
   * `iterateCorpus`; the content is read only where no keyword analysis is stored.
   */
  *iterateIndexSources(corpusId: string, pageSize = 5000): Generator<IndexSource> {
    const page = this.db.prepare(
      "SELECT id, document_id, vector, terms, CASE WHEN terms IS NULL THEN content END AS content FROM chunks WHERE corpus_id = ? AND id > ? ORDER BY id LIMIT ?",
    );
    let after = "";
    for (;;) {
      const rows = page.all(corpusId, after, pageSize) as { id: string; document_id: string; vector: Buffer; terms: Buffer | null; content: Buffer | null }[];
      for (const r of rows) yield { id: r.id, documentId: r.document_id, vector: r.vector, terms: r.terms, content: r.content };
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  /** What `iterateIndexSources` reads, for the chunks `ids` (those that exist). */
  indexSourcesOf(ids: readonly string[]): IndexSource[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT id, document_id, vector, terms, CASE WHEN terms IS NULL THEN content END AS content FROM chunks WHERE id IN (${ids.map(() => "?").join(",")}) ORDER BY id`)
      .all(...ids) as { id: string; document_id: string; vector: Buffer; terms: Buffer | null; content: Buffer | null }[];
    return rows.map((r) => ({ id: r.id, documentId: r.document_id, vector: r.vector, terms: r.terms, content: r.content }));
  }

  /** A corpus's chunk ids in ascending order (what identifies an index snapshot's content). */
  *iterateIds(corpusId: string): Generator<string> {
    for (const row of this.db.prepare("SELECT id FROM chunks WHERE corpus_id = ? ORDER BY id").pluck().iterate(corpusId)) yield row as string;
  }

  /** A chunk's sealed content (undefined when it no longer exists). */
  contentOf(id: string): Buffer | undefined {
    return (this.db.prepare("SELECT content FROM chunks WHERE id = ?").get(id) as { content: Buffer } | undefined)?.content;
  }

  /** Stores keyword analyses made for chunks that had none (chunks deleted meanwhile are skipped). */
  setTerms(rows: readonly { id: string; terms: Buffer }[]): void {
    const update = this.db.prepare("UPDATE chunks SET terms = ? WHERE id = ?");
    this.db.transaction(() => {
      for (const r of rows) update.run(r.terms, r.id);
    })();
  }

  byIds(ids: string[]): SealedChunk[] {
    if (ids.length === 0) return [];
    const rows = this.db.prepare(`SELECT * FROM chunks WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as ChunkRow[];
    return rows.map(toSealed);
  }

  /** The chunks just before and after position `index` of a document (undefined at either end). */
  neighbours(documentId: string, index: number): { before: SealedChunk | undefined; after: SealedChunk | undefined } {
    const rows = this.db.prepare("SELECT * FROM chunks WHERE document_id = ? AND idx IN (?, ?)").all(documentId, index - 1, index + 1) as ChunkRow[];
    const find = (idx: number) => rows.find((r) => r.idx === idx);
    const before = find(index - 1);
    const after = find(index + 1);
    return { before: before && toSealed(before), after: after && toSealed(after) };
  }

  /** A document's chunks in order (a deletion moves them to cold storage). */
  ofDocument(documentId: string): SealedChunk[] {
    return (this.db.prepare("SELECT * FROM chunks WHERE document_id = ? ORDER BY idx").all(documentId) as ChunkRow[]).map(toSealed);
  }

  idsOfDocument(documentId: string): string[] {
    return (this.db.prepare("SELECT id FROM chunks WHERE document_id = ?").all(documentId) as { id: string }[]).map((r) => r.id);
  }
}
