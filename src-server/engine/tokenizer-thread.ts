/**
 * The inside of a tokenizer worker thread (see prompt-tokenizer.ts): a vocabulary-only copy of
 * a chat model's GGUF, tokenising one job per message with node-llama-cpp's own tokenizer, so
 * its tokens are exactly the main thread's.
 *
 * llama.cpp's binding is one per process: the main thread loaded it first, and a second
 * `Llama` here must not take over its log callback (node-llama-cpp re-points the process's
 * one logger at whichever `Llama` set it last). `getLlamaForOptions` with `skipLlamaInit`
 * (what `getLlama` does in a dry run) leaves the logger and the backend as the main thread
 * set them; it is not exported from node-llama-cpp's entry point, so it is imported from its
 * module (node-llama-cpp 3.22.1, pinned).
 */
import type { MessagePort } from "node:worker_threads";
import type { Llama, LlamaGpuType, LlamaOptions, LlamaTextJSON } from "node-llama-cpp";

/** A job: plain text (`model.tokenize(text, special)`) or a rendered prompt (`LlamaText.tokenize`). */
export type TokenizeJob = { kind: "text"; text: string; special: boolean } | { kind: "llamaText"; value: LlamaTextJSON };

export type TokenizerRequest = { id: number; job: TokenizeJob };
export type TokenizerReply = { id: number; tokens: Uint32Array } | { id: number; error: string } | { ready: true } | { fatal: string };

/** Which llama.cpp binary the main thread loaded: the worker asks node-llama-cpp for the same one. */
export interface LlamaBindingChoice {
  gpu: LlamaGpuType;
  cmakeOptions: Record<string, string>;
  buildType: "localBuild" | "prebuilt";
}

export interface TokenizerThreadData {
  modelPath: string;
  binding: LlamaBindingChoice;
}

type GetLlamaForOptions = (options: LlamaOptions, internal: { skipLlamaInit?: boolean }) => Promise<Llama>;

/** Loads the vocabulary, then answers jobs on `port` until the thread is terminated. */
export async function serveTokenizer(port: MessagePort, data: TokenizerThreadData): Promise<void> {
  const { LlamaLogLevel, LlamaText } = await import("node-llama-cpp");
  const getLlamaModule = new URL("./bindings/getLlama.js", import.meta.resolve("node-llama-cpp")).href;
  const { getLlamaForOptions } = (await import(getLlamaModule)) as { getLlamaForOptions: GetLlamaForOptions };
  const { gpu, cmakeOptions, buildType } = data.binding;
  const llama = await getLlamaForOptions(
    // A local build must be the same one, never a prebuilt copy of llama.cpp beside it.
    { gpu, cmakeOptions, usePrebuiltBinaries: buildType === "prebuilt", build: "never", logLevel: LlamaLogLevel.error, logger: () => {}, progressLogs: false },
    { skipLlamaInit: true },
  );
  const model = await llama.loadModel({ modelPath: data.modelPath, vocabOnly: true, gpuLayers: 0 });
  port.on("message", ({ id, job }: TokenizerRequest) => {
    let reply: TokenizerReply;
    let transfer: ArrayBuffer[] = [];
    try {
      const tokens = Uint32Array.from(job.kind === "text" ? model.tokenize(job.text, job.special) : LlamaText.fromJSON(job.value).tokenize(model.tokenizer));
      reply = { id, tokens };
      transfer = [tokens.buffer];
    } catch (error) {
      reply = { id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply, transfer);
  });
  port.postMessage({ ready: true } satisfies TokenizerReply);
}
