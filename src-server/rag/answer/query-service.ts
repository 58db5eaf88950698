/**
 * Grounded questions: retrieve from the corpus index, decide whether anything relevant
 * was found, and have the chat model answer from numbered sources. Citations are always
 * part of the result.
 */
import type { Principal } from "../../admin/scopes.js";
import type { ChatRun, InferenceEngine } from "../../engine/types.js";
import { ServiceError, invalidRequest } from "../../errors.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import type { DocumentStore } from "../../store/document-store.js";
import { openContent } from "../chunk-codec.js";
import type { CorpusService } from "../corpus-service.js";
import type { CorpusIndexes } from "../retrieval/corpus-indexes.js";
import type { SearchMode } from "../retrieval/corpus-index.js";
import { groundedMessages, notInCorpusAnswer } from "./grounded-prompt.js";

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
  page: number | null;
  metadata: Record<string, unknown>;
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

export interface QueryServiceDeps {
  corpora: CorpusService;
  documents: DocumentStore;
  chunks: ChunkStore;
  keyring: CorpusKeyring;
  indexes: CorpusIndexes;
  registry: ModelRegistry;
  engine: InferenceEngine;
  defaultChatModel: string;
  /** Below this cosine similarity, and with no keyword match, a hit is not relevant. */
  minSimilarity: number;
}

export class QueryService {
  constructor(private readonly deps: QueryServiceDeps) {}

  /** Retrieves and admits the answer generation; every error here precedes any output. */
  async start(principal: Principal, corpusId: string, input: QueryInput, signal: AbortSignal): Promise<StartedQuery> {
    const corpus = this.deps.corpora.get(principal, corpusId);
    if (corpus.status !== "ready") {
      const why = corpus.status === "indexing" ? `it is still indexing (${corpus.counts.queued + corpus.counts.processing} documents pending)` : corpus.status === "empty" ? "it has no documents yet" : "none of its documents could be indexed";
      throw new ServiceError("conflict", `Corpus '${corpusId}' cannot be queried yet: ${why}. Wait for status 'ready' (GET /v1/rag/corpora/${corpusId} or its /events stream).`, { code: "corpus_not_ready" });
    }
    const modelName = input.model ?? this.deps.defaultChatModel;
    const chatModel = this.deps.registry.resolve(modelName, "model");
    if (chatModel.type !== "chat") throw invalidRequest(`'${modelName}' is an embedding model and cannot answer questions`, "model_not_supported", "model");

    let vector: Float32Array | null = null;
    let queryTokens = 0;
    if (input.search !== "keyword") {
      const embedded = await this.deps.engine.embed(this.deps.registry.resolve(corpus.embeddingModel, "embedding_model"), [input.question], signal);
      vector = embedded.vectors[0] ?? null;
      queryTokens = embedded.promptTokens;
    }
    const documentIds = input.filter && Object.keys(input.filter).length > 0 ? this.deps.documents.idsMatching(corpusId, input.filter) : undefined;
    const index = await this.deps.indexes.get(corpusId);
    const hits = await index.search({ mode: input.search, text: input.question, vector, topK: input.topK, documentIds });
    // Relevance gate: a keyword match, or a vector close enough; otherwise say so, do not guess.
    const relevant = hits.filter((h) => input.search === "keyword" || h.similarity === null || h.similarity >= this.deps.minSimilarity);

    const cipher = await this.deps.keyring.cipher(corpusId);
    const sealed = new Map(this.deps.chunks.byIds(relevant.map((h) => h.chunkId)).map((c) => [c.id, c]));
    const citations: Citation[] = [];
    const sources = [];
    for (const hit of relevant) {
      const chunk = sealed.get(hit.chunkId);
      const document = chunk && this.deps.documents.getById(chunk.documentId);
      if (!chunk || !document) continue; // deleted between search and read
      const content = openContent(cipher, chunk.id, chunk.content);
      const index = citations.length + 1;
      citations.push({ index, documentId: document.id, chunkId: chunk.id, filename: document.filename, text: content.text, score: hit.score, page: chunk.pageStart, metadata: document.metadata });
      sources.push({ index, filename: document.filename, page: chunk.pageStart, headingPath: content.headingPath, text: content.text });
    }
    if (citations.length === 0) {
      return { corpusId, model: modelName, citations, run: null, fallback: notInCorpusAnswer(input.question), queryTokens };
    }
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
    return { corpusId, model: modelName, citations, run, fallback: null, queryTokens };
  }
}
