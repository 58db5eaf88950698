/**
 * Grounded questions: retrieve from the corpus index, decide whether anything relevant
 * was found, and have the chat model answer from numbered sources. Citations are always
 * part of the result.
 */
import type { Principal } from "../../domain/scopes.js";
import type { ChatRun, FinishReason, InferenceEngine } from "../../engine/types.js";
import { ServiceError, invalidRequest } from "../../errors.js";
import type { ModelEntry, ModelRegistry } from "../../models/model-registry.js";
import { embeddingInput } from "../../models/embedding-prompts.js";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import type { DocumentStore } from "../../store/document-store.js";
import { openContent } from "../chunk-codec.js";
import type { CorpusService, CorpusView } from "../corpus-service.js";
import type { CorpusIndexes } from "../retrieval/corpus-indexes.js";
import type { HybridFusion, RelevanceEvidence, SearchMode } from "../retrieval/corpus-index.js";
import type { PageBreak } from "../chunking/types.js";
import type { SearchDefaults } from "../../domain/vocabulary.js";
import { supportAnswer, type SupportedAnswer } from "./answer-support.js";
import { groundedMessages, notInCorpusAnswer } from "./grounded-prompt.js";
import { BUILT_IN_GATES, answerability, gateFor, modelFingerprint, usesJudge, type RelevanceGateModel } from "./relevance-gate.js";
import { JUDGE_CHOICES, judgeMessages } from "./relevance-judge.js";

export interface QueryInput {
  question: string;
  topK: number;
  /** Default: the corpus's `searchDefaults`, else hybrid. */
  search?: SearchMode | undefined;
  filter?: Record<string, string | number | boolean> | undefined;
  /** Only these documents (a caller's own selection: a vector store's attribute filters); with `filter`, those in both. */
  documentIds?: readonly string[] | undefined;
  /** Search what is indexed while other documents are still indexing, as OpenAI's vector stores do (default: 409 until ready). */
  whileIndexing?: boolean | undefined;
  /** Hybrid mode: how to fuse the two signals; fields not given come from the corpus's `searchDefaults`, then the server's `rag.hybridFusion`. */
  fusion?: Partial<HybridFusion> | undefined;
  /** Reranking of the fused candidates (default: the corpus's reranker, if it has one). */
  rerank?: RerankChoice | undefined;
  model?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
}

/**
 * Which reranker a query uses: the corpus's (`corpus`, an error when it has none), a
 * named rerank model, or none. `candidates`: how many fused results it rescores.
 */
export interface RerankChoice {
  use: "corpus" | "model" | "none";
  model?: string;
  candidates?: number;
}

/** Fused candidates a reranker rescores when the query does not say (it then keeps the best `top_k`). */
export const DEFAULT_RERANK_CANDIDATES = 30;

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
  /** Where each page begins inside `text` (absent without pages, or for chunks stored before it was recorded). */
  pageBreaks?: PageBreak[] | undefined;
  /** Enclosing headings of the passage, outermost first. */
  headingPath: string[];
  metadata: Record<string, unknown>;
}

/** A citation as the answer returns it: whether the answer used the source, and where the source supports it. */
export interface AnswerCitation extends Citation {
  cited: boolean;
  /** The passage of `text` that supports the answer, and its page; null when the source supports nothing. */
  support: { page: number | null; start: number; end: number } | null;
}

export interface StartedQuery {
  corpusId: string;
  model: string;
  citations: Citation[];
  /** The generation, or null when nothing relevant was found and `fallback` is the answer. */
  run: ChatRun | null;
  fallback: string | null;
  /** Tokens spent embedding the question, reranking and judging. */
  queryTokens: number;
  /** How the answer-or-refuse decision was made. */
  relevance: RelevanceDecision;
}

