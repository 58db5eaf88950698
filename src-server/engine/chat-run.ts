/**
 * One chat generation on node-llama-cpp: admission (grammar, prompt length, a free
 * sequence) and the token stream, turned from callbacks into an async generator.
 */
import { LlamaChat, type ChatHistoryItem, type ChatModelFunctions, type ChatWrapper, type Llama, type LlamaContextSequence, type LlamaGrammar, type LlamaModel } from "node-llama-cpp";
import { invalidInput, type InputLocation, type ServiceError } from "../errors.js";
import { randomBase62 } from "../ids.js";
import { toLlamaFunctions, toLlamaHistory } from "./chat-history.js";
import { planForcedToolCall, type ForcedToolPlan } from "./forced-tool-call.js";
import { createGbnfGrammar, JSON_OBJECT_GBNF, schemaGbnf } from "./schema-grammar.js";
import type { LeasePool } from "./lease-pool.js";
import { acquireForPrompt } from "./prompt-cache.js";
import { llamaTextChars, refuseOverlong } from "./prompt-length.js";
import { tokenArray, type PromptTokenizer, type TokenIds } from "./prompt-tokenizer.js";
import { finishReasonOf, sequenceStream, type Generate } from "./sequence-stream.js";
import type { ChatGenerationInput, ChatRun, ResponseFormat, ToolCall } from "./types.js";

export interface ChatSlot {
  pool: LeasePool<LlamaContextSequence>;
  wrapper: ChatWrapper;
  /** Tokens per sequence. */
  contextSize: number;
  /** Reuse a sequence's evaluated prefix across requests (`chat.promptCache`); see prompt-cache.ts. */
  promptCache: boolean;
  /** The model's tokenizer, long prompts off the event loop. */
  tokenizer: PromptTokenizer;
}

export interface StartChatArgs {
  llama: Llama;
  model: LlamaModel;
  slot: ChatSlot;
  input: ChatGenerationInput;
  signal: AbortSignal;
  /** Called exactly once when the run no longer needs the model. */
  onDone: () => void;
}

function contextLengthExceeded(message: string, location: InputLocation): ServiceError {
  return invalidInput(message, "context_length_exceeded", location);
}

/** The grammar of a response format: any compact JSON object, or the schema's compact JSON. */
async function createGrammar(llama: Llama, format: ResponseFormat): Promise<LlamaGrammar | undefined> {
  if (format.type === "text") return undefined;
  return createGbnfGrammar(llama, format.type === "json_object" ? JSON_OBJECT_GBNF : schemaGbnf(format.schema, { in: "responseFormat", schema: true }));
}

/**
 * Prompt tokens exactly as the chat template renders them, counted with the model's tokenizer
 * (off the event loop when long); a rendering too long to fit by its characters alone is
 * refused before it is tokenised (prompt-length.ts).
 */
function promptTokensOf(model: LlamaModel, slot: ChatSlot, history: ChatHistoryItem[], functions: ChatModelFunctions | undefined): Promise<TokenIds> {
  const { contextText } = slot.wrapper.generateContextState({ chatHistory: history, availableFunctions: functions, documentFunctionParams: true });
  refuseOverlong(model, slot.contextSize, llamaTextChars(contextText), { text: "the messages as the chat template renders them", shorten: "the messages" }, { in: "messages" });
  return slot.tokenizer.tokenizeText(contextText);
}

