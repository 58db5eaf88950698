/**
 * Chunks, in the store's database (SQLite or Postgres). Content and vectors arrive and
 * leave sealed: this store never sees plaintext.
 */
import type { Selectable } from "kysely";
import type { ChunksTable } from "./schema.js";
import type { OcrSummary } from "./document-store.js";
import { replaceOcrPages, type SealedOcrPage } from "./ocr-page-store.js";
import type { SqlDatabase } from "./sql-database.js";
import type { CorpusFeed } from "./corpus-feed.js";

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

/** One document of a group commit (`ChunkStore.commitDocuments`). */
export interface DocumentCommit {
  documentId: string;
  /** Its corpus (whose rows lock the commit takes); undefined only for a document without chunks. */
  corpusId: string | undefined;
  chunks: SealedChunk[];
  pageCount: number | null;
  /** What OCR read (the summary, and each page's sealed words); absent or null: no page was OCR'd. */
  ocr?: { summary: OcrSummary; pages: SealedOcrPage[] } | null;
}

/** What rebuilding a corpus's index reads of a chunk: its content only when no analysis is stored. */
export interface IndexSource {
  id: string;
  documentId: string;
  vector: Buffer;
  terms: Buffer | null;
  content: Buffer | null;
}

type ChunkRow = Selectable<ChunksTable>;

/** Columns of a chunk row: a multi-row insert binds this many parameters per chunk. */
const CHUNK_COLUMNS = 12;
/**
 * Parameters bound by one statement at most: below SQLite's 32766 and Postgres's 65535, so
 * one multi-row insert carries up to 2500 chunks and an `IN` list as many ids.
 */
const MAX_PARAMETERS = 30_000;
const INSERT_ROWS = Math.floor(MAX_PARAMETERS / CHUNK_COLUMNS);

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

const toRow = (c: SealedChunk): ChunkRow => ({
  id: c.id,
  corpus_id: c.corpusId,
  document_id: c.documentId,
  idx: c.index,
  start_offset: c.start,
  end_offset: c.end,
  page_start: c.pageStart,
  page_end: c.pageEnd,
  token_count: c.tokenCount,
  content: c.content,
  vector: c.vector,
  terms: c.terms ?? null,
});

/** `items` in slices of at most `size`. */
function* slices<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let at = 0; at < items.length; at += size) yield items.slice(at, at + size);
}

/**
 * The advisory lock taken by every transaction that adds a corpus's chunks or deletes its
 * rows (`commitDocument`, the tombstone catalogue's commits): on Postgres a deletion's
 * "everything was copied" check and its delete see no chunk committed in between.
 */
export const corpusRowsLock = (corpusId: string) => `corpus-rows:${corpusId}`;

export class ChunkStore {
  /** `feed`: where replicas sharing the store learn of committed documents (none for a lone server). */
  constructor(
    private readonly store: SqlDatabase,
    private readonly feed: CorpusFeed | null = null,
  ) {}

  /**
   * Stores a document's chunks and marks it indexed in one transaction: after a crash a
   * document has either all its chunks or none, never a part, never twice. The chunks go
   * in as multi-row inserts (thousands per statement). False when the document is gone
   * (deleted meanwhile) or `claimant` no longer holds it: nothing was written.
   */
  async commitDocument(documentId: string, chunks: SealedChunk[], pageCount: number | null, now: number, claimant?: string): Promise<boolean> {
    const corpusId = chunks[0]?.corpusId;
    const committed = await this.commitDocuments([{ documentId, corpusId, chunks, pageCount }], now, claimant);
    return committed.length === 1;
  }

  /**
   * Stores several documents' chunks and marks each indexed, in one transaction (the
   * pipelined indexer commits a group of documents at once): after a crash each document
   * has all its chunks or none. Each document's status is still its own: one deleted
   * meanwhile, or no longer held by `claimant`, is skipped (nothing of it is written) and
   * the others commit. Returns the ids committed, in order.
   */
  async commitDocuments(commits: readonly DocumentCommit[], now: number, claimant?: string): Promise<string[]> {
    if (commits.length === 0) return [];
    const corpora = [...new Set(commits.map((c) => c.corpusId).filter((id): id is string => id !== undefined))];
    return this.store.transaction(async (tx) => {
      if (corpora.length > 0) await this.store.lock(tx, corpora.map(corpusRowsLock));
      const committed: DocumentCommit[] = [];
      for (const c of commits) {
        // With a claimant (replicas), only while it still holds the document: one that was
        // presumed dead and whose work went to another commits nothing. A document deleted
        // meanwhile has no row to mark, and gets no chunks (they would be orphans).
        let mark = tx
          .updateTable("documents")
          .set({ status: "indexed", chunk_count: c.chunks.length, page_count: c.pageCount, ocr_summary: c.ocr ? JSON.stringify(c.ocr.summary) : null, error_code: null, error_message: null, indexed_at: now, updated_at: now, claimed_by: null })
          .where("id", "=", c.documentId);
        if (claimant !== undefined) mark = mark.where("status", "=", "processing").where("claimed_by", "=", claimant);
        if (Number((await mark.executeTakeFirst()).numUpdatedRows) > 0) committed.push(c);
      }
      const ids = committed.map((c) => c.documentId);
      for (const part of slices(ids, MAX_PARAMETERS)) await tx.deleteFrom("chunks").where("document_id", "in", part).execute();
      for (const rows of slices(committed.flatMap((c) => c.chunks), INSERT_ROWS)) await tx.insertInto("chunks").values(rows.map(toRow)).execute();
      // OCR'd pages with their document (a document indexed again loses its old ones).
      for (const part of slices(ids, MAX_PARAMETERS)) await tx.deleteFrom("document_ocr_pages").where("document_id", "in", part).execute();
      for (const c of committed) if (c.ocr && c.ocr.pages.length > 0) await replaceOcrPages(tx, c.documentId, c.ocr.pages, { fresh: true });
      for (const c of committed) if (c.corpusId !== undefined) await this.feed?.record(tx, { corpusId: c.corpusId, documentId: c.documentId, change: "indexed" });
      return ids;
    });
  }

