/**
 * Grounded questions: retrieve from the corpus index, decide whether anything relevant
 * was found, and have the chat model answer from numbered sources. Citations are always
 * part of the result.
 */
import type { Principal } from "../../domain/scopes.js";
import type { ChatRun, InferenceEngine } from "../../engine/types.js";
import { ServiceError, invalidRequest } from "../../errors.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import type { DocumentStore } from "../../store/document-store.js";
import { openContent } from "../chunk-codec.js";
import type { CorpusService } from "../corpus-service.js";
import type { CorpusIndexes } from "../retrieval/corpus-indexes.js";
import type { HybridFusion, SearchMode } from "../retrieval/corpus-index.js";
import { citedIndexes, groundedMessages, notInCorpusAnswer } from "./grounded-prompt.js";

export interface QueryInput {
  question: string;
  topK: number;
  search: SearchMode;
  filter?: Record<string, string | number | boolean> | undefined;
  model?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
}

export interface Citation {
  index: number;
  documentId: string;
  chunkId: string;
  filename: string;
  text: string;
  score: number;
  /** 1-based first and last page of the passage (PDF); null for formats without pages. */
  pageStart: number | null;
  pageEnd: number | null;
  metadata: Record<string, unknown>;
}

/** A citation as the answer returns it: whether the answer used the source. */
export interface AnswerCitation extends Citation {
  cited: boolean;
}

export interface StartedQuery {
  corpusId: string;
  model: string;
  citations: Citation[];
  /** The generation, or null when nothing relevant was found and `fallback` is the answer. */
  run: ChatRun | null;
  fallback: string | null;
  /** Tokens spent embedding the question. */
  queryTokens: number;
}

export interface Retrieval {
  citations: (Citation & { headingPath: string[] })[];
  /** False when nothing in the corpus is close enough to the question. */
  relevant: boolean;
  /** Cosine similarity of the closest chunk (null in keyword mode). */
  bestSimilarity: number | null;
  queryTokens: number;
}

export interface QueryServiceDeps {
  corpora: CorpusService;
  documents: DocumentStore;
  chunks: ChunkStore;
  keyring: CorpusKeyring;
  indexes: CorpusIndexes;
  registry: ModelRegistry;
  engine: InferenceEngine;
  defaultChatModel: string;
  /** Below this cosine similarity of the closest chunk, nothing is relevant. */
  minSimilarity: number;
  fusion: HybridFusion;
}

export class QueryService {
  constructor(private readonly deps: QueryServiceDeps) {}

  /**
   * Retrieval only: the best chunks for `input.question`, decrypted, as citations.
   * `relevant` is false when the corpus holds nothing close enough (vector similarity
   * of the best hit below `minSimilarity`; keyword mode trusts any match).
   */
  async retrieve(principal: Principal, corpusId: string, input: Omit<QueryInput, "model" | "temperature" | "maxTokens">, signal: AbortSignal): Promise<Retrieval> {
    const corpus = this.deps.corpora.get(principal, corpusId);
    if (corpus.status !== "ready") {
      const pending = corpus.counts.queued + corpus.counts.processing;
      const why = corpus.status === "indexing" ? `it is still indexing (${pending} documents pending)` : corpus.status === "empty" ? "it has no documents yet" : "none of its documents could be indexed";
      throw new ServiceError("conflict", `Corpus '${corpusId}' cannot be queried yet: ${why}. Wait for status 'ready' (GET /v1/rag/corpora/${corpusId} or its /events stream).`, { code: "corpus_not_ready" });
    }
    let vector: Float32Array | null = null;
    let queryTokens = 0;
    if (input.search !== "keyword") {
      const embedded = await this.deps.engine.embed(this.deps.registry.resolve(corpus.embeddingModel, "embedding_model"), [input.question], signal);
      vector = embedded.vectors[0] ?? null;
      queryTokens = embedded.promptTokens;
    }
    const documentIds = input.filter && Object.keys(input.filter).length > 0 ? this.deps.documents.idsMatching(corpusId, input.filter) : undefined;
    const index = await this.deps.indexes.get(corpusId);
    const hits = await index.search({ mode: input.search, text: input.question, vector, topK: input.topK, documentIds, fusion: this.deps.fusion });
    const bestSimilarity = hits.reduce((best, h) => Math.max(best, h.similarity ?? -1), -1);
    const relevant = hits.length > 0 && (input.search === "keyword" || bestSimilarity >= this.deps.minSimilarity);

    const cipher = await this.deps.keyring.cipher(corpusId);
    const sealed = new Map(this.deps.chunks.byIds(hits.map((h) => h.chunkId)).map((c) => [c.id, c]));
    const citations: (Citation & { headingPath: string[] })[] = [];
    for (const hit of hits) {
      const chunk = sealed.get(hit.chunkId);
      const document = chunk && this.deps.documents.getById(chunk.documentId);
      if (!chunk || !document) continue; // deleted between search and read
      const content = openContent(cipher, chunk.id, chunk.content);
      citations.push({ index: citations.length + 1, documentId: document.id, chunkId: chunk.id, filename: document.filename, text: content.text, score: hit.score, pageStart: chunk.pageStart, pageEnd: chunk.pageEnd, metadata: document.metadata, headingPath: content.headingPath });
    }
    return { citations, relevant, bestSimilarity: bestSimilarity < -0.5 ? null : bestSimilarity, queryTokens };
  }

  /** Retrieves and admits the answer generation; every error here precedes any output. */
  async start(principal: Principal, corpusId: string, input: QueryInput, signal: AbortSignal): Promise<StartedQuery> {
    const modelName = input.model ?? this.deps.registry.defaultName("chat", this.deps.defaultChatModel);
    const chatModel = this.deps.registry.resolve(modelName, "model");
    if (chatModel.type !== "chat") throw invalidRequest(`'${modelName}' is an embedding model and cannot answer questions`, "model_not_supported", "model");
    const found = await this.retrieve(principal, corpusId, input, signal);
    const citations = found.citations.map(({ headingPath: _h, ...c }) => c);
    if (!found.relevant || citations.length === 0) {
      return { corpusId, model: modelName, citations, run: null, fallback: notInCorpusAnswer(input.question), queryTokens: found.queryTokens };
    }
    const sources = found.citations.map((c) => ({ index: c.index, filename: c.filename, pageStart: c.pageStart, pageEnd: c.pageEnd, headingPath: c.headingPath, text: c.text }));
    const run = await this.deps.engine.startChat(
      chatModel,
      {
        messages: groundedMessages(input.question, sources),
        tools: [],
        toolChoice: "none",
        responseFormat: { type: "text" },
        maxTokens: input.maxTokens,
        stop: [],
        sampling: { temperature: input.temperature ?? 0.2, seed: 0 },
      },
      signal,
    );
    return { corpusId, model: modelName, citations, run, fallback: null, queryTokens: found.queryTokens };
  }

  /** The citations of a finished answer, each marked with whether the answer cites it (`[n]`). */
  citationsFor(started: StartedQuery, answer: string): AnswerCitation[] {
    const cited = started.fallback !== null ? new Set<number>() : citedIndexes(answer, started.citations.length);
    return started.citations.map((c) => ({ ...c, cited: cited.has(c.index) }));
  }
}