/** The prompt tokens of a chat request, rendered as `startChatRun` renders it; see `InferenceEngine.countChatTokens`. */
export async function countChatRequestTokens(model: LlamaModel, slot: ChatSlot, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<number> {
  let history = toLlamaHistory(input.messages);
  const choice = input.toolChoice;
  let functions: ChatModelFunctions | undefined;
  if (choice === "required" || typeof choice === "object") history = planForcedToolCall(history, input.tools, choice).history;
  else functions = choice !== "none" && input.tools.length > 0 ? toLlamaFunctions(input.tools) : undefined;
  return (await promptTokensOf(model, slot, history, functions)).length;
}

/** Admits a generation and returns its run; see `InferenceEngine.startChat`. */
export async function startChatRun(args: StartChatArgs): Promise<ChatRun> {
  const { llama, model, slot, input, signal } = args;
  let done = false;
  const finish = (): void => {
    if (!done) {
      done = true;
      args.onDone();
    }
  };
  let sequence: LlamaContextSequence;
  let history: ChatHistoryItem[];
  let forced: ForcedToolPlan | undefined;
  let functions: ChatModelFunctions | undefined;
  let grammar: LlamaGrammar | undefined;
  let promptTokens: number;
  let maxTokens: number;
  try {
    history = toLlamaHistory(input.messages);
    const choice = input.toolChoice;
    const usesTools = choice !== "none" && input.tools.length > 0;
    if (usesTools && input.responseFormat.type !== "text") {
      throw invalidInput("a response format cannot be combined with tools on this server", "unsupported_parameter_combination", { in: "responseFormat" });
    }
    if (choice === "required" || typeof choice === "object") {
      forced = planForcedToolCall(history, input.tools, choice);
      history = forced.history;
      grammar = await createGbnfGrammar(llama, forced.gbnf);
    } else {
      functions = usesTools ? toLlamaFunctions(input.tools) : undefined;
      grammar = await createGrammar(llama, input.responseFormat);
    }
    const prompt = await promptTokensOf(model, slot, history, functions);
    promptTokens = prompt.length;
    if (promptTokens >= slot.contextSize) {
      throw contextLengthExceeded(`This model's context is ${slot.contextSize} tokens per request, but the messages take ${promptTokens} tokens. Shorten the messages.`, { in: "messages" });
    }
    if (input.maxTokens !== undefined && promptTokens + input.maxTokens > slot.contextSize) {
      throw contextLengthExceeded(
        `This model's context is ${slot.contextSize} tokens per request; you asked for ${promptTokens + input.maxTokens} tokens (${promptTokens} in the messages, ${input.maxTokens} in the completion). Lower the completion limit or shorten the messages.`,
        { in: "maxTokens" },
      );
    }
    maxTokens = input.maxTokens ?? slot.contextSize - promptTokens;
    sequence = await acquireForPrompt(slot.pool, tokenArray(prompt), input.promptCache ?? slot.promptCache, signal);
  } catch (error) {
    finish();
    throw error;
  }

  const { temperature, topP, topK, minP, seed, frequencyPenalty, presencePenalty, repeatPenalty } = input.sampling;
  const penalize = frequencyPenalty !== undefined || presencePenalty !== undefined || repeatPenalty !== undefined;
  const generate: Generate = async (sequence, stop, emit) => {
    let forcedText = "";
    const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: slot.wrapper, autoDisposeSequence: false });
    try {
      const common = {
        signal: stop,
        stopOnAbortSignal: true,
        maxTokens,
        temperature,
        topP,
        topK,
        minP,
        seed,
        repeatPenalty: penalize ? { frequencyPenalty, presencePenalty, penalty: repeatPenalty } : (false as const),
        customStopTriggers: input.stop.length > 0 ? input.stop : undefined,
        // A forced call's text is its arguments: collected, not streamed as content.
        onTextChunk: (text: string) => (forced ? (forcedText += text) : emit(text)),
      };
      const result = await (functions ? chat.generateResponse(history, { ...common, functions, documentFunctionParams: true }) : chat.generateResponse(history, { ...common, grammar }));
      if (result.metadata.stopReason === "abort") return null;
      const toolCalls: ToolCall[] = forced ? forced.toToolCalls(forcedText) : (result.functionCalls ?? []).map((call) => ({
        id: `call_${randomBase62(24)}`,
        name: call.functionName,
        arguments: JSON.stringify(call.params ?? {}),
      }));
      const stopped = finishReasonOf(result.metadata.stopReason);
      const stopSequence = result.metadata.stopReason === "customStopTrigger" ? result.metadata.customStopTrigger.filter((part): part is string => typeof part === "string").join("") : undefined;
      return { finishReason: stopped === "length" ? "length" : toolCalls.length > 0 ? "tool_calls" : stopped, toolCalls, stopSequence };
    } finally {
      chat.dispose();
    }
  };
  return sequenceStream({ pool: slot.pool, sequence, signal, promptTokens, contextSize: slot.contextSize, generate, onDone: finish });
}
