/**
 * One corpus's query engine: an in-memory LanceDB table (vector column + full-text
 * index) built from decrypted chunks and kept in step with indexing and deletion.
 * Nothing of it touches the disk.
 */
import * as lancedb from "@lancedb/lancedb";
import { keywordQuery } from "./keyword-query.js";
import { reciprocalRankFusion } from "./reciprocal-rank-fusion.js";
import { convexScoreFusion } from "./score-fusion.js";

export type SearchMode = "hybrid" | "vector" | "keyword";

export interface IndexedChunk {
  id: string;
  documentId: string;
  text: string;
  vector: Float32Array;
}

export interface SearchHit {
  chunkId: string;
  documentId: string;
  /** The fused score (hybrid), cosine similarity (vector) or BM25 score (keyword). */
  score: number;
  /** Cosine similarity to the query, when the vector search ranked the chunk. */
  similarity: number | null;
}

export interface SearchRequest {
  mode: SearchMode;
  text: string;
  vector: Float32Array | null;
  topK: number;
  /** Restrict to these documents (metadata filters resolve to ids first). */
  documentIds?: string[] | undefined;
  /** How hybrid mode merges the two lists; default: convex, vector weight 0.7. */
  fusion?: HybridFusion | undefined;
}

export interface HybridFusion {
  method: "convex" | "rrf";
  /** Convex only: weight of the vector list (the keyword list gets the rest). */
  vectorWeight: number;
}

const DEFAULT_FUSION: HybridFusion = { method: "convex", vectorWeight: 0.7 };

const SAFE_ID = /^[A-Za-z0-9_-]+$/;

/**
 * Full-text settings that suit Malay as well as English: the simple tokenizer, lower
 * case and ASCII folding, no stemming and no stop words (English rules would mangle Malay).
 * A new native Index each time: LanceDB consumes the object when it builds the index.
 */
const ftsIndex = () => lancedb.Index.fts({ baseTokenizer: "simple", lowercase: true, asciiFolding: true, stem: false, removeStopWords: false, withPosition: false });

interface Row {
  id: string;
  document_id: string;
  text: string;
  /** Float32Array goes to Arrow as is: no per-number JS arrays for 100k-chunk corpora. */
  vector: Float32Array;
}

export class CorpusIndex {
  private table: lancedb.Table | null = null;
  private unoptimizedRows = 0;

  private constructor(
    private readonly db: lancedb.Connection,
    private readonly name: string,
  ) {}

  /** An index holding `chunks` (may be empty). */
  static async open(db: lancedb.Connection, corpusId: string, chunks: Iterable<IndexedChunk>): Promise<CorpusIndex> {
    const index = new CorpusIndex(db, corpusId);
    const batch: IndexedChunk[] = [];
    for (const chunk of chunks) {
      batch.push(chunk);
      if (batch.length >= 5000) await index.add(batch.splice(0), false);
    }
    await index.add(batch, false);
    await index.optimize();
    return index;
  }

  async count(): Promise<number> {
    return this.table ? await this.table.countRows() : 0;
  }

  /** Adds chunks; the full-text index is refreshed once enough rows are unindexed. */
  async add(chunks: IndexedChunk[], optimize = true): Promise<void> {
    if (chunks.length === 0) return;
    const rows: Row[] = chunks.map((c) => ({ id: c.id, document_id: c.documentId, text: c.text, vector: c.vector }));
    if (!this.table) {
      this.table = await this.db.createTable(this.name, rows as unknown as Record<string, unknown>[]);
      await this.table.createIndex("text", { config: ftsIndex() });
    } else {
      await this.table.add(rows as unknown as Record<string, unknown>[]);
      this.unoptimizedRows += rows.length;
    }
    if (optimize && this.unoptimizedRows >= 2000) await this.optimize();
  }

  async removeDocument(documentId: string): Promise<void> {
    if (!SAFE_ID.test(documentId)) throw new Error("invalid document id");
    await this.table?.delete(`document_id = '${documentId}'`);
  }

  /** Folds recently added rows into the full-text index (unindexed rows are still searched, only slower). */
  async optimize(): Promise<void> {
    if (!this.table) return;
    await this.table.optimize();
    this.unoptimizedRows = 0;
  }

  async search(request: SearchRequest): Promise<SearchHit[]> {
    if (!this.table || request.topK <= 0) return [];
    if (request.documentIds?.length === 0) return [];
    const where = request.documentIds ? `document_id IN (${request.documentIds.filter((id) => SAFE_ID.test(id)).map((id) => `'${id}'`).join(",")})` : undefined;
    const depth = request.mode === "hybrid" ? Math.max(request.topK * 4, 50) : request.topK;
    const vectorHits = request.mode !== "keyword" && request.vector ? await this.vectorSearch(request.vector, depth, where) : [];
    const keywordHits = request.mode !== "vector" ? await this.keywordSearch(request.text, depth, where) : [];
    const similarity = new Map(vectorHits.map((h) => [h.chunkId, h.score]));
    const byId = new Map([...keywordHits, ...vectorHits].map((h) => [h.chunkId, h]));
    if (request.mode === "vector") return vectorHits.slice(0, request.topK);
    if (request.mode === "keyword") return keywordHits.slice(0, request.topK).map((h) => ({ ...h, similarity: similarity.get(h.chunkId) ?? null }));
    const fusion = request.fusion ?? DEFAULT_FUSION;
    const fused =
      fusion.method === "rrf"
        ? reciprocalRankFusion([vectorHits.map((h) => h.chunkId), keywordHits.map((h) => h.chunkId)])
        : convexScoreFusion(
            vectorHits.map((h) => ({ id: h.chunkId, score: h.score })),
            keywordHits.map((h) => ({ id: h.chunkId, score: h.score })),
            fusion.vectorWeight,
          );
    return fused
      .slice(0, request.topK)
      .map(({ id, score }) => ({ chunkId: id, documentId: byId.get(id)!.documentId, score, similarity: similarity.get(id) ?? null }));
  }

  private async vectorSearch(vector: Float32Array, limit: number, where: string | undefined): Promise<SearchHit[]> {
    let query = this.table!.vectorSearch(vector).distanceType("cosine").select(["id", "document_id", "_distance"]).limit(limit);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; _distance: number }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: 1 - r._distance, similarity: 1 - r._distance }));
  }

  private async keywordSearch(text: string, limit: number, where: string | undefined): Promise<SearchHit[]> {
    if (!text.trim()) return [];
    let query = this.table!.query().fullTextSearch(new lancedb.MatchQuery(keywordQuery(text), "text")).select(["id", "document_id", "_score"]).limit(limit);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; _score: number }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: r._score, similarity: null }));
  }

  /** Drops the table and frees its memory. */
  async close(): Promise<void> {
    if (this.table) {
      this.table.close();
      await this.db.dropTable(this.name);
      this.table = null;
    }
  }
}
