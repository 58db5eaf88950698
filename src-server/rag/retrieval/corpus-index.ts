/**
 * One corpus's query engine: an in-memory LanceDB table (vector column + full-text
 * index, and an IVF_RQ vector index once the corpus is large) built from decrypted
 * chunks and kept in step with indexing and deletion. Nothing of it touches the disk.
 */
import { arrow, lancedb, type Arrow, type LanceDb } from "./lance-modules.js";
import { float16Values, writeFloat16 } from "./float16.js";
import { fingerprintIds, SNAPSHOT_COLUMNS, type OpenedSnapshot, type SnapshotContent } from "./index-snapshot.js";
import { analyzeChunk, analyzeQueryWithLanguage, type KeywordLanguage } from "./keyword-analysis.js";
import { fuseScores, type HybridFusion } from "./score-fusion.js";

import type { KeywordTrust, SearchMode } from "../../domain/vocabulary.js";

export type { SearchMode };

/** A chunk to index: with its keyword analysis (`analyzeChunk`), or its text to analyse. */
export type IndexedChunk = { id: string; documentId: string; vector: Float32Array } & ({ text: string } | { terms: string; language: KeywordLanguage });

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
  /** How hybrid mode merges the two signals; default: convex, vector weight 0.5, keyword trust `auto`. */
  fusion?: HybridFusion | undefined;
  /** Hybrid mode: whether chunks holding a rare query term are kept in the results (default true). */
  keepRareTerms?: boolean | undefined;
  /** Compare the query with every chunk rather than through the vector index (the reference the index is measured against). */
  exact?: boolean | undefined;
}

export type { HybridFusion } from "./score-fusion.js";

/** A hybrid query's candidates scored on both signals, before fusion (`CorpusIndex.hybridCandidates`). */
export interface HybridCandidates {
  /** Chunk id → its document, cosine similarity and BM25 score (0: none of the terms). */
  readonly byId: ReadonlyMap<string, { documentId: string; similarity: number; keyword: number }>;
  /** The query's analysed words (each word's forms). */
  readonly words: string[][];
  /** Share of the closest passages in the question's language. */
  readonly sameLanguage: number;
  /** IDF-weighted coverage of the question by the best keyword hits. */
  readonly coverage: number;
  /** Whether the corpus's passages are in more than one language (`keywordTrust: "auto"`). */
  readonly multilingual: boolean;
  readonly where: string | undefined;
  readonly vector: Float32Array;
  /** The query's rare terms, rarest first, each with the chunks that hold it (`rankHybrid` keeps their best). */
  readonly rareTerms: readonly { term: string; holders: readonly RareTermHolder[] }[];
}

/** A chunk holding one of a query's rare terms, with its vector (its half floats, as stored). */
type RareTermHolder = SearchHit & { halves: Uint16Array };

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

/**
 * Hybrid by default: convex fusion, vector weight 0.5, keyword trust `auto`. Chosen on BEIR
 * SciFact's even-numbered queries (0.5 with the language rule), it held on Vaswani (both
 * English-only); the multilingual rule (the cube of coverage) was chosen on one half of
 * the bilingual set and held on the other. `npm run eval`, `npm run eval:beir`,
 * docs/EVALUATION.md.
 */
const DEFAULT_FUSION: HybridFusion = { method: "convex", vectorWeight: 0.5, keywordTrust: "auto" };

/** Share of passages in its second language that makes a corpus multilingual (`keywordTrust: "auto"`). */
const MULTILINGUAL_SHARE = 0.1;

/**
 * How far the keyword signal is trusted for one question, from 0 (vector ranking only) to 1
 * (the full keyword weight): `HybridFusion.keywordTrust`. `sameLanguage` is the share of the
 * closest passages in the question's language; `coverage`, how much of the question's
 * (IDF-weighted) wording the best keyword hits hold.
 */
