/**
 * One corpus's query engine: an in-memory LanceDB table (vector column + full-text
 * index) built from decrypted chunks and kept in step with indexing and deletion.
 * Nothing of it touches the disk.
 */
import * as lancedb from "@lancedb/lancedb";
import { analyzeChunk, analyzeQueryWithLanguage, type KeywordLanguage } from "./keyword-analysis.js";
import { fuseScores, type HybridFusion } from "./score-fusion.js";

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
  /** How hybrid mode merges the two signals; default: convex, vector weight 0.6. */
  fusion?: HybridFusion | undefined;
  /** Hybrid mode: whether chunks holding a rare query term are kept in the results (default true). */
  keepRareTerms?: boolean | undefined;
}

export type { HybridFusion } from "./score-fusion.js";

/** Evidence about a query's answerability in this corpus (`CorpusIndex.evidence`). */
export interface RelevanceEvidence {
  /** Analysed query terms (0: nothing to match by keyword). */
  terms: number;
  /** Cosine similarity of the closest chunk (null without a query vector). */
  bestSimilarity: number | null;
  /** The closest chunk's similarity minus the mean of the 20 closest: how much it stands out. */
  similarityGap: number | null;
  /** IDF-weighted share of the query's terms found in the best single result chunk. */
  keywordCoverage: number | null;
  /** IDF-weighted share of the query's terms that no chunk of the corpus contains. */
  unknownTermShare: number | null;
  /** IDF of the rarest query term missing from every result, over the largest possible IDF. */
  missingMaxIdf: number | null;
}

/** Hybrid by default: convex fusion, vector weight 0.6, which holds on both the bilingual set and BEIR SciFact (`npm run eval`, `npm run eval:beir`). */
const DEFAULT_FUSION: HybridFusion = { method: "convex", vectorWeight: 0.6 };

/**
 * A query term found in at most this many documents is rare: the best chunk holding it is
 * kept in a hybrid result however the fusion ranks it (a name, a code or a word like
 * `banjir` that the user typed and only one document has).
 */
const RARE_TERM_DOCUMENTS = 1;
/** …and whose IDF is at least this share of the query's (summed over its distinct terms). */
const RARE_TERM_SHARE = 0.25;
/** Terms in more chunks than this are never rare (a quick test before counting documents). */
const RARE_TERM_CHUNKS = 20;

const SAFE_ID = /^[A-Za-z0-9_-]+$/;

/**
 * The full-text index is built over each chunk's analysed terms (`keyword-analysis.ts`:
 * stop words removed, stemmed in the chunk's language), so LanceDB only splits them on
 * spaces: no stemming, stop words or folding of its own. A new native Index each time:
 * LanceDB consumes the object when it builds the index.
 */
const ftsIndex = () => lancedb.Index.fts({ baseTokenizer: "whitespace", lowercase: false, asciiFolding: false, stem: false, removeStopWords: false, withPosition: false, maxTokenLength: 64 });

interface Row {
  id: string;
  document_id: string;
  /** The chunk's analysed terms, space-separated (not its text: nothing here needs it). */
  terms: string;
  /** The chunk's language as keyword analysis detected it. */
  language: KeywordLanguage;
  /** Float32Array goes to Arrow as is: no per-number JS arrays for 100k-chunk corpora. */
  vector: Float32Array;
}

