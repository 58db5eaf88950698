/**
 * Documents and their indexing state (the persistent job queue), in the store's database
 * (SQLite or Postgres).
 */
import { sql, type Selectable } from "kysely";
import type { DocumentFormat } from "../domain/vocabulary.js";
import { readSqlPage, type Page, type PageRequest } from "./pagination.js";
import type { DocumentsTable } from "./schema.js";
import type { SqlDatabase } from "./sql-database.js";

export type DocumentStatus = "queued" | "processing" | "indexed" | "failed";

/** How a document relates to the one it came out of: an e-mail's attachment, a mailbox's message. */
export type DocumentRelation = "attachment" | "message";

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
  /**
   * The document it came out of (same corpus) and how; absent (or null) for a document
   * uploaded on its own. Deleting the parent deletes it.
   */
  parentDocumentId?: string | null;
  relation?: DocumentRelation | null;
  /** Its place among the documents that came out of its parent (0 first: a mailbox's first message); absent for an upload. */
  position?: number | null;
  /** How many documents came out of this one, by relation (filled in by listings and reads, not stored). */
  children?: ChildCounts;
  /** Which pages OCR read and how sure it was; absent (or null) when OCR read none. */
  ocr?: OcrSummary | null;
}

/** Documents that came out of one document, by how they relate to it. */
export interface ChildCounts {
  attachments: number;
  messages: number;
}

/** What a document says of its OCR (no text: the words are sealed in `document_ocr_pages`). */
export interface OcrSummary {
  engine: string;
  languages: string[];
  pages: { page: number; reason: string; confidence: number; words: number; deskewed?: number }[];
}

/** Ids read or deleted per query when walking a document's descendants. */
const ID_BATCH = 500;

type DocumentRow = Selectable<DocumentsTable>;

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
  ...(r.parent_document_id ? { parentDocumentId: r.parent_document_id, relation: r.relation as DocumentRelation, position: r.position } : {}),
  ...(r.ocr_summary ? { ocr: JSON.parse(r.ocr_summary) as OcrSummary } : {}),
});

/** Escapes `%`, `_` and the escape character itself for a `LIKE … ESCAPE '\'` pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Whether a metadata value equals a filter value as SQLite's `json_extract(metadata, '$.key') = ?`
 * decided it before the store ran on Postgres too: scalars by value (a boolean counts as 0 or 1,
 * strings compare exactly), JSON null never, an object or array as its compact JSON text.
 */
function metadataEquals(stored: unknown, wanted: string | number | boolean): boolean {
  if (stored === null || stored === undefined) return false;
  if (typeof stored === "object") return typeof wanted === "string" && JSON.stringify(stored) === wanted;
  const scalar = (v: unknown) => (typeof v === "boolean" ? Number(v) : v);
  return scalar(stored) === scalar(wanted);
}

export class DocumentStore {
  constructor(private readonly store: SqlDatabase) {}

  /** Documents by status across every corpus (metrics). */
  async countsByStatus(): Promise<Record<DocumentStatus, number>> {
    const counts: Record<DocumentStatus, number> = { queued: 0, processing: 0, indexed: 0, failed: 0 };
    const rows = await this.store.db
      .selectFrom("documents")
      .select((eb) => ["status", eb.fn.countAll<number>().as("n")])
      .groupBy("status")
      .execute();
    for (const row of rows) counts[row.status as DocumentStatus] = Number(row.n);
    return counts;
  }