export function keywordTrust(c: Pick<HybridCandidates, "sameLanguage" | "coverage" | "multilingual">, rule: KeywordTrust): number {
  switch (rule) {
    case "fixed":
      return 1;
    case "language":
      return c.sameLanguage;
    case "linear":
      return c.coverage * c.sameLanguage;
    case "squared":
      // A half-matched question gets a quarter of the keyword weight.
      return c.coverage ** 2 * c.sameLanguage;
    case "auto":
      // In one language, words are evidence as far as the question is in it; across two, a
      // question matched only on names and numbers may have its answer in the other language.
      return c.multilingual ? c.coverage ** 3 * c.sameLanguage : c.sameLanguage;
  }
}

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

/** A query vector with its norm, to compare with stored vectors. */
function queryVector(vector: Float32Array): { vector: Float32Array; norm: number } {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  return { vector, norm };
}

/** Cosine similarity of a query vector to a stored one, given as its half floats' bits. */
function cosineToHalves(query: { vector: Float32Array; norm: number }, halves: Uint16Array): number {
  const half = float16Values();
  const { vector } = query;
  let dot = 0;
  let norm = 0;
  for (let i = 0; i < vector.length; i++) {
    const x = half[halves[i]!]!;
    dot += vector[i]! * x;
    norm += x * x;
  }
  return norm > 0 && query.norm > 0 ? dot / Math.sqrt(norm * query.norm) : 0;
}

/**
 * The full-text index is built over each chunk's analysed terms (`keyword-analysis.ts`:
 * stop words removed, stemmed in the chunk's language), so LanceDB only splits them on
 * spaces: no stemming, stop words or folding of its own. A new native Index each time:
 * LanceDB consumes the object when it builds the index.
 */
const ftsIndex = () => lancedb.Index.fts({ baseTokenizer: "whitespace", lowercase: false, asciiFolding: false, stem: false, removeStopWords: false, withPosition: false, maxTokenLength: 64 });

/**
 * The vector index: IVF partitions with RaBitQ codes (1 bit per dimension, 12.8 MB per
 * 100k 1024-dim chunks beside the vectors themselves), searched in `ANN_PROBE_SHARE` of the
 * partitions, with the best `ANN_REFINE`× the limit candidates re-scored on the full vectors
 * (no more than `ANN_RESCORED`, and at least twice the limit). Below
 * `ANN_MIN_ROWS` chunks an exact search is as fast. Chosen by measurement (`bench/rag-scale.ts`,
 * docs/ARCHITECTURE.md): IVF_PQ took 10× longer to build and searched slower at the same recall.
 */
const ANN_MIN_ROWS = 20_000;
const ANN_PROBE_SHARE = 0.75;
/** Partitions per √rows: fewer, larger partitions than LanceDB's default √rows held recall with fewer probes. */
const ANN_PARTITIONS_PER_SQRT_ROWS = 1 / 3;
const ANN_REFINE = 10;
/**
 * Re-scoring reads each candidate's full vector by row: the time of a deep list. A hybrid
 * search's 50-deep vector list re-scored 500 (10× its limit), most of its time at 100k chunks;
 * with 150 its recall@50 against exact search was the same (0.967).
 */
const ANN_RESCORED = 150;
/** Rows are read and decrypted in Arrow batches of this many (a 1024-dim batch is 20 MB of vectors). */
const LOAD_BATCH = 10_000;
/**
 * …and written to LanceDB in parts of this many. What LanceDB's writes leave allocated grows
 * with the size of each write: loading 100k 1024-dim vectors (195 MB) grew the process by
 * 505 MB in writes of 10,000 rows, 275 MB in writes of 1,000–2,000, in the same time.
 */
const WRITE_BATCH = 2_000;
/**
 * LanceDB's legacy file format: measured in memory at 100k 1024-dim chunks, an exact vector
 * search took 45 ms on it against 370–470 ms on format 2.x, and loading was faster.
 */
const TABLE_OPTIONS = { dataStorageVersion: "legacy" } as const;

/** The vector column's type: `dimensions` half-precision values per chunk (`float16.ts`). */
function vectorType(dimensions: number): Arrow.FixedSizeList {
  return new arrow.FixedSizeList(dimensions, new arrow.Field("item", new arrow.Float16(), true));
}

