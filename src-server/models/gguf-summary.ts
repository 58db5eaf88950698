/**
 * What a GGUF file is, read from its header with node-llama-cpp's GGUF reader
 * (no weights are loaded), once our own bounded walk (`validateGgufModel`) has found the
 * header sound: node-llama-cpp's reader trusts the counts it reads.
 */
import { stat } from "node:fs/promises";
import { Worker } from "node:worker_threads";
import { GgufFileType, readGgufFileInfo } from "node-llama-cpp";
import { validateGgufModel } from "./validate-gguf-file.js";

/** `rerank`: a cross-encoder with a classification head that scores query–document pairs. */
export type ModelType = "chat" | "embedding" | "rerank";

export interface GgufSummary {
  path: string;
  bytes: number;
  name: string | null;
  architecture: string;
  type: ModelType;
  /** Training context length in tokens. */
  contextLength: number | null;
  /** Hidden size: the width of embeddings the model produces. */
  embeddingLength: number | null;
  /** Parameter count from the tensor shapes. */
  parameters: number;
  quantization: string | null;
  /**
   * llama.cpp can rank query–document pairs with it: node-llama-cpp's own test
   * (`fileInsights.supportsRanking`), made on the header alone.
   */
  supportsRanking: boolean;
  /** The GGUF's own chat template (`tokenizer.chat_template`, Jinja), when it has one of sane size; shown by Ollama's `/api/show`. */
  chatTemplate?: string | null;
}

/** Encoder architectures llama.cpp runs only as embedding models. */
const ENCODER_ARCHITECTURES = new Set([
  "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2", "jina-bert-v3", "eurobert", "t5encoder",
]);

/** Architectures with both an encoder and a decoder: llama.cpp cannot rank with them. */
const ENCODER_DECODER_ARCHITECTURES = new Set(["t5"]);

/**
 * Mirrors node-llama-cpp's `GgufInsights.supportsRanking`: a classification head
 * (`cls.weight` or `cls.output.weight`, which llama.cpp's rank pooling reads) and a way to
 * join query and document (a separator or end token, or a `chat_template.rerank`).
 */
function supportsRanking(architecture: string, tensorNames: Iterable<string>, tokenizer: Record<string, unknown> | undefined): boolean {
  if (ENCODER_DECODER_ARCHITECTURES.has(architecture)) return false;
  let head = false;
  for (const name of tensorNames) if (name === "cls.weight" || name === "cls.output.weight") head = true;
  if (!head) return false;
  const ggml = (tokenizer?.ggml ?? {}) as Record<string, unknown>;
  const template = tokenizer?.["chat_template.rerank"];
  const validTemplate = typeof template === "string" && template.includes("{query}") && template.includes("{document}");
  return ggml.seperator_token_id != null || ggml.eos_token_id != null || validTemplate;
}

/**
 * Vocabulary arrays (hundreds of thousands of entries for modern tokenizers): skipped,
 * so scanning a models folder costs kilobytes, not tens of megabytes, of heap.
 */
const TOKENIZER_ARRAYS = ["tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.merges"];

/**
 * Reads the header of a GGUF file. Throws when the file is not a readable GGUF
 * (`InvalidGgufError` for a malformed or hostile one, refused before node-llama-cpp reads it).
 */
export async function readGgufSummary(file: string): Promise<GgufSummary> {
  await validateGgufModel(file);
  const [info, stats] = await Promise.all([readGgufFileInfo(file, { readTensorInfo: true, logWarnings: false, ignoreKeys: TOKENIZER_ARRAYS }), stat(file)]);
  const general = info.metadata.general as { architecture?: string; name?: string; file_type?: number } | undefined;
  const architecture = general?.architecture ?? "unknown";
  const arch = (info.architectureMetadata ?? {}) as { context_length?: number; embedding_length?: number; pooling_type?: number };
  let parameters = 0;
  const tensors = info.fullTensorInfo ?? info.tensorInfo ?? [];
  for (const tensor of tensors) {
    parameters += tensor.dimensions.reduce<number>((product, d) => product * Number(d), 1);
  }
  const isEncoder = ENCODER_ARCHITECTURES.has(architecture) || arch.pooling_type !== undefined;
  const ranks = supportsRanking(architecture, tensors.map((t) => t.name), info.metadata.tokenizer);
  const fileType = general?.file_type;
  const template = (info.metadata.tokenizer as { chat_template?: unknown } | undefined)?.chat_template;
  return {
    path: file,
    bytes: stats.size,
    name: general?.name ?? null,
    architecture,
    // A classification head makes a reranker (bge-reranker, Qwen3-Reranker), whatever else it is.
    type: ranks ? "rerank" : isEncoder ? "embedding" : "chat",
    contextLength: arch.context_length ?? null,
    embeddingLength: arch.embedding_length ?? null,
    parameters,
    quantization: fileType === undefined ? null : formatFileType(fileType),
    supportsRanking: ranks,
    chatTemplate: typeof template === "string" && template.length <= 65_536 ? template : null,
  };
}

/** `MOSTLY_Q4_K_M` → `Q4_K_M`, `ALL_F32` → `F32`. */
function formatFileType(fileType: number): string {
  const name = (GgufFileType as unknown as Record<number, string | undefined>)[fileType];
  return name ? name.replace(/^(MOSTLY|ALL)_/, "") : `type-${fileType}`;
}

/** 268_098_176 → "268M"; 7_615_616_512 → "7.6B". */
export function formatParameterCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(n >= 1e10 ? 0 : 1)}B`;
  if (n >= 1e6) return `${Math.round(n / 1e6)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}K`;
  return String(n);
}

/** The header reader worker's old-generation heap, in MiB (real headers need tens). */
const WORKER_HEAP_MB = 1024;

export type SummaryResult = { ok: true; summary: GgufSummary } | { ok: false; error: string };

/**
 * Reads many GGUF headers in a short-lived worker thread. node-llama-cpp's reader
 * allocates tens of megabytes per file (vocabularies, tensor tables) that the main
 * process's heap would keep as resident memory long after; the worker's heap is
 * returned to the system when it exits. `workerModule` is the URL of this module as the
 * worker must load it (a bundled or packaged build passes its own).
 */
export async function readGgufSummaries(files: string[], workerModule: string = import.meta.url): Promise<SummaryResult[]> {
  if (files.length === 0) return [];
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    // Running from TypeScript sources (tests, \`npm run dev\`): load them through tsx.
    const ready = workerData.module.endsWith(".ts") ? import("tsx/esm/api").then((tsx) => tsx.register()) : Promise.resolve();
    ready.then(() => import(workerData.module)).then(async ({ readGgufSummary }) => {
      const results = [];
      for (const file of workerData.files) {
        try { results.push({ ok: true, summary: await readGgufSummary(file) }); }
        catch (error) { results.push({ ok: false, error: String(error && error.message || error) }); }
      }
      parentPort.postMessage(results);
    }, (error) => parentPort.postMessage({ fatal: String(error && error.stack || error) }));`;
  // A heap ceiling: should a header still outgrow it, the worker fails, not the whole process.
  const worker = new Worker(source, { eval: true, workerData: { module: workerModule, files }, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  try {
    const message = await new Promise<SummaryResult[] | { fatal: string }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`GGUF reader worker exited with code ${code}`)));
    });
    if (!Array.isArray(message)) throw new Error(`GGUF reader worker failed: ${message.fatal}`);
    return message;
  } finally {
    await worker.terminate();
  }
}
