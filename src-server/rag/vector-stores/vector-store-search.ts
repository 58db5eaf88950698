/**
 * Searching vector stores: each store's corpus is searched by the corpus search itself
 * (`QueryService.retrieve`, what `/v1/rag/corpora/{id}/search` runs, in the corpus's mode:
 * hybrid by default), limited to the documents whose attributes pass the filter. Several
 * queries (OpenAI takes a list) and several stores (`file_search` names several) are merged,
 * each passage once at its best score. What is indexed is searched while other files are
 * still indexing, as OpenAI's stores are.
 */
import type { Principal } from "../../domain/scopes.js";
import type { DocumentStore } from "../../store/document-store.js";
import type { VectorStoreStore } from "../../store/vector-store-store.js";
import type { QueryService } from "../answer/query-service.js";
import { attributesOf, matchesFilter, type AttributeFilter } from "./attribute-filter.js";
import type { Attributes } from "../../store/vector-store-store.js";
import type { VectorStoreService } from "./vector-store-service.js";

export interface SearchOptions {
  /** 1–50. */
  maxResults: number;
  filters?: AttributeFilter | undefined;
  ranking?: {
    /** `none`: no reranking; `auto` (or OpenAI's dated ranker): the corpus's reranker when it has one. */
    ranker?: "none" | "auto" | "default-2024-11-15" | undefined;
    /** Results scoring below it are left out. */
    scoreThreshold?: number | undefined;
  } | undefined;
  /** Accepted; Pustaka's hybrid search analyses the query itself (stemming, Malay and English), so the query is searched as written. */
  rewriteQuery?: boolean | undefined;
}

/** One passage found: what OpenAI reports, plus where it is in Pustaka (document, chunk, pages). */
export interface VectorStoreHit {
  vectorStoreId: string;
  /** The file the document was attached as; a document uploaded to the corpus directly is its own file (its document id). */
  fileId: string;
  documentId: string;
  chunkId: string;
  filename: string;
  score: number;
  attributes: Attributes;
  text: string;
  /** 1-based first and last page (PDF); null for formats without pages. */
  pageStart: number | null;
  pageEnd: number | null;
  headingPath: string[];
}

export interface VectorStoreSearchResult {
  /** The queries searched, as searched. */
  searchQuery: string[];
  hits: VectorStoreHit[];
  /** Tokens spent embedding the queries (and reranking). */
  queryTokens: number;
}

export interface VectorStoreSearchDeps {
  stores: VectorStoreService;
  queries: QueryService;
  documents: DocumentStore;
  store: VectorStoreStore;
}

export class VectorStoreSearch {
  constructor(private readonly deps: VectorStoreSearchDeps) {}

  /**
   * The best passages for `query` (one or several) across `vectorStoreIds` of the caller's
   * workspace, best first, at most `maxResults`. An unknown store is 404, an expired one 400.
   */
  async search(principal: Principal, vectorStoreIds: readonly string[], query: string | readonly string[], options: SearchOptions, signal: AbortSignal): Promise<VectorStoreSearchResult> {
    const queries = typeof query === "string" ? [query] : [...query];
    // Every store is checked before any model work.
    const stores = [];
    for (const id of new Set(vectorStoreIds)) stores.push(await this.deps.stores.openLive(principal, id));
    const best = new Map<string, VectorStoreHit>();
    let queryTokens = 0;
    for (const store of stores) {
      const corpusId = store.corpus.id;
      const documentIds = options.filters ? await this.documentsPassing(corpusId, options.filters) : undefined;
      await this.deps.stores.touch(store);
      if (documentIds?.length === 0 || !(await this.deps.stores.hasIndexed(store))) continue;
      const hits: VectorStoreHit[] = [];
      for (const question of queries) {
        const found = await this.deps.queries.retrieve(
          principal,
          corpusId,
          { question, topK: options.maxResults, documentIds, whileIndexing: true, rerank: options.ranking?.ranker === "none" ? { use: "none" } : undefined },
          signal,
        );
        queryTokens += found.queryTokens;
        for (const c of found.citations) {
          hits.push({ vectorStoreId: store.id, fileId: c.documentId, documentId: c.documentId, chunkId: c.chunkId, filename: c.filename, score: c.score, attributes: attributesOf(c.metadata), text: c.text, pageStart: c.pageStart, pageEnd: c.pageEnd, headingPath: c.headingPath });
        }
      }
      const fileIds = await this.deps.store.fileIdsOf(corpusId, [...new Set(hits.map((h) => h.documentId))]);
      for (const hit of hits) {
        hit.fileId = fileIds.get(hit.documentId) ?? hit.documentId;
        const kept = best.get(hit.chunkId);
        if (!kept || kept.score < hit.score) best.set(hit.chunkId, hit);
      }
    }
    const threshold = options.ranking?.scoreThreshold;
    const hits = [...best.values()]
      .filter((h) => threshold === undefined || h.score >= threshold)
      .sort((a, b) => b.score - a.score)
      .slice(0, options.maxResults);
    return { searchQuery: queries, hits, queryTokens };
  }

  /** The indexed documents whose attributes (their metadata) pass the filter. */
  private async documentsPassing(corpusId: string, filter: AttributeFilter): Promise<string[]> {
    const documents = await this.deps.documents.ofCorpus(corpusId);
    return documents.filter((d) => d.status === "indexed" && matchesFilter(filter, d.metadata)).map((d) => d.id);
  }
}