/** The chunks as one Arrow table: the vectors in one Uint16Array of half floats behind a fixed-size list. */
function toArrow(chunks: readonly IndexedChunk[]): { table: Arrow.Table; terms: string[] } {
  const dimensions = chunks[0]!.vector.length;
  const vectors = new Uint16Array(chunks.length * dimensions);
  const terms: string[] = [];
  const languages: KeywordLanguage[] = [];
  chunks.forEach((c, i) => {
    if (c.vector.length !== dimensions) throw new Error(`chunk ${c.id} has ${c.vector.length} dimensions, not ${dimensions}`);
    writeFloat16(c.vector, vectors, i * dimensions);
    const analysed = "terms" in c ? c : analyzeChunk(c.text);
    terms.push(analysed.terms);
    languages.push(analysed.language);
  });
  const type = vectorType(dimensions);
  const table = new arrow.Table({
    id: arrow.vectorFromArray(chunks.map((c) => c.id), new arrow.Utf8()),
    document_id: arrow.vectorFromArray(chunks.map((c) => c.documentId), new arrow.Utf8()),
    terms: arrow.vectorFromArray(terms, new arrow.Utf8()),
    language: arrow.vectorFromArray(languages, new arrow.Utf8()),
    vector: arrow.makeVector(arrow.makeData({ type, length: chunks.length, nullCount: 0, child: arrow.makeData({ type: type.children[0]!.type as Arrow.Float16, length: vectors.length, nullCount: 0, data: vectors }) })),
  });
  return { table, terms };
}

export class CorpusIndex {
  private table: LanceDb.Table | null = null;
  private unoptimizedRows = 0;
  private rows = 0;
  private changes = 0;
  /** Whether the passages are in more than one language, as of `version` (`languageMix`). */
  private mix: { version: number; multilingual: boolean } | null = null;
  private vectorIndexDeferred = false;
  private queue: Promise<void> = Promise.resolve();
  /** The vector index: none yet, being built in the background, or in use. */
  private vectorIndex: { state: "none" } | { state: "building"; built: Promise<void> } | { state: "ready"; partitions: number } = { state: "none" };
  /** In how many chunks each analysed term occurs (to spot rare query terms without a search). */
  private readonly termChunks = new Map<string, number>();

  private constructor(
    private readonly db: LanceDb.Connection,
    private readonly name: string,
  ) {}

  /**
   * An index holding `chunks` (may be empty), searchable when this resolves. A large
   * corpus's vector index is then built in the background (`vectorIndexBuilt`); until it
   * is ready, vector search compares with every chunk. `chunks` may arrive asynchronously
   * (read from the store a page at a time while earlier batches are written).
   */
  static async open(db: LanceDb.Connection, corpusId: string, chunks: AsyncIterable<IndexedChunk> | Iterable<IndexedChunk>): Promise<CorpusIndex> {
    const index = new CorpusIndex(db, corpusId);
    async function* tables(): AsyncGenerator<Arrow.Table> {
      let batch: IndexedChunk[] = [];
      for await (const chunk of chunks) {
        batch.push(chunk);
        if (batch.length >= LOAD_BATCH) {
          yield index.prepare(batch);
          batch = [];
        }
      }
      if (batch.length > 0) yield index.prepare(batch);
    }
    await index.load(tables());
    return index;
  }

  /**
   * An index holding what a snapshot holds (`index-snapshot.ts`): its rows as they were
   * written, Arrow tables with the `SNAPSHOT_COLUMNS`, and its term statistics. Its vector
   * index waits for `startVectorIndex` (the caller may first bring the rows up to date).
   */
  static async openFromSnapshot(db: LanceDb.Connection, corpusId: string, snapshot: OpenedSnapshot): Promise<CorpusIndex> {
    const index = new CorpusIndex(db, corpusId);
    index.vectorIndexDeferred = true;
    await index.load(snapshot.batches());
    for (const [term, chunks] of snapshot.termChunks()) index.termChunks.set(term, chunks);
    return index;
  }