  /**
   * Every chunk of a corpus, in pages by id (keyset): no cursor or transaction stays open
   * while the consumer awaits, and no more than a page is in memory.
   */
  async *iterateCorpus(corpusId: string, pageSize = 2000): AsyncGenerator<SealedChunk> {
    let after = "";
    for (;;) {
      const rows = await this.store.db.selectFrom("chunks").selectAll().where("corpus_id", "=", corpusId).where("id", ">", after).orderBy("id").limit(pageSize).execute();
      for (const row of rows) yield toSealed(row);
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  /**
   * A corpus's chunks as its in-memory index is built from them, in pages like
   * `iterateCorpus`; the content is read only where no keyword analysis is stored.
   */
  async *iterateIndexSources(corpusId: string, pageSize = 5000): AsyncGenerator<IndexSource> {
    let after = "";
    for (;;) {
      const rows = await this.indexSources({ corpusId, after, limit: pageSize });
      yield* rows;
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.id;
    }
  }

  /** What `iterateIndexSources` reads, for the chunks `ids` (those that exist), in id order. */
  async indexSourcesOf(ids: readonly string[]): Promise<IndexSource[]> {
    const out: IndexSource[] = [];
    if (ids.length === 0) return out;
    for (const part of slices(ids, MAX_PARAMETERS)) out.push(...(await this.indexSources({ ids: part })));
    return ids.length > MAX_PARAMETERS ? out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) : out;
  }

  /**
   * A corpus's chunk ids in ascending binary order (what identifies an index snapshot's
   * content), read in pages by id and sorted here: the database's collation may order text
   * otherwise.
   */
  async idsOfCorpus(corpusId: string, pageSize = 20_000): Promise<string[]> {
    const ids: string[] = [];
    let after = "";
    for (;;) {
      const rows = await this.store.db.selectFrom("chunks").select("id").where("corpus_id", "=", corpusId).where("id", ">", after).orderBy("id").limit(pageSize).execute();
      for (const row of rows) ids.push(row.id);
      if (rows.length < pageSize) break;
      after = rows.at(-1)!.id;
    }
    return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** A chunk's sealed content (undefined when it no longer exists). */
  async contentOf(id: string): Promise<Buffer | undefined> {
    return (await this.store.db.selectFrom("chunks").select("content").where("id", "=", id).executeTakeFirst())?.content;
  }

  /** Stores keyword analyses made for chunks that had none (chunks deleted meanwhile are skipped). */
  async setTerms(rows: readonly { id: string; terms: Buffer }[]): Promise<void> {
    if (rows.length === 0) return;
    await this.store.transaction(async (tx) => {
      for (const r of rows) await tx.updateTable("chunks").set({ terms: r.terms }).where("id", "=", r.id).execute();
    });
  }

  async byIds(ids: readonly string[]): Promise<SealedChunk[]> {
    const out: SealedChunk[] = [];
    if (ids.length === 0) return out;
    for (const part of slices(ids, MAX_PARAMETERS)) out.push(...(await this.store.db.selectFrom("chunks").selectAll().where("id", "in", part).execute()).map(toSealed));
    return out;
  }

  /** The chunks just before and after position `index` of a document (undefined at either end). */
  async neighbours(documentId: string, index: number): Promise<{ before: SealedChunk | undefined; after: SealedChunk | undefined }> {
    const rows = await this.store.db
      .selectFrom("chunks")
      .selectAll()
      .where("document_id", "=", documentId)
      .where("idx", "in", [index - 1, index + 1])
      .execute();
    const find = (idx: number) => rows.find((r) => r.idx === idx);
    const before = find(index - 1);
    const after = find(index + 1);
    return { before: before && toSealed(before), after: after && toSealed(after) };
  }

  /** A document's chunks in order (a deletion moves them to cold storage). */
  async ofDocument(documentId: string): Promise<SealedChunk[]> {
    return (await this.store.db.selectFrom("chunks").selectAll().where("document_id", "=", documentId).orderBy("idx").execute()).map(toSealed);
  }

  async idsOfDocument(documentId: string): Promise<string[]> {
    return (await this.store.db.selectFrom("chunks").select("id").where("document_id", "=", documentId).execute()).map((r) => r.id);
  }

  /** Index sources of a corpus's chunks after `after` (a page), or of the chunks `ids`, in id order. */
  private async indexSources(which: { corpusId: string; after: string; limit: number } | { ids: readonly string[] }): Promise<IndexSource[]> {
    let query = this.store.db
      .selectFrom("chunks")
      .select((eb) => ["id", "document_id", "vector", "terms", eb.case().when("terms", "is", null).then(eb.ref("content")).end().as("content")])
      .orderBy("id");
    query = "ids" in which ? query.where("id", "in", which.ids) : query.where("corpus_id", "=", which.corpusId).where("id", ">", which.after).limit(which.limit);
    const rows = await query.execute();
    return rows.map((r) => ({ id: r.id, documentId: r.document_id, vector: r.vector, terms: r.terms, content: r.content }));
  }
}