/** The relevance gate's decision, as the answer reports it. */
export interface RelevanceDecision {
  relevant: boolean;
  /** `similarity`: below the minimum similarity (or nothing found); `gate`: the fitted gate; `none`: keyword mode, no gate. */
  decidedBy: "similarity" | "gate" | "none";
  /** The gate's probability that the corpus answers the question, and its threshold (null when no gate ran). */
  score: number | null;
  threshold: number | null;
  /** The chat model's probability of "yes, the sources hold the answer" (null when it was not asked). */
  judge: number | null;
}

export interface Retrieval {
  /** The mode searched, and the fusion hybrid search used (null in the other modes): the request's, else the corpus's, else the server's. */
  search: SearchMode;
  fusion: HybridFusion | null;
  citations: (Citation & { headingPath: string[] })[];
  /** False when nothing in the corpus is close enough to the question. */
  relevant: boolean;
  /** Cosine similarity of the closest chunk (null in keyword mode). */
  bestSimilarity: number | null;
  /** What `relevant` was decided from (plus the reranker's best score, when one ran). */
  evidence: RelevanceEvidence & { rerankScore: number | null };
  /** The reranker that ordered the citations, or null. */
  reranked: string | null;
  /** Tokens spent embedding the question and reranking. */
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
  /** Ask the chat model whether the sources answer the question (`rag.relevanceJudge`). */
  relevanceJudge: boolean;
  /** Fitted gates beyond the built-in ones (`rag.relevanceGates`). */
  relevanceGates: Record<string, RelevanceGateModel>;
}

/** 409 `corpus_not_ready` unless the corpus can be searched (status `ready`). */
export function assertQueryable(corpus: CorpusView): void {
  if (corpus.status === "ready") return;
  const pending = corpus.counts.queued + corpus.counts.processing;
  const why = corpus.status === "indexing" ? `it is still indexing (${pending} documents pending)` : corpus.status === "empty" ? "it has no documents yet" : "none of its documents could be indexed";
  throw new ServiceError("conflict", `Corpus '${corpus.id}' cannot be queried yet: ${why}. Wait for status 'ready' (GET /v1/rag/corpora/${corpus.id} or its /events stream).`, { code: "corpus_not_ready" });
}

export class QueryService {
  constructor(private readonly deps: QueryServiceDeps) {}

