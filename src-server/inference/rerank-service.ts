/**
 * Reranking: scores documents against a query with a `rerank` model (a cross-encoder)
 * and returns them best first, as llama.cpp's server, Jina and Cohere do.
 */
import type { InferenceEngine } from "../engine/types.js";
import { invalidRequest, notFound } from "../errors.js";
import type { ModelEntry, ModelRegistry } from "../models/model-registry.js";

export interface RerankInput {
  /** A `rerank` model id or alias; default: the configured default reranker, else the first installed. */
  model?: string | undefined;
  query: string;
  documents: string[];
  /** Results to return, best first; more than the documents is clamped (as Cohere does). Default: all. */
  topN?: number | undefined;
  /** Echo each document's text in its result. */
  returnDocuments: boolean;
}

export interface RankedDocument {
  /** Position in `documents`. */
  index: number;
  /** Probability (0–1) that the document is relevant. */
  score: number;
  /** The text, when `returnDocuments`. */
  document?: string;
}

export interface RerankOutput {
  /** The model name as requested (an alias stays an alias). */
  model: string;
  entry: ModelEntry;
  /** Highest score first; equal scores keep request order. */
  results: RankedDocument[];
  promptTokens: number;
}

export interface RerankServiceOptions {
  /** `models.defaultRerank`; none is shipped. */
  defaultModel: string | undefined;
  /** Most documents one request may rank (`rerank.maxDocuments`). */
  maxDocuments: number;
}

export class RerankService {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly engine: InferenceEngine,
    private readonly options: RerankServiceOptions,
  ) {}

  /**
   * The reranker a request names (404 `model_not_found` for an unknown one, 400
   * `model_not_rerank` for a chat or embedding model), or the default one.
   */
  resolve(modelName: string | undefined): { model: string; entry: ModelEntry } {
    const model = modelName ?? this.registry.defaultName("rerank", this.options.defaultModel ?? "");
    if (model === "") {
      throw notFound("No reranking model is available: register a GGUF reranker (a cross-encoder such as bge-reranker) and name it in 'model'. GET /v1/models lists each model's type.", "model_not_found", "model");
    }
    const entry = this.registry.resolve(model);
    if (entry.type !== "rerank") {
      throw invalidRequest(`'${model}' is a ${entry.type} model; reranking needs a rerank model (a cross-encoder with a classification head). GET /v1/models lists each model's type.`, "model_not_rerank", "model");
    }
    return { model, entry };
  }

  /**
   * Tokens the request will take with the model's own tokenizer, for rate limits before
   * ranking: query and document per pair, plus the four special tokens a BERT-style
   * cross-encoder adds (settled to the exact count afterwards).
   */
  async countTokens(input: RerankInput): Promise<number> {
    const { entry } = this.resolve(input.model);
    this.validate(input);
    const tokenizer = await this.engine.acquireTokenizer(entry);
    try {
      const query = tokenizer.countTokens(input.query);
      return input.documents.reduce((n, text) => {
        const own = tokenizer.countTokens(text);
        return own === 0 ? n : n + query + own + 4;
      }, 0);
    } finally {
      tokenizer.release();
    }
  }

  async rerank(input: RerankInput, signal: AbortSignal): Promise<RerankOutput> {
    const { model, entry } = this.resolve(input.model);
    this.validate(input);
    const { scores, promptTokens } = await this.engine.rerank(entry, input.query, input.documents, signal);
    const topN = Math.min(input.topN ?? input.documents.length, input.documents.length);
    const results = scores
      .map((score, index): RankedDocument => ({ index, score, ...(input.returnDocuments ? { document: input.documents[index]! } : {}) }))
      // Array.prototype.sort is stable: equal scores keep request order.
      .sort((a, b) => b.score - a.score)
      .slice(0, topN);
    return { model, entry, results, promptTokens };
  }

  private validate(input: RerankInput): void {
    if (input.query.length === 0) throw invalidRequest("query must not be empty", "invalid_parameter", "query");
    if (input.documents.length === 0) throw invalidRequest("documents must not be an empty array", "invalid_parameter", "documents");
    if (input.documents.length > this.options.maxDocuments) {
      throw invalidRequest(`documents has ${input.documents.length} items; at most ${this.options.maxDocuments} are allowed per request`, "too_many_documents", "documents");
    }
    if (input.topN !== undefined && (!Number.isInteger(input.topN) || input.topN < 1)) {
      throw invalidRequest("top_n must be a positive integer", "invalid_parameter", "top_n");
    }
  }
}
