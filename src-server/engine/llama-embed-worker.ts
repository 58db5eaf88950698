/**
 * An embedding context with several sequences, evaluating a group of inputs in one llama.cpp
 * batch (one sequence each) and reading each sequence's pooled vector back.
 *
 * It drives node-llama-cpp's addon context directly (`initBatch`, `addToBatch`,
 * `decodeBatch`, `getSequenceEmbedding`): node-llama-cpp's public API evaluates one input per
 * context and its addon, unpatched, reads only sequence 0's vector. The addon method comes
 * from patches/node-llama-cpp+3.22.1.patch and is built at install (scripts/build-llama.mjs).
 * With a binding that lacks it (the prebuilt one), or a model that pools nothing, the worker
 * evaluates one input at a time, as node-llama-cpp's `getEmbeddingFor` does.
 */
import type { LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import { normalize } from "./embed-inputs.js";
import type { EmbedWorker } from "./embed-batcher.js";

/** The addon context methods used here (node-llama-cpp 3.22.1, patched). */
interface AddonContext {
  initBatch(size: number): void;
  addToBatch(sequenceId: number, firstTokenIndex: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  decodeBatch(): Promise<void>;
  getEmbedding(tokensLength: number, maxVectorSize?: number): Float64Array;
  getSequenceEmbedding?: (tokensLength: number, maxVectorSize: number, sequenceId: number) => Float64Array;
  disposeSequence(sequenceId: number): void;
}

/** What this module reads of an embedding context beyond its typed API. */
interface EmbeddingContextInternals {
  _llamaContext: { _ctx: AddonContext };
  _prepareInput(tokens: Token[]): void;
}

export interface LlamaEmbedWorkerOptions {
  /** The longest input, in tokens (special tokens included). */
  maxInputTokens: number;
  /** Inputs per evaluation at most. */
  sequences: number;
  /** Tokens a group may add up to. */
  batchTokens: number;
  threads: number;
}

/** Whether the loaded binding reads each sequence's embedding (the patched, locally built addon). */
export function bindingBatchesEmbeddings(context: LlamaEmbeddingContext): boolean {
  return typeof (context as unknown as EmbeddingContextInternals)._llamaContext._ctx.getSequenceEmbedding === "function";
}

/**
 * A model's pooling as its GGUF declares it (`<arch>.pooling_type`: 0 none, 1 mean, 2 CLS,
 * 3 last, 4 rank); undefined when the file does not say (llama.cpp then picks per architecture).
 */
function poolingType(model: LlamaModel): number | undefined {
  const metadata = model.fileInfo.metadata as unknown as Record<string, unknown> & { general: { architecture?: string } };
  const arch = metadata.general.architecture;
  const section = arch ? (metadata[arch] as { pooling_type?: unknown } | undefined) : undefined;
  return typeof section?.pooling_type === "number" ? section.pooling_type : undefined;
}

export class LlamaEmbedWorker implements EmbedWorker {
  readonly sequences: number;
  readonly batchTokens: number;
  readonly maxInputTokens: number;
  private readonly addon: AddonContext;
  /** Several inputs per evaluation, each read back from its own sequence. */
  readonly batched: boolean;

  private constructor(
    private readonly context: LlamaEmbeddingContext,
    options: LlamaEmbedWorkerOptions,
    batched: boolean,
  ) {
    this.addon = (context as unknown as EmbeddingContextInternals)._llamaContext._ctx;
    this.batched = batched;
    this.sequences = batched ? options.sequences : 1;
    this.batchTokens = options.batchTokens;
    this.maxInputTokens = options.maxInputTokens;
  }

  static async create(model: LlamaModel, options: LlamaEmbedWorkerOptions): Promise<LlamaEmbedWorker> {
    // Without pooling each token has its own vector and a sequence has none to read back.
    const batched = options.sequences > 1 && poolingType(model) !== 0;
    const sequences = batched ? options.sequences : 1;
    const context = await model.createEmbeddingContext({
      // Per sequence: node-llama-cpp gives llama.cpp contextSize × sequences cells (passing the
      // product here made a decoder embedder's KV cache `sequences` times too large).
      contextSize: options.maxInputTokens,
      // A non-causal encoder needs a whole evaluation in one ubatch. A multiple of the
      // sequences: llama.cpp rounds its worst-case graph up to one and, for an encoder with
      // more sequences than divide the batch (12 of 512), aborts the process on a shape mismatch.
      batchSize: Math.ceil(Math.max(options.maxInputTokens, options.batchTokens) / sequences) * sequences,
      threads: options.threads,
      sequences,
    });
    let worker: LlamaEmbedWorker;
    try {
      worker = new LlamaEmbedWorker(context, options, batched && bindingBatchesEmbeddings(context));
    } catch (error) {
      await context.dispose();
      throw error;
    }
    // A model may pool nothing without its GGUF saying so (a chat model used for embeddings
    // takes its last token's state): one short evaluation tells, then it runs one at a time.
    if (worker.batched && !(await worker.readsSequences())) {
      await worker.dispose();
      return LlamaEmbedWorker.create(model, { ...options, sequences: 1 });
    }
    if (!worker.batched && sequences > 1) {
      await worker.dispose();
      return LlamaEmbedWorker.create(model, { ...options, sequences: 1 });
    }
    return worker;
  }

  /** Whether a pooled vector can be read per sequence with this model. */
  private async readsSequences(): Promise<boolean> {
    const probe = this.tokenize("probe");
    if (probe.length === 0) return false;
    try {
      await this.evaluate([probe, probe]);
      return true;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("No pooled embedding")) return false;
      throw error;
    }
  }

  /** Token ids for `text` as the model embeds it (its beginning and end tokens added). */
  tokenize(text: string): Uint32Array {
    const tokens: Token[] = [...this.context.model.tokenize(text, false)];
    if (tokens.length === 0) return new Uint32Array(0);
    (this.context as unknown as EmbeddingContextInternals)._prepareInput(tokens);
    return Uint32Array.from(tokens);
  }

  async evaluate(inputs: Uint32Array[]): Promise<Float32Array[]> {
    if (inputs.length > this.sequences) throw new Error(`${inputs.length} inputs for ${this.sequences} sequences`);
    const addon = this.addon;
    addon.initBatch(inputs.reduce((sum, tokens) => sum + tokens.length, 0));
    try {
      // Sequence ids in increasing order: llama.cpp keeps such a batch in one ubatch.
      inputs.forEach((tokens, sequence) => addon.addToBatch(sequence, 0, tokens, Uint32Array.of(tokens.length - 1)));
      await addon.decodeBatch();
      return inputs.map((tokens, sequence) =>
        normalize(this.batched ? addon.getSequenceEmbedding!(tokens.length, 0, sequence) : addon.getEmbedding(tokens.length)),
      );
    } finally {
      // Models with a cache (decoder embedders) must start each input from position 0.
      for (let sequence = 0; sequence < inputs.length; sequence++) addon.disposeSequence(sequence);
    }
  }

  dispose(): Promise<void> {
    return this.context.dispose();
  }
}