  /**
   * Retrieval only: the best chunks for `input.question`, decrypted, as citations.
   * `relevant` is false when the corpus holds nothing close enough (vector similarity
   * of the best hit below `minSimilarity`; keyword mode trusts any match).
   */
  async retrieve(principal: Principal, corpusId: string, input: Omit<QueryInput, "model" | "temperature" | "maxTokens">, signal: AbortSignal): Promise<Retrieval> {
    const corpus = await this.deps.corpora.get(principal, corpusId);
    if (!(input.whileIndexing && corpus.counts.indexed > 0)) assertQueryable(corpus);
    const { search, fusion } = this.searchSettings(corpus.searchDefaults, input);
    let vector: Float32Array | null = null;
    let queryTokens = 0;
    if (search !== "keyword") {
      const embedded = await this.deps.engine.embed(this.deps.registry.resolve(corpus.embeddingModel, "embedding_model"), [embeddingInput(corpus.embeddingPrompts.query, input.question)], signal);
      vector = embedded.vectors[0] ?? null;
      queryTokens = embedded.promptTokens;
    }
    let documentIds = input.filter && Object.keys(input.filter).length > 0 ? await this.deps.documents.idsMatching(corpusId, input.filter) : undefined;
    if (input.documentIds) {
      const chosen = new Set(input.documentIds);
      documentIds = documentIds ? documentIds.filter((id) => chosen.has(id)) : [...chosen];
    }
    const index = await this.deps.indexes.get(corpusId);
    const reranker = this.rerankerFor(corpus.rerankModel, input.rerank);
    const depth = reranker ? Math.max(input.topK, reranker.candidates) : input.topK;
    const hits = await index.search({ mode: search, text: input.question, vector, topK: depth, documentIds, fusion });

    const cipher = await this.deps.keyring.cipher(corpusId);
    const sealed = new Map((await this.deps.chunks.byIds(hits.map((h) => h.chunkId))).map((c) => [c.id, c]));
    // The cited documents in one read (several hits often share one).
    const documents = new Map((await this.deps.documents.byIds([...new Set([...sealed.values()].map((c) => c.documentId))])).map((d) => [d.id, d]));
    let passages: Omit<Citation, "index">[] = [];
    for (const hit of hits) {
      const chunk = sealed.get(hit.chunkId);
      const document = chunk && documents.get(chunk.documentId);
      if (!chunk || !document) continue; // deleted between search and read
      const content = openContent(cipher, chunk.id, chunk.content);
      passages.push({ documentId: document.id, chunkId: chunk.id, filename: document.filename, text: content.text, score: hit.score, pageStart: chunk.pageStart, pageEnd: chunk.pageEnd, metadata: document.metadata, headingPath: content.headingPath, pageBreaks: content.pageBreaks });
    }
    let rerankScore: number | null = null;
    if (reranker && passages.length > 0) {
      // The cross-encoder reads question and passage together; its score replaces the fused one.
      const ranked = await this.deps.engine.rerank(reranker.entry, input.question, passages.map((p) => p.text), signal);
      queryTokens += ranked.promptTokens;
      passages = passages.map((p, i) => ({ ...p, score: ranked.scores[i] ?? 0 })).sort((a, b) => b.score - a.score);
      rerankScore = passages[0]!.score;
    }
    passages = passages.slice(0, input.topK);
    const kept = new Set(passages.map((p) => p.chunkId));
    const finalHits = hits.filter((h) => kept.has(h.chunkId));
    const bestSimilarity = finalHits.reduce((best, h) => Math.max(best, h.similarity ?? -1), -1);
    const evidence = { ...(await index.evidence(input.question, vector, finalHits)), rerankScore };
    const relevant = finalHits.length > 0 && (search === "keyword" || bestSimilarity >= this.deps.minSimilarity);
    const citations = passages.map((p, i) => ({ ...p, index: i + 1 }));
    return { search, fusion: search === "hybrid" ? fusion : null, citations, relevant, bestSimilarity: bestSimilarity < -0.5 ? null : bestSimilarity, evidence, reranked: reranker?.name ?? null, queryTokens };
  }

  /** The search mode and fusion a query uses: each field from the request, else the corpus's defaults, else the server's. */
  searchSettings(defaults: SearchDefaults | null, input: Pick<QueryInput, "search" | "fusion">): { search: SearchMode; fusion: HybridFusion } {
    return { search: input.search ?? defaults?.search ?? "hybrid", fusion: { ...this.deps.fusion, ...defaults?.fusion, ...input.fusion } };
  }

  /** The reranker `choice` asks for, given the corpus's; null for none. */
  private rerankerFor(corpusReranker: string | null, choice: RerankChoice | undefined): { name: string; entry: ModelEntry; candidates: number } | null {
    const use = choice?.use ?? (corpusReranker ? "corpus" : "none");
    if (use === "none") return null;
    const name = use === "model" ? choice!.model! : corpusReranker;
    if (!name) throw invalidRequest("This corpus has no reranker: name one in rerank.model, or set the corpus's rerank_model (PATCH /v1/rag/corpora/{id}).", "no_reranker", "rerank");
    const entry = this.deps.registry.resolve(name, use === "model" ? "rerank.model" : "rerank_model");
    if (entry.type !== "rerank") throw invalidRequest(`'${name}' is a ${entry.type} model; reranking needs a rerank model (GET /v1/models lists each model's type)`, "model_not_rerank", use === "model" ? "rerank.model" : "rerank_model");
    return { name, entry, candidates: choice?.candidates ?? DEFAULT_RERANK_CANDIDATES };
  }