  /** Writes `tables` into a new table and builds its indexes; on failure nothing half-built stays behind. */
  private async load(tables: AsyncIterable<Arrow.Table> | Iterable<Arrow.Table>): Promise<void> {
    // LanceDB writes a batch on its own threads while the next one is read and decrypted,
    // in parts of `WRITE_BATCH` rows (views of the batch, not copies).
    let writing: Promise<void> = Promise.resolve();
    try {
      try {
        for await (const table of tables) {
          await writing;
          for (let start = 0; start < table.numRows; start += WRITE_BATCH) {
            const part = table.numRows <= WRITE_BATCH ? table : table.slice(start, start + WRITE_BATCH);
            writing = writing.then(() => this.write(part));
          }
        }
      } finally {
        await writing;
      }
      // The indexes once, over all rows (folding batches into them one by one cost twice as much).
      await this.createIndexes();
    } catch (error) {
      // A chunk that does not decrypt, or a failed write: nothing half-built stays behind.
      await this.close().catch(() => undefined);
      throw error;
    }
    this.buildVectorIndexIfDue();
  }

  /** How many chunks the index holds. */
  get size(): number {
    return this.rows;
  }

  /** Counts additions and removals, so a snapshot can tell whether it is still current. */
  get version(): number {
    return this.changes;
  }

  /**
   * Hands the index's content to `consume` (to write a snapshot) while no addition or
   * removal runs: the rows batch by batch as LanceDB reads them, regrouped to about
   * `LOAD_BATCH` rows. Resolves to the `version` the content is of.
   */
  async exportSnapshot(consume: (content: SnapshotContent) => Promise<void>): Promise<number> {
    return this.exclusive(async () => {
      if (!this.table) throw new Error("nothing to export: the index is empty");
      const table = this.table;
      const ids = await this.chunkIds();
      const vector = (await table.schema()).fields.find((f) => f.name === "vector")!.type as Arrow.FixedSizeList;
      async function* batches(): AsyncGenerator<Arrow.Table> {
        let group: Arrow.RecordBatch[] = [];
        let rows = 0;
        for await (const batch of table.query().select([...SNAPSHOT_COLUMNS])) {
          group.push(batch);
          rows += batch.numRows;
          if (rows >= LOAD_BATCH) {
            yield new arrow.Table(group);
            group = [];
            rows = 0;
          }
        }
        if (group.length > 0) yield new arrow.Table(group);
      }
      await consume({ fingerprint: fingerprintIds(ids), dimensions: vector.listSize, rows: ids.length, batches: batches(), termChunks: () => this.termChunks.entries() });
      return this.changes;
    });
  }

  /** Runs additions, removals and exports one at a time. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Resolves once the vector index a large corpus gets is built (at once when there is none to build). */
  async vectorIndexBuilt(): Promise<void> {
    if (this.vectorIndex.state === "building") await this.vectorIndex.built;
  }

  /** Whether vector search goes through the ANN index (false: exact search). */
  get approximate(): boolean {
    return this.vectorIndex.state === "ready";
  }

  /** Lets a vector index be built (`openFromSnapshot` defers it), now if the corpus is large enough. */
  startVectorIndex(): void {
    this.vectorIndexDeferred = false;
    this.buildVectorIndexIfDue();
  }

  /** Starts building the vector index once the corpus is large enough; searches stay exact meanwhile. */
  private buildVectorIndexIfDue(): void {
    if (this.vectorIndexDeferred || this.vectorIndex.state !== "none" || !this.table || this.rows < ANN_MIN_ROWS) return;
    const table = this.table;
    const partitions = Math.max(1, Math.round(Math.sqrt(this.rows) * ANN_PARTITIONS_PER_SQRT_ROWS));
    const built = table
      .createIndex("vector", { config: lancedb.Index.ivfRq({ distanceType: "cosine", numPartitions: partitions }) })
      .then(
        () => {
          if (this.table === table) this.vectorIndex = { state: "ready", partitions };
        },
        () => {
          // Exact search keeps working; the next addition tries again.
          if (this.table === table) this.vectorIndex = { state: "none" };
        },
      );
    this.vectorIndex = { state: "building", built };
  }

  async count(): Promise<number> {
    return this.table ? await this.table.countRows() : 0;
  }

