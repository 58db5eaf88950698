/**
 * Embeddings: any model llama.cpp can embed with (embedding models, and chat models as
 * Ollama allows), one unit vector per input.
 */
import type { EmbeddingResult, InferenceEngine } from "../engine/types.js";
import { invalidRequest } from "../errors.js";
import type { ModelEntry, ModelRegistry } from "../models/model-registry.js";

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
    const model = modelName ?? this.registry.defaultName("embedding", this.options.defaultModel);
    const tokenizer = await this.engine.acquireTokenizer(this.registry.resolve(model));
    try {
      return inputs.reduce((n, text) => n + tokenizer.countTokens(text) + 2, 0);
    } finally {
      tokenizer.release();
    }
  }

  async embed(modelName: string | undefined, inputs: string[], signal: AbortSignal, dimensions?: number): Promise<EmbeddingsOutput> {
    const model = modelName ?? this.registry.defaultName("embedding", this.options.defaultModel);
    const entry = this.registry.resolve(model);
    if (inputs.length > this.options.maxInputs) {
      throw invalidRequest(`input has ${inputs.length} items; at most ${this.options.maxInputs} are allowed per request`, "too_many_inputs", "input");
    }
    const native = entry.gguf.embeddingLength;
    if (dimensions !== undefined && dimensions !== native) {
      throw invalidRequest(`'${model}' produces ${native ?? "unknown"}-dimension embeddings and cannot shorten them; omit 'dimensions' or set it to ${native}`, "unsupported_dimensions", "dimensions");
    }
    const result = await this.engine.embed(entry, inputs, signal);
    return { ...result, model, entry };
  }
}