  /** Retrieves and admits the answer generation; every error here precedes any output. */
  async start(principal: Principal, corpusId: string, input: QueryInput, signal: AbortSignal): Promise<StartedQuery> {
    const modelName = input.model ?? this.deps.registry.defaultName("chat", this.deps.defaultChatModel);
    const chatModel = this.deps.registry.resolve(modelName, "model");
    if (chatModel.type !== "chat") throw invalidRequest(`'${modelName}' is ${chatModel.type === "embedding" ? "an embedding" : `a ${chatModel.type}`} model and cannot answer questions`, "model_not_supported", "model");
    const found = await this.retrieve(principal, corpusId, input, signal);
    const citations = found.citations;
    const refuse = (relevance: RelevanceDecision, queryTokens: number): StartedQuery => ({ corpusId, model: modelName, citations, run: null, fallback: notInCorpusAnswer(input.question), queryTokens, relevance });
    if (!found.relevant || citations.length === 0) {
      return refuse({ relevant: false, decidedBy: "similarity", score: null, threshold: null, judge: null }, found.queryTokens);
    }
    const sources = found.citations.map((c) => ({ index: c.index, filename: c.filename, pageStart: c.pageStart, pageEnd: c.pageEnd, headingPath: c.headingPath, text: c.text }));
    let queryTokens = found.queryTokens;
    let relevance: RelevanceDecision = { relevant: true, decidedBy: "none", score: null, threshold: null, judge: null };
    // Keyword mode has no similarity scale the gates were fitted on: it answers whatever matched.
    const corpus = found.search === "keyword" ? null : await this.deps.corpora.get(principal, corpusId);
    const names = (entry: ModelEntry, asked: string) => [asked, entry.id, ...entry.aliases, ...(entry.gguf ? [modelFingerprint(entry.gguf)] : [])];
    const gate = corpus && gateFor({ ...BUILT_IN_GATES, ...this.deps.relevanceGates }, names(this.deps.registry.resolve(corpus.embeddingModel, "embedding_model"), corpus.embeddingModel), names(chatModel, modelName), this.deps.relevanceJudge);
    if (gate) {
      let judge: number | null = null;
      if (usesJudge(gate)) {
        const scored = await this.deps.engine.scoreChoices(chatModel, judgeMessages(input.question, sources), [...JUDGE_CHOICES], signal);
        judge = scored.probabilities[0]!;
        queryTokens += scored.promptTokens;
      }
      const score = answerability(found.evidence, judge, gate);
      relevance = { relevant: score >= gate.threshold, decidedBy: "gate", score, threshold: gate.threshold, judge };
      if (!relevance.relevant) return refuse(relevance, queryTokens);
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
    return { corpusId, model: modelName, citations, run, fallback: null, queryTokens, relevance };
  }

  /**
   * The citations of a finished answer, each marked with whether the answer uses it (a
   * `[n]` marker or a sentence it supports) and the passage that supports it, plus the
   * answer's sentences with their sources (`answer-support.ts`). `answer` is the text the
   * client receives: sentence offsets point into it.
   */
  /**
   * Runs a started answer to its end, unstreamed: the text (trimmed, so the attribution's
   * sentence offsets point into what is returned), the tokens it generated and why it ended.
   */
  async finish(started: StartedQuery): Promise<{ answer: string; completionTokens: number; finishReason: FinishReason }> {
    let answer = started.fallback ?? "";
    let completionTokens = 0;
    let finishReason: FinishReason = "stop";
    if (started.run) {
      for await (const event of started.run.events) {
        if (event.type === "text") answer += event.text;
        else {
          completionTokens = event.completionTokens;
          finishReason = event.finishReason;
          // A remote chat model's upstream counted the prompt itself (admission used an estimate).
          if (event.promptTokens !== undefined) started.run.promptTokens = event.promptTokens;
        }
      }
    }
    return { answer: answer.trim(), completionTokens, finishReason };
  }

  attribute(started: StartedQuery, answer: string): SupportedAnswer {
    return supportAnswer(started.citations, answer, started.fallback === null);
  }
}