  /**
   * Adds chunks; the full-text index is refreshed once enough rows are unindexed. Chunks
   * the index already holds are skipped (a document committed while its corpus's index
   * was being opened can arrive both ways).
   */
  add(chunks: IndexedChunk[]): Promise<void> {
    return this.exclusive(async () => {
      if (chunks.length === 0) return;
      // Not while the vector index is being built: the two would race on the table's versions.
      if (this.vectorIndex.state === "building") await this.vectorIndex.built;
      const present = await this.presentIds(chunks.map((c) => c.id));
      const fresh = present.size > 0 ? chunks.filter((c) => !present.has(c.id)) : chunks;
      if (fresh.length === 0) return;
      const created = this.table === null;
      const table = this.prepare(fresh);
      try {
        await this.write(table);
      } catch (error) {
        const terms = table.getChild("terms")!;
        fresh.forEach((_, i) => this.countTerms(terms.get(i) as string, -1));
        throw error;
      }
      this.changes++;
      if (created) await this.createIndexes();
      else if (this.unoptimizedRows >= 2000) await this.optimizeNow();
      this.buildVectorIndexIfDue();
    });
  }

  /** The chunks as an Arrow table, their terms counted. */
  private prepare(chunks: readonly IndexedChunk[]): Arrow.Table {
    const { table, terms } = toArrow(chunks);
    for (const t of terms) this.countTerms(t, 1);
    return table;
  }

  private async write(table: Arrow.Table): Promise<void> {
    if (!this.table) {
      this.table = await this.db.createTable(this.name, table, TABLE_OPTIONS);
    } else {
      await this.table.add(table);
      this.unoptimizedRows += table.numRows;
    }
    this.rows += table.numRows;
  }

  /** The full-text index, and the scalar indexes deletions and hybrid scoring's id lookups use. */
  private async createIndexes(): Promise<void> {
    if (!this.table) return;
    await this.table.createIndex("terms", { config: ftsIndex() });
    await this.table.createIndex("id", { config: lancedb.Index.btree() });
    await this.table.createIndex("document_id", { config: lancedb.Index.btree() });
    this.unoptimizedRows = 0;
  }

  removeDocument(documentId: string): Promise<void> {
    if (!SAFE_ID.test(documentId)) return Promise.reject(new Error("invalid document id"));
    return this.exclusive(async () => {
      if (!this.table) return;
      const rows = (await this.table.query().where(`document_id = '${documentId}'`).select(["id", "terms"]).toArray()) as { id: string; terms: string }[];
      if (rows.length === 0) return;
      await this.table.delete(`document_id = '${documentId}'`);
      this.rows -= rows.length;
      this.changes++;
      for (const row of rows) this.countTerms(row.terms, -1);
    });
  }

  /** Removes chunks by id (those of a snapshot that the store no longer has). */
  removeChunks(ids: readonly string[]): Promise<void> {
    const safe = ids.filter((id) => SAFE_ID.test(id));
    return this.exclusive(async () => {
      if (!this.table) return;
      for (let at = 0; at < safe.length; at += 1000) {
        const list = safe.slice(at, at + 1000).map((id) => `'${id}'`).join(",");
        const rows = (await this.table.query().where(`id IN (${list})`).select(["terms"]).toArray()) as { terms: string }[];
        if (rows.length === 0) continue;
        await this.table.delete(`id IN (${list})`);
        this.rows -= rows.length;
        this.changes++;
        for (const row of rows) this.countTerms(row.terms, -1);
      }
    });
  }

