/**
 * One text completion (no chat template) on node-llama-cpp: the prompt as the model's
 * tokenizer reads it (special tokens in the text are parsed, as llama.cpp's server does),
 * or fill-in-the-middle between a prefix and a suffix for models that have FIM tokens.
 * Shares the chat sequences: a completion and a chat wait in the same queue.
 */
import { LlamaCompletion, type LlamaModel, type Token } from "node-llama-cpp";
import { invalidInput } from "../errors.js";
import type { ChatSlot } from "./chat-run.js";
import { acquireForPrompt } from "./prompt-cache.js";
import { refuseOverlong } from "./prompt-length.js";
import { tokenArray, type TokenIds } from "./prompt-tokenizer.js";
import { finishReasonOf, sequenceStream, type Generate } from "./sequence-stream.js";
import type { CompletionRun, TextCompletionInput } from "./types.js";

export interface StartCompletionArgs {
  model: LlamaModel;
  /** The model's id, for error messages. */
  modelId: string;
  slot: ChatSlot;
  input: TextCompletionInput;
  signal: AbortSignal;
  /** Called exactly once when the run no longer needs the model. */
  onDone: () => void;
}

/** Whether the model has the tokens fill-in-the-middle needs (prefix and suffix; middle where it has one). */
export function supportsInfill(model: LlamaModel): boolean {
  return model.tokens.infill.prefix != null && model.tokens.infill.suffix != null;
}

/** The tokens node-llama-cpp prepends to every completion input (BOS, for most models). */
function prependedTokens(model: LlamaModel): number {
  return model.tokens.shouldPrependBosToken && model.tokens.bos != null ? 1 : 0;
}

/** Tokens in the model's vocabulary, from its GGUF header. */
function vocabularySize(model: LlamaModel): number {
  const tokens: unknown = model.fileInfo.metadata.tokenizer?.ggml?.tokens;
  return Array.isArray(tokens) ? tokens.length : Number.MAX_SAFE_INTEGER;
}

/** Prompt text as tokens, special tokens parsed; a leading BOS is dropped (node-llama-cpp adds its own). */
async function tokenizePrompt(model: LlamaModel, slot: ChatSlot, prompt: string | number[]): Promise<TokenIds> {
  const tokens = typeof prompt === "string" ? await slot.tokenizer.tokenize(prompt, true) : (prompt as Token[]);
  return tokens.length > 0 && tokens[0] === model.tokens.bos && prependedTokens(model) === 1 ? tokens.slice(1) : tokens;
}

/** Admits a text completion and returns its run; see `InferenceEngine.startCompletion`. */
export async function startCompletionRun(args: StartCompletionArgs): Promise<CompletionRun> {
  const { model, slot, input, signal } = args;
  let done = false;
  const finish = (): void => {
    if (!done) {
      done = true;
      args.onDone();
    }
  };
  let sequence;
  let prefix: Token[];
  let suffix: Token[] | undefined;
  let promptTokens: number;
  let maxTokens: number;
  try {
    if (typeof input.prompt !== "string") {
      const vocabulary = vocabularySize(model);
      const bad = input.prompt.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= vocabulary);
      if (bad >= 0) throw invalidInput(`token ${input.prompt[bad]} at position ${bad} is not in this model's vocabulary (0–${vocabulary - 1})`, "invalid_token", { in: "prompt" });
    }
    // Text too long to fit by its characters alone is refused before it is tokenised (prompt-length.ts).
    if (typeof input.prompt === "string") refuseOverlong(model, slot.contextSize, input.prompt.length, { text: "the prompt", shorten: "the prompt" }, { in: "prompt" });
    if (input.suffix !== undefined) refuseOverlong(model, slot.contextSize, input.suffix.length, { text: "the suffix", shorten: "the suffix" }, { in: "suffix" });
    if (input.suffix !== undefined && !supportsInfill(model)) {
      throw invalidInput(`'${args.modelId}' has no fill-in-the-middle tokens, so it cannot complete between a prompt and a suffix; send no suffix, or use a code model with FIM tokens`, "fim_not_supported", { in: "suffix" });
    }
    const prefixIds = await tokenizePrompt(model, slot, input.prompt);
    const suffixIds = input.suffix !== undefined ? await slot.tokenizer.tokenize(input.suffix, false) : undefined;
    promptTokens = suffixIds
      ? prependedTokens(model) + 2 + (model.tokens.infill.middle != null ? 1 : 0) + prefixIds.length + suffixIds.length
      : prependedTokens(model) + prefixIds.length;
    if (promptTokens >= slot.contextSize) {
      throw invalidInput(`This model's context is ${slot.contextSize} tokens per request, but the prompt takes ${promptTokens} tokens. Shorten the prompt.`, "context_length_exceeded", { in: "prompt" });
    }
    if (input.maxTokens !== undefined && promptTokens + input.maxTokens > slot.contextSize) {
      throw invalidInput(
        `This model's context is ${slot.contextSize} tokens per request; you asked for ${promptTokens + input.maxTokens} tokens (${promptTokens} in the prompt, ${input.maxTokens} in the completion). Lower max_tokens or shorten the prompt.`,
        "context_length_exceeded",
        { in: "maxTokens" },
      );
    }
    maxTokens = input.maxTokens ?? slot.contextSize - promptTokens;
    prefix = tokenArray(prefixIds);
    suffix = suffixIds && tokenArray(suffixIds);
    // The tokens a plain completion evaluates (with FIM the order differs and little is shared).
    const evaluated = prependedTokens(model) === 1 ? [model.tokens.bos!, ...prefix] : prefix;
    sequence = await acquireForPrompt(slot.pool, evaluated, input.promptCache ?? slot.promptCache, signal);
  } catch (error) {
    finish();
    throw error;
  }

  const { temperature, topP, topK, minP, seed, frequencyPenalty, presencePenalty, repeatPenalty } = input.sampling;
  const penalize = frequencyPenalty !== undefined || presencePenalty !== undefined || repeatPenalty !== undefined;
  const generate: Generate = async (held, stop, emit) => {
    const completion = new LlamaCompletion({ contextSequence: held, autoDisposeSequence: false });
    try {
      const options = {
        signal: stop,
        stopOnAbortSignal: true,
        maxTokens,
        // The prompt was measured against the context above: never shift it silently.
        disableContextShift: true,
        temperature,
        topP,
        topK,
        minP,
        seed,
        repeatPenalty: penalize ? { frequencyPenalty, presencePenalty, penalty: repeatPenalty } : (false as const),
        customStopTriggers: input.stop.length > 0 ? input.stop : undefined,
        onTextChunk: emit,
      };
      const result = suffix ? await completion.generateInfillCompletionWithMeta(prefix, suffix, options) : await completion.generateCompletionWithMeta(prefix, options);
      if (result.metadata.stopReason === "abort") return null;
      const stopSequence = result.metadata.stopReason === "customStopTrigger" ? result.metadata.customStopTrigger.filter((part): part is string => typeof part === "string").join("") : undefined;
      return { finishReason: finishReasonOf(result.metadata.stopReason), toolCalls: [], stopSequence };
    } finally {
      completion.dispose();
    }
  };
  const promptText = typeof input.prompt === "string" ? input.prompt : model.detokenize(input.prompt as Token[], true);
  return { ...sequenceStream({ pool: slot.pool, sequence, signal, promptTokens, contextSize: slot.contextSize, generate, onDone: finish }), promptText };
}