export class CorpusIndex {
  private table: lancedb.Table | null = null;
  private unoptimizedRows = 0;
  /** In how many chunks each analysed term occurs (to spot rare query terms without a search). */
  private readonly termChunks = new Map<string, number>();
  /** Each chunk's language (to weigh the keyword signal by the question's). */
  private readonly languages = new Map<string, KeywordLanguage>();

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
    const rows: Row[] = chunks.map((c) => {
      const analysed = analyzeChunk(c.text);
      return { id: c.id, document_id: c.documentId, terms: analysed.terms, language: analysed.language, vector: c.vector };
    });
    for (const row of rows) {
      this.countTerms(row.terms, 1);
      this.languages.set(row.id, row.language);
    }
    if (!this.table) {
      this.table = await this.db.createTable(this.name, rows as unknown as Record<string, unknown>[]);
      await this.table.createIndex("terms", { config: ftsIndex() });
    } else {
      await this.table.add(rows as unknown as Record<string, unknown>[]);
      this.unoptimizedRows += rows.length;
    }
    if (optimize && this.unoptimizedRows >= 2000) await this.optimize();
  }

  async removeDocument(documentId: string): Promise<void> {
    if (!SAFE_ID.test(documentId)) throw new Error("invalid document id");
    if (!this.table) return;
    const rows = (await this.table.query().where(`document_id = '${documentId}'`).select(["id", "terms"]).toArray()) as { id: string; terms: string }[];
    await this.table.delete(`document_id = '${documentId}'`);
    for (const row of rows) {
      this.countTerms(row.terms, -1);
      this.languages.delete(row.id);
    }
  }

  private countTerms(terms: string, delta: 1 | -1): void {
    for (const term of new Set(terms.split(" "))) {
      if (!term) continue;
      const n = (this.termChunks.get(term) ?? 0) + delta;
      if (n > 0) this.termChunks.set(term, n);
      else this.termChunks.delete(term);
    }
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
    const { terms, words, language: queryLanguage } = request.mode === "vector" ? { terms: [], words: [], language: null } : analyzeQueryWithLanguage(request.text);
    if (request.mode === "vector" || (request.mode === "hybrid" && terms.length === 0)) {
      return request.vector ? await this.vectorSearch(request.vector, request.topK, where) : [];
    }
    if (request.mode === "keyword") {
      const hits = await this.keywordSearch(terms, request.topK, where);
      // The similarity of each hit, when the question was embedded (for the relevance gate).
      if (request.vector) {
        const similarity = await this.similarities(request.vector, hits.map((h) => h.chunkId));
        for (const hit of hits) hit.similarity = similarity.get(hit.chunkId) ?? null;
      }
      return hits;
    }
    if (!request.vector) return await this.keywordSearch(terms, request.topK, where);

    // Hybrid: both lists deep, then every candidate scored on both signals.
    const depth = Math.max(request.topK * 4, 50);
    const [vectorHits, keywordHits] = await Promise.all([this.vectorSearch(request.vector, depth, where), this.keywordSearch(terms, depth, where)]);
    const byId = new Map<string, { documentId: string; similarity: number | null; keyword: number }>();
    for (const h of vectorHits) byId.set(h.chunkId, { documentId: h.documentId, similarity: h.score, keyword: 0 });
    for (const h of keywordHits) {
      const known = byId.get(h.chunkId);
      if (known) known.keyword = h.score;
      else byId.set(h.chunkId, { documentId: h.documentId, similarity: null, keyword: h.score });
    }
    const unscored = [...byId].filter(([, c]) => c.similarity === null).map(([id]) => id);
    const similarity = await this.similarities(request.vector, unscored);
    for (const id of unscored) byId.get(id)!.similarity = similarity.get(id) ?? 0;
    const fusion = request.fusion ?? DEFAULT_FUSION;
    // Words match only within a language: when the closest passages are in another language
    // than the question (an English question about Malay reports), the keyword signal can only
    // point elsewhere, so it counts for as much as the share of close passages in the question's.
    const close = vectorHits.slice(0, 10);
    const sameLanguage = queryLanguage === null || close.length === 0 ? 1 : close.filter((h) => this.languages.get(h.chunkId) === queryLanguage).length / close.length;
    // And words are evidence only as far as the best keyword hits hold the question's wording:
    // when they share only a common word or two with it (IDF-weighted coverage), BM25's ranking
    // says little and the vector ranking should stand. Squared: a half-matched question gets a
    // quarter of the keyword weight. (Measured on the bilingual set and BEIR; `npm run eval`.)
    const coverage = await this.bestCoverage(words, keywordHits.slice(0, 3));
    const trustIn = fusion.keywordTrust ?? "squared";
    const trust = trustIn === "fixed" ? 1 : trustIn === "language" ? sameLanguage : trustIn === "linear" ? coverage * sameLanguage : coverage * coverage * sameLanguage;
    const fused = fuseScores(
      [...byId].map(([id, c]) => ({ id, similarity: c.similarity!, keyword: c.keyword })),
      { ...fusion, vectorWeight: 1 - (1 - fusion.vectorWeight) * trust },
    );
    const top = fused.slice(0, request.topK);
    if (request.keepRareTerms !== false) {
      const added = await this.keepRareTerms(words, top, fused, request.topK, where);
      // A kept chunk can lie beyond both candidate lists (many passages outrank it on the
      // other words): it is scored here.
      const missing = added.filter((h) => !byId.has(h.chunkId));
      const similarity = await this.similarities(request.vector, missing.map((h) => h.chunkId));
      for (const h of missing) byId.set(h.chunkId, { documentId: h.documentId, similarity: similarity.get(h.chunkId) ?? 0, keyword: h.score });
    }
    return top.map(({ id, score }) => ({ chunkId: id, documentId: byId.get(id)!.documentId, score, similarity: byId.get(id)!.similarity }));
  }

  /**
   * Puts the best chunk of each rare query term into `top` when the fusion left it out,
   * in place of the lowest-ranked others (at most half of the slots; rarest terms first).
   */
  private async keepRareTerms(words: string[][], top: { id: string; score: number }[], fused: { id: string; score: number }[], topK: number, where: string | undefined): Promise<SearchHit[]> {
    // A rare term is kept only when it carries a good part of what the query asks for: the
    // one word typed, or one of a few; in a long question a word one document happens to use
    // is no reason to push out a passage that answers it.
    const total = words.reduce((sum, w) => sum + this.wordIdf(w), 0);
    const candidates = [...new Set(words.flat())]
      .map((term) => ({ term, chunks: this.termChunks.get(term) ?? 0 }))
      .filter((t) => t.chunks > 0 && t.chunks <= RARE_TERM_CHUNKS && this.idf(t.term) >= RARE_TERM_SHARE * total)
      .sort((a, b) => a.chunks - b.chunks);
    const rank = new Map(fused.map((f, i) => [f.id, i]));
    const kept = new Set<string>();
    const added: SearchHit[] = [];
    const slots = Math.ceil(topK / 2);
    for (const { term } of candidates) {
      if (kept.size >= slots) break;
      const holders = await this.keywordSearch([term], RARE_TERM_CHUNKS, where);
      if (new Set(holders.map((h) => h.documentId)).size > RARE_TERM_DOCUMENTS || holders.length === 0) continue;
      if (holders.some((h) => top.some((t) => t.id === h.chunkId))) continue;
      // Its best chunk by the fused ranking; a holder outside the candidates ranks after them, by keyword score.
      const byRank = [...holders].sort((a, b) => (rank.get(a.chunkId) ?? Infinity) - (rank.get(b.chunkId) ?? Infinity) || b.score - a.score);
      const best = byRank[0]!.chunkId;
      const entry = fused[rank.get(best) ?? -1] ?? { id: best, score: 0 };
      added.push(byRank[0]!);
      // Replace the lowest-ranked entry that is not itself kept for a rare term.
      for (let i = top.length - 1; i >= 0; i--) {
        if (kept.has(top[i]!.id)) continue;
        if (top.length >= topK) top.splice(i, 1);
        break;
      }
      top.push(entry);
      kept.add(best);
    }
    return added;
  }

  /**
   * What the corpus offers for a query beyond the ranking, for the relevance gate: the
   * similarity profile of the closest chunks and how much of the query's words the
   * results hold (IDF-weighted, so a missing name or year counts more than a missing
   * common word).
   */
  async evidence(text: string, vector: Float32Array | null, hits: readonly SearchHit[]): Promise<RelevanceEvidence> {
    const { words } = analyzeQueryWithLanguage(text);
    const n = Math.max(1, this.languages.size);
    const total = words.reduce((sum, w) => sum + this.wordIdf(w), 0);
    const unknown = words.filter((w) => !w.some((t) => this.termChunks.has(t)));
    let coverage = 0;
    let missingMaxIdf = 0;
    if (this.table && total > 0) {
      const rows = await this.termsOf(hits.map((h) => h.chunkId));
      const seen = new Set<string[]>();
      for (const row of rows) {
        const have = new Set(row.terms.split(" "));
        for (const w of words) if (w.some((t) => have.has(t))) seen.add(w);
        coverage = Math.max(coverage, this.coverageIn(words, have, total));
      }
      missingMaxIdf = Math.max(0, ...words.filter((w) => !seen.has(w)).map((w) => this.wordIdf(w))) / Math.log(1 + (n + 0.5) / 0.5);
    }
    let bestSimilarity: number | null = null;
    let similarityGap: number | null = null;
    if (vector && this.table) {
      const close = await this.vectorSearch(vector, 20, undefined);
      if (close.length > 0) {
        bestSimilarity = close[0]!.score;
        similarityGap = bestSimilarity - close.reduce((sum, h) => sum + h.score, 0) / close.length;
      }
    }
    return {
      terms: words.length,
      bestSimilarity,
      similarityGap,
      keywordCoverage: total > 0 ? coverage : null,
      unknownTermShare: total > 0 ? unknown.reduce((sum, w) => sum + this.wordIdf(w), 0) / total : null,
      missingMaxIdf: total > 0 ? missingMaxIdf : null,
    };
  }

  /** The analysed terms of the chunks `ids`. */
  private async termsOf(ids: string[]): Promise<{ id: string; terms: string }[]> {
    const safe = ids.filter((id) => SAFE_ID.test(id));
    if (!this.table || safe.length === 0) return [];
    return (await this.table.query().where(`id IN (${safe.map((id) => `'${id}'`).join(",")})`).select(["id", "terms"]).toArray()) as { id: string; terms: string }[];
  }

  /** BM25's inverse document frequency of `term` over the chunks (terms never seen get the most). */
  private idf(term: string): number {
    const n = this.languages.size;
    const df = this.termChunks.get(term) ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** A query word's IDF: that of its commonest searched form (a word no chunk has gets the most). */
  private wordIdf(word: readonly string[]): number {
    return Math.min(...word.map((t) => this.idf(t)));
  }

  /** The IDF-weighted share of `words` (total IDF `total`) that a chunk with the terms `have` holds. */
  private coverageIn(words: readonly (readonly string[])[], have: ReadonlySet<string>, total: number): number {
    return words.reduce((sum, w) => sum + (w.some((t) => have.has(t)) ? this.wordIdf(w) : 0), 0) / total;
  }

  /**
   * How much of the query's keyword evidence the best keyword hits hold: the IDF-weighted
   * share of the query's words found in the best of `hits` (1 when one chunk has them all,
   * near 0 when the hits share only common words with the query).
   */
  private async bestCoverage(words: string[][], hits: SearchHit[]): Promise<number> {
    const total = words.reduce((sum, w) => sum + this.wordIdf(w), 0);
    if (total <= 0 || hits.length === 0) return 0;
    let best = 0;
    for (const row of await this.termsOf(hits.map((h) => h.chunkId))) best = Math.max(best, this.coverageIn(words, new Set(row.terms.split(" ")), total));
    return best;
  }

  private async vectorSearch(vector: Float32Array, limit: number, where: string | undefined): Promise<SearchHit[]> {
    let query = this.table!.vectorSearch(vector).distanceType("cosine").select(["id", "document_id", "_distance"]).limit(limit);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; _distance: number }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: 1 - r._distance, similarity: 1 - r._distance }));
  }

  private async keywordSearch(terms: string[], limit: number, where: string | undefined): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    let query = this.table!.query().fullTextSearch(new lancedb.MatchQuery(terms.join(" "), "terms")).select(["id", "document_id", "_score"]).limit(limit);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; _score: number }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: r._score, similarity: null }));
  }

  /** Cosine similarity of `vector` to each of the chunks `ids`. */
  private async similarities(vector: Float32Array, ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const safe = ids.filter((id) => SAFE_ID.test(id));
    if (safe.length === 0) return out;
    const rows = (await this.table!.query().where(`id IN (${safe.map((id) => `'${id}'`).join(",")})`).select(["id", "vector"]).toArray()) as { id: string; vector: ArrayLike<number> }[];
    let queryNorm = 0;
    for (let i = 0; i < vector.length; i++) queryNorm += vector[i]! * vector[i]!;
    for (const row of rows) {
      // An Arrow vector from LanceDB: its values as a typed array.
      const v: ArrayLike<number> = typeof (row.vector as { toArray?: unknown }).toArray === "function" ? (row.vector as unknown as { toArray(): Float32Array }).toArray() : row.vector;
      let dot = 0;
      let norm = 0;
      for (let i = 0; i < vector.length; i++) {
        const x = Number(v[i]);
        dot += vector[i]! * x;
        norm += x * x;
      }
      out.set(row.id, norm > 0 && queryNorm > 0 ? dot / Math.sqrt(norm * queryNorm) : 0);
    }
    return out;
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