  /** The ids of the chunks the index holds, in ascending order. */
  async chunkIds(): Promise<string[]> {
    const ids: string[] = [];
    if (!this.table) return ids;
    for await (const batch of this.table.query().select(["id"])) {
      const column = batch.getChild("id")!;
      for (let i = 0; i < batch.numRows; i++) ids.push(column.get(i) as string);
    }
    return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private countTerms(terms: string, delta: 1 | -1): void {
    for (const term of new Set(terms.split(" "))) {
      if (!term) continue;
      const n = (this.termChunks.get(term) ?? 0) + delta;
      if (n > 0) this.termChunks.set(term, n);
      else this.termChunks.delete(term);
    }
  }

  /** Folds recently added rows into the indexes (unindexed rows are still searched, only slower). */
  optimize(): Promise<void> {
    return this.exclusive(() => this.optimizeNow());
  }

  private async optimizeNow(): Promise<void> {
    if (!this.table) return;
    // Not while the vector index is being built: the two would race on the table's versions.
    if (this.vectorIndex.state === "building") await this.vectorIndex.built;
    await this.table.optimize();
    this.unoptimizedRows = 0;
  }

  async search(request: SearchRequest): Promise<SearchHit[]> {
    if (!this.table || request.topK <= 0) return [];
    if (request.documentIds?.length === 0) return [];
    const where = request.documentIds ? `document_id IN (${request.documentIds.filter((id) => SAFE_ID.test(id)).map((id) => `'${id}'`).join(",")})` : undefined;
    const { terms, words, language: queryLanguage } = request.mode === "vector" ? { terms: [], words: [], language: null } : analyzeQueryWithLanguage(request.text);
    const exact = request.exact === true;
    if (request.mode === "vector" || (request.mode === "hybrid" && terms.length === 0)) {
      if (!request.vector) return [];
      return (await this.vectorSearch(request.vector, request.topK, where, exact)).map((h) => ({ chunkId: h.chunkId, documentId: h.documentId, score: h.score, similarity: h.similarity }));
    }
    if (request.mode === "keyword") {
      if (!request.vector) return await this.keywordSearch(terms, request.topK, where);
      // The similarity of each hit, when the question was embedded (for the relevance gate).
      const query = queryVector(request.vector);
      return (await this.keywordRows(terms, request.topK, where)).map((r) => ({ chunkId: r.chunkId, documentId: r.documentId, score: r.score, similarity: cosineToHalves(query, r.halves) }));
    }
    if (!request.vector) return await this.keywordSearch(terms, request.topK, where);
    const candidates = await this.candidatesFor({ words, language: queryLanguage, terms }, request.vector, request.topK, where, exact);
    return this.rankHybrid(candidates, request.fusion ?? DEFAULT_FUSION, request.topK, request.keepRareTerms !== false);
  }

  /**
   * A hybrid query's candidates, each scored on both signals, before fusion: what
   * `search` ranks, and what search tuning (`search-tuning.ts`) ranks under many fusions
   * without searching again. The same `topK` gives the same candidates as `search`.
   */
  async hybridCandidates(text: string, vector: Float32Array, topK: number, documentIds?: string[]): Promise<HybridCandidates | null> {
    if (!this.table || topK <= 0 || documentIds?.length === 0) return null;
    const where = documentIds ? `document_id IN (${documentIds.filter((id) => SAFE_ID.test(id)).map((id) => `'${id}'`).join(",")})` : undefined;
    const analysed = analyzeQueryWithLanguage(text);
    if (analysed.terms.length === 0) return null;
    return await this.candidatesFor(analysed, vector, topK, where, false);
  }

  private async candidatesFor(query: { words: string[][]; language: KeywordLanguage | null; terms: string[] }, vector: Float32Array, topK: number, where: string | undefined, exact: boolean): Promise<HybridCandidates> {
    // Both lists deep, then every candidate scored on both signals.
    const depth = Math.max(topK * 4, 50);
    // The keyword hits come with their vectors and terms: scoring them needs no lookup after
    // (a lookup by id reads the id of every row: at 100k chunks, each took longer than the search).
    // The chunks holding each rare term of the query are looked up at the same time.
    const [vectorHits, keywordHits, rareTerms] = await Promise.all([
      this.vectorSearch(vector, depth, where, exact),
      this.keywordRows(query.terms, depth, where),
      Promise.all(this.rareTermsOf(query.words).map(async (term) => ({ term, holders: await this.keywordRows([term], RARE_TERM_CHUNKS, where) }))),
    ]);
    const byId = new Map<string, { documentId: string; similarity: number; keyword: number }>();
    for (const h of vectorHits) byId.set(h.chunkId, { documentId: h.documentId, similarity: h.score, keyword: 0 });
    const asked = queryVector(vector);
    for (const h of keywordHits) {
      const known = byId.get(h.chunkId);
      if (known) known.keyword = h.score;
      else byId.set(h.chunkId, { documentId: h.documentId, similarity: cosineToHalves(asked, h.halves), keyword: h.score });
    }
    // Words match only within a language: when the closest passages are in another language
    // than the question (an English question about Malay reports), the keyword signal can only
    // point elsewhere, so it counts for as much as the share of close passages in the question's.
    const close = vectorHits.slice(0, 10);
    const sameLanguage = query.language === null || close.length === 0 ? 1 : close.filter((h) => h.language === query.language).length / close.length;
    // And words are evidence only as far as the best keyword hits hold the question's wording:
    // when they share only a common word or two with it (IDF-weighted coverage), BM25's ranking
    // says little and the vector ranking should stand (`keywordTrust`; measured on the
    // bilingual set and BEIR, `npm run eval`).
    const coverage = this.bestCoverage(query.words, keywordHits.slice(0, 3));
    return { byId, words: query.words, sameLanguage, coverage, multilingual: await this.multilingual(), where, vector, rareTerms };
  }

  /**
   * Whether at least `MULTILINGUAL_SHARE` of the passages are in another language than most
   * of them (counted again after each change). In a corpus in one language the question's
   * language says all there is to say about its words; in a mixed one, a question's closest
   * passages can be in its language while its answer is in the other.
   */
  private async multilingual(): Promise<boolean> {
    if (this.mix?.version === this.changes) return this.mix.multilingual;
    const version = this.changes;
    const total = this.table ? await this.table.countRows() : 0;
    const malay = total > 0 ? await this.table!.countRows("language = 'ms'") : 0;
    const multilingual = total > 0 && Math.min(malay, total - malay) / total >= MULTILINGUAL_SHARE;
    this.mix = { version, multilingual };
    return multilingual;
  }

  /** The best `topK` of `candidates` under `fusion` (and, unless asked not to, each rare query term's best chunk). */
  rankHybrid(candidates: HybridCandidates, fusion: HybridFusion, topK: number, keepRareTerms = true): SearchHit[] {
    const fused = fuseScores(
      [...candidates.byId].map(([id, c]) => ({ id, similarity: c.similarity, keyword: c.keyword })),
      { ...fusion, vectorWeight: 1 - (1 - fusion.vectorWeight) * keywordTrust(candidates, fusion.keywordTrust ?? "auto") },
    );
    const { byId } = candidates;
    const top = fused.slice(0, topK);
    // A kept chunk can lie beyond both candidate lists (many passages outrank it on the
    // other words): it is scored here, without joining the candidates (they are ranked again under other fusions).
    const beyond = new Map<string, { documentId: string; similarity: number }>();
    if (keepRareTerms) {
      const added = this.keepRareTerms(candidates.rareTerms, top, fused, topK);
      const asked = queryVector(candidates.vector);
      for (const h of added) if (!byId.has(h.chunkId)) beyond.set(h.chunkId, { documentId: h.documentId, similarity: cosineToHalves(asked, h.halves) });
    }
    return top.map(({ id, score }) => {
      const c = byId.get(id) ?? beyond.get(id)!;
      return { chunkId: id, documentId: c.documentId, score, similarity: c.similarity };
    });
  }

  /**
   * A query's rare terms, rarest first: each held by at most `RARE_TERM_CHUNKS` chunks and
   * carrying a good part of what the query asks for (the one word typed, or one of a few; in
   * a long question a word one document happens to use is no reason to push out a passage
   * that answers it).
   */
  private rareTermsOf(words: string[][]): string[] {
    const total = words.reduce((sum, w) => sum + this.wordIdf(w), 0);
    return [...new Set(words.flat())]
      .map((term) => ({ term, chunks: this.termChunks.get(term) ?? 0 }))
      .filter((t) => t.chunks > 0 && t.chunks <= RARE_TERM_CHUNKS && this.idf(t.term) >= RARE_TERM_SHARE * total)
      .sort((a, b) => a.chunks - b.chunks)
      .map((t) => t.term);
  }

  /**
   * Puts the best chunk of each rare query term into `top` when the fusion left it out,
   * in place of the lowest-ranked others (at most half of the slots; rarest terms first).
   */
  private keepRareTerms(rareTerms: HybridCandidates["rareTerms"], top: { id: string; score: number }[], fused: { id: string; score: number }[], topK: number): RareTermHolder[] {
    const rank = new Map(fused.map((f, i) => [f.id, i]));
    const kept = new Set<string>();
    const added: RareTermHolder[] = [];
    const slots = Math.ceil(topK / 2);
    for (const { holders } of rareTerms) {
      if (kept.size >= slots) break;
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
    const n = Math.max(1, this.rows);
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

  /** Which of the chunks `ids` the index holds. */
  private async presentIds(ids: string[]): Promise<Set<string>> {
    const safe = ids.filter((id) => SAFE_ID.test(id));
    if (!this.table || safe.length === 0) return new Set();
    const rows = (await this.table.query().where(`id IN (${safe.map((id) => `'${id}'`).join(",")})`).select(["id"]).toArray()) as { id: string }[];
    return new Set(rows.map((r) => r.id));
  }

  /** The analysed terms of the chunks `ids`. */
  private async termsOf(ids: string[]): Promise<{ id: string; terms: string }[]> {
    const safe = ids.filter((id) => SAFE_ID.test(id));
    if (!this.table || safe.length === 0) return [];
    return (await this.table.query().where(`id IN (${safe.map((id) => `'${id}'`).join(",")})`).select(["id", "terms"]).toArray()) as { id: string; terms: string }[];
  }

  /** BM25's inverse document frequency of `term` over the chunks (terms never seen get the most). */
  private idf(term: string): number {
    const n = this.rows;
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
  private bestCoverage(words: string[][], hits: readonly { terms: string }[]): number {
    const total = words.reduce((sum, w) => sum + this.wordIdf(w), 0);
    if (total <= 0 || hits.length === 0) return 0;
    let best = 0;
    for (const hit of hits) best = Math.max(best, this.coverageIn(words, new Set(hit.terms.split(" ")), total));
    return best;
  }

  /** The closest chunks, with their language (to weigh the keyword signal by the question's). */
  private async vectorSearch(vector: Float32Array, limit: number, where: string | undefined, exact = false): Promise<(SearchHit & { language: KeywordLanguage })[]> {
    let query = this.table!.vectorSearch(vector).distanceType("cosine").select(["id", "document_id", "language", "_distance"]).limit(limit);
    // A search restricted to some documents is exact: the IVF partitions probed might hold
    // few of their chunks, and comparing with only theirs is cheap.
    if (exact || where || this.vectorIndex.state !== "ready") query = query.bypassVectorIndex();
    else query = query.nprobes(Math.max(1, Math.ceil(this.vectorIndex.partitions * ANN_PROBE_SHARE))).refineFactor(Math.max(2, Math.min(ANN_REFINE, Math.ceil(ANN_RESCORED / limit))));
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; language: KeywordLanguage; _distance: number }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: 1 - r._distance, similarity: 1 - r._distance, language: r.language }));
  }

