/**
 * Embeddings: any model llama.cpp can embed with (embedding models, and chat models as
 * Ollama allows), one unit vector per input. Rerankers are refused: their pooling yields
 * a relevance score, not a vector.
 */
import type { EmbeddingResult, InferenceEngine } from "../engine/types.js";
import { invalidRequest } from "../errors.js";
import { modelFacts, type ModelEntry, type ModelRegistry } from "../models/model-registry.js";

export interface EmbeddingsOutput extends EmbeddingResult {
  model: string;
  entry: ModelEntry;
}

export class EmbeddingsService {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly engine: InferenceEngine,
    private readonly options: { defaultModel: string; maxInputs: number },
  ) {}

  /** Tokens the inputs take with the model's own tokenizer (two more each: the special tokens an embedding adds). */
  async countTokens(modelName: string | undefined, inputs: string[]): Promise<number> {
    const { entry } = this.resolve(modelName);
    const tokenizer = await this.engine.acquireTokenizer(entry);
    try {
      return inputs.reduce((n, text) => n + tokenizer.countTokens(text) + 2, 0);
    } finally {
      tokenizer.release();
    }
  }

  async embed(modelName: string | undefined, inputs: string[], signal: AbortSignal, dimensions?: number): Promise<EmbeddingsOutput> {
    const { model, entry } = this.resolve(modelName);
    if (inputs.length > this.options.maxInputs) {
      throw invalidRequest(`input has ${inputs.length} items; at most ${this.options.maxInputs} are allowed per request`, "too_many_inputs", "input");
    }
    // A remote model's width may be learnt only from its first answer.
    const refuse = (native: number | null) =>
      invalidRequest(`'${model}' produces ${native ?? "unknown"}-dimension embeddings and cannot shorten them; omit 'dimensions' or set it to ${native}`, "unsupported_dimensions", "dimensions");
    const known = modelFacts(entry).embeddingLength;
    if (dimensions !== undefined && dimensions !== known && (known !== null || entry.gguf)) throw refuse(known);
    const result = await this.engine.embed(entry, inputs, signal);
    const width = result.vectors[0]?.length ?? null;
    if (dimensions !== undefined && width !== null && width !== dimensions) throw refuse(width);
    return { ...result, model, entry };
  }

  /** The model named (or the default), refusing rerankers before anything is loaded. */
  private resolve(modelName: string | undefined): { model: string; entry: ModelEntry } {
    const model = modelName ?? this.registry.defaultName("embedding", this.options.defaultModel);
    const entry = this.registry.resolve(model);
    if (entry.type === "rerank") {
      throw invalidRequest(`'${model}' is a rerank model: it scores query–document pairs (POST /v1/rerank) and produces no embeddings`, "model_not_supported", "model");
    }
    return { model, entry };
  }
}