  /**
   * Stores a new document; false, storing nothing, when its corpus already holds one with
   * the same sha256 (an upload of the same content that committed first, maybe on another replica).
   */
  async insert(d: DocumentRecord): Promise<boolean> {
    const result = await this.store.db
      .insertInto("documents")
      .values({
        id: d.id,
        corpus_id: d.corpusId,
        filename: d.filename,
        content_type: d.contentType,
        format: d.format,
        bytes: d.bytes,
        sha256: d.sha256,
        status: d.status,
        error_code: d.error?.code ?? null,
        error_message: d.error?.message ?? null,
        page_count: d.pageCount,
        chunk_count: d.chunkCount,
        metadata: JSON.stringify(d.metadata),
        attempts: d.attempts,
        created_at: d.createdAt,
        updated_at: d.updatedAt,
        indexed_at: d.indexedAt,
        parent_document_id: d.parentDocumentId ?? null,
        relation: d.parentDocumentId ? (d.relation ?? null) : null,
        position: d.parentDocumentId ? (d.position ?? null) : null,
      })
      .onConflict((oc) => oc.columns(["corpus_id", "sha256"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async get(corpusId: string, id: string): Promise<DocumentRecord | undefined> {
    const row = await this.store.db.selectFrom("documents").selectAll().where("id", "=", id).where("corpus_id", "=", corpusId).executeTakeFirst();
    return row && toRecord(row);
  }

  async getById(id: string): Promise<DocumentRecord | undefined> {
    const row = await this.store.db.selectFrom("documents").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The documents with these ids (those that exist), in one query. */
  async byIds(ids: readonly string[]): Promise<DocumentRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.store.db.selectFrom("documents").selectAll().where("id", "in", [...ids]).execute();
    return rows.map(toRecord);
  }

  async findBySha256(corpusId: string, sha256: string): Promise<DocumentRecord | undefined> {
    const row = await this.store.db.selectFrom("documents").selectAll().where("corpus_id", "=", corpusId).where("sha256", "=", sha256).executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * A page of the corpus's documents, only those in `status` when given; with
   * `parentDocumentId`, only those that came out of that document, in their order in it
   * (a mailbox's messages as the mailbox holds them), or with null only uploaded ones.
   */
  async list(corpusId: string, page: PageRequest, status?: DocumentStatus, parentDocumentId?: string | null): Promise<Page<DocumentRecord>> {
    let where = sql`corpus_id = ${corpusId}`;
    if (status) where = sql`${where} AND status = ${status}`;
    if (parentDocumentId === null) where = sql`${where} AND parent_document_id IS NULL`;
    else if (parentDocumentId) where = sql`${where} AND parent_document_id = ${parentDocumentId}`;
    const result = await readSqlPage<DocumentRow>(this.store.db, { table: "documents", where, ...(parentDocumentId ? { key: "position" as const } : {}) }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }

  /** How many documents came out of each of `ids` (directly), by relation; documents with none are absent. */
  async childCounts(ids: readonly string[]): Promise<Map<string, ChildCounts>> {
    const counts = new Map<string, ChildCounts>();
    for (let i = 0; i < ids.length; i += ID_BATCH) {
      const rows = await this.store.db
        .selectFrom("documents")
        .select(["parent_document_id", "relation", (eb) => eb.fn.countAll<number | string | bigint>().as("n")])
        .where("parent_document_id", "in", ids.slice(i, i + ID_BATCH))
        .groupBy(["parent_document_id", "relation"])
        .execute();
      for (const row of rows) {
        const c = counts.get(row.parent_document_id!) ?? { attachments: 0, messages: 0 };
        if (row.relation === "message") c.messages += Number(row.n);
        else c.attachments += Number(row.n);
        counts.set(row.parent_document_id!, c);
      }
    }
    return counts;
  }

  /** The documents that came out of `documentId`, and theirs, down every level (parents before their children). */
  async descendantsOf(documentId: string): Promise<DocumentRecord[]> {
    const found: DocumentRecord[] = [];
    const seen = new Set([documentId]);
    for (let level = [documentId]; level.length > 0; ) {
      const next: string[] = [];
      for (let i = 0; i < level.length; i += ID_BATCH) {
        const rows = await this.store.db.selectFrom("documents").selectAll().where("parent_document_id", "in", level.slice(i, i + ID_BATCH)).orderBy("created_at").orderBy("id").execute();
        for (const row of rows) {
          // A link that loops back is not followed twice (the service never makes one).
          if (seen.has(row.id)) continue;
          seen.add(row.id);
          next.push(row.id);
          found.push(toRecord(row));
        }
      }
      level = next;
    }
    return found;
  }

  /** How many documents up the chain of parents a document is (0 for one uploaded on its own); stops counting at `limit`. */
  async depthOf(document: DocumentRecord, limit: number): Promise<number> {
    let depth = 0;
    for (let parent = document.parentDocumentId ?? null; parent && depth < limit; depth++) {
      const row = await this.store.db.selectFrom("documents").select("parent_document_id").where("id", "=", parent).executeTakeFirst();
      parent = row?.parent_document_id ?? null;
    }
    return depth;
  }

  /** Every document of a corpus, oldest first (a corpus deletion moves their records to cold storage). */
  async ofCorpus(corpusId: string): Promise<DocumentRecord[]> {
    const rows = await this.store.db.selectFrom("documents").selectAll().where("corpus_id", "=", corpusId).orderBy("created_at").orderBy("id").execute();
    return rows.map(toRecord);
  }

  /**
   * Ids of indexed documents whose metadata equals every given value (JSON equality per
   * top-level key). The database narrows the documents by text (`LIKE` on the stored JSON,
   * the same on both backends); the exact comparison is made here, as JSON has no portable SQL.
   */
  async idsMatching(corpusId: string, filter: Record<string, string | number | boolean>): Promise<string[]> {
    const entries = Object.entries(filter);
    let query = this.store.db.selectFrom("documents").select(["id", "metadata"]).where("corpus_id", "=", corpusId).where("status", "=", "indexed");
    for (const [key, value] of entries) {
      // Metadata is stored as compact JSON (`JSON.stringify`): a string value appears as `"key":"value"`;
      // numbers and booleans compare loosely (true = 1), and a string may be an object's JSON text,
      // so for those only the key is looked for. A match here can still be a nested key or a
      // longer string: the exact test below decides.
      const exactText = typeof value === "string" && !/^[[{]/.test(value);
      const text = exactText ? `${JSON.stringify(key)}:${JSON.stringify(value)}` : `${JSON.stringify(key)}:`;
      query = query.where(sql<boolean>`metadata LIKE ${`%${likeLiteral(text)}%`} ESCAPE '\\'`);
    }
    const rows = await query.orderBy("id").execute();
    return rows
      .filter((row) => {
        const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
        return entries.every(([key, value]) => Object.hasOwn(metadata, key) && metadataEquals(metadata[key], value));
      })
      .map((row) => row.id);
  }

  /**
   * Takes the oldest queued document for indexing, or undefined. The claim is a conditional
   * update (`queued` → `processing`): when several replicas take the same document at once,
   * one update changes it and the others try the next.
   */
  async claimNext(now: number): Promise<DocumentRecord | undefined> {
    for (;;) {
      const next = await this.store.db.selectFrom("documents").select("id").where("status", "=", "queued").orderBy("created_at").orderBy("id").limit(1).executeTakeFirst();
      if (!next) return undefined;
      const claimed = await this.store.db
        .updateTable("documents")
        .set((eb) => ({ status: "processing", attempts: eb("attempts", "+", 1), updated_at: now }))
        .where("id", "=", next.id)
        .where("status", "=", "queued")
        .returningAll()
        .executeTakeFirst();
      if (claimed) return toRecord(claimed);
    }
  }

  /**
   * Takes the oldest queued documents for indexing, oldest first (the pipelined indexer
   * parses ahead): up to `limit` of them, whose originals add up to at most `maxBytes` (the
   * oldest is taken alone when it is larger). The claim is `claimNext`'s conditional update
   * made for all of them at once: a document another claimer took meanwhile is left out.
   * Empty only when nothing is queued.
   */
  async claimQueued(limit: number, now: number, maxBytes = Number.POSITIVE_INFINITY): Promise<DocumentRecord[]> {
    if (limit < 1) return [];
    for (;;) {
      const next = await this.store.db.selectFrom("documents").select(["id", "bytes"]).where("status", "=", "queued").orderBy("created_at").orderBy("id").limit(limit).execute();
      if (next.length === 0) return [];
      const ids: string[] = [];
      let bytes = 0;
      for (const row of next) {
        if (ids.length > 0 && bytes + row.bytes > maxBytes) break;
        ids.push(row.id);
        bytes += row.bytes;
      }
      const claimed = await this.claimMany(ids, null, now);
      if (claimed.length > 0) return claimed;
    }
  }

  /**
   * Claims several documents at once, for `claimant` (a replica handed a batch of jobs) or
   * for the lone server (null): the conditional update `queued` → `processing` of `claim`,
   * in one statement. Returns those it got, in the order of `ids`.
   */
  async claimMany(ids: readonly string[], claimant: string | null, now: number): Promise<DocumentRecord[]> {
    if (ids.length === 0) return [];
    const claimed = await this.store.db
      .updateTable("documents")
      .set((eb) => ({ status: "processing", attempts: eb("attempts", "+", 1), updated_at: now, ...(claimant !== null ? { claimed_by: claimant } : {}) }))
      .where("id", "in", [...ids])
      .where("status", "=", "queued")
      .returningAll()
      .execute();
    const order = new Map(ids.map((id, i) => [id, i]));
    return claimed.map(toRecord).sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  }

  /**
   * Claims one document for `claimant` (a replica): a conditional update `queued` →
   * `processing`, so of several replicas handed the same document exactly one gets it.
   */
  async claim(id: string, claimant: string, now: number): Promise<DocumentRecord | undefined> {
    const claimed = await this.store.db
      .updateTable("documents")
      .set((eb) => ({ status: "processing", claimed_by: claimant, attempts: eb("attempts", "+", 1), updated_at: now }))
      .where("id", "=", id)
      .where("status", "=", "queued")
      .returningAll()
      .executeTakeFirst();
    return claimed ? toRecord(claimed) : undefined;
  }

  /**
   * Documents a replica was indexing when it died (its claimant is not among `live`) go
   * back to the queue; returns their ids, to hand out again.
   */
  async requeueAbandoned(live: readonly string[], now: number): Promise<string[]> {
    let query = this.store.db.updateTable("documents").set({ status: "queued", claimed_by: null, updated_at: now }).where("status", "=", "processing");
    if (live.length > 0) query = query.where((eb) => eb.or([eb("claimed_by", "is", null), eb("claimed_by", "not in", [...live])]));
    const rows = await query.returning("id").execute();
    return rows.map((r) => r.id);
  }

  /** Ids of documents queued before `beforeSeconds` (whose hand-out may have been lost). */
  async queuedBefore(beforeSeconds: number, limit = 500): Promise<string[]> {
    const rows = await this.store.db.selectFrom("documents").select("id").where("status", "=", "queued").where("updated_at", "<", beforeSeconds).orderBy("created_at").limit(limit).execute();
    return rows.map((r) => r.id);
  }

  /** After a crash or kill: documents left `processing` go back to the queue. */
  async requeueInterrupted(now: number): Promise<number> {
    const result = await this.store.db.updateTable("documents").set({ status: "queued", updated_at: now }).where("status", "=", "processing").executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Marks the document failed; with `claimant`, only while that replica still holds its claim (true when it did). */
  async markFailed(id: string, error: { code: string; message: string }, now: number, claimant?: string): Promise<boolean> {
    let query = this.store.db.updateTable("documents").set({ status: "failed", error_code: error.code, error_message: error.message, claimed_by: null, updated_at: now }).where("id", "=", id);
    if (claimant !== undefined) query = query.where("status", "=", "processing").where("claimed_by", "=", claimant);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