  private async keywordSearch(terms: string[], limit: number, where: string | undefined): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    let query = this.table!.query().fullTextSearch(new lancedb.MatchQuery(terms.join(" "), "terms")).select(["id", "document_id", "_score"]).limit(limit);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; _score: number }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: r._score, similarity: null }));
  }

  /**
   * Keyword hits with what ranking them beside the vector hits takes: each one's vector (its
   * half floats, as stored) and analysed terms, read with the hits.
   */
  private async keywordRows(terms: string[], limit: number, where: string | undefined): Promise<(SearchHit & { halves: Uint16Array; terms: string })[]> {
    if (terms.length === 0) return [];
    let query = this.table!.query().fullTextSearch(new lancedb.MatchQuery(terms.join(" "), "terms")).select(["id", "document_id", "_score", "vector", "terms"]).limit(limit);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as { id: string; document_id: string; _score: number; vector: { toArray(): Uint16Array }; terms: string }[];
    return rows.map((r) => ({ chunkId: r.id, documentId: r.document_id, score: r._score, similarity: null, halves: r.vector.toArray(), terms: r.terms }));
  }

  /** Drops the table and frees its memory. */
  async close(): Promise<void> {
    if (this.table) {
      if (this.vectorIndex.state === "building") await this.vectorIndex.built;
      this.table.close();
      await this.db.dropTable(this.name);
      this.table = null;
    }
  }
}
