/**
 * One chat generation on node-llama-cpp: admission (grammar, prompt length, a free
 * sequence) and the token stream, turned from callbacks into an async generator.
 */
import { LlamaChat, TokenMeter, type ChatHistoryItem, type ChatModelFunctions, type ChatWrapper, type Llama, type LlamaContextSequence, type LlamaGrammar, type LlamaModel } from "node-llama-cpp";
import { invalidInput, type InputLocation, type ServiceError } from "../errors.js";
import { randomBase62 } from "../ids.js";
import { AsyncQueue } from "./async-queue.js";
import { toLlamaFunctions, toLlamaHistory } from "./chat-history.js";
import { planForcedToolCall, type ForcedToolPlan } from "./forced-tool-call.js";
import { toGrammarSchema } from "./grammar-schema.js";
import type { LeasePool } from "./lease-pool.js";
import type { ChatEvent, ChatGenerationInput, ChatRun, FinishReason, ResponseFormat, ToolCall } from "./types.js";

export interface ChatSlot {
  pool: LeasePool<LlamaContextSequence>;
  wrapper: ChatWrapper;
  /** Tokens per sequence. */
  contextSize: number;
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

async function createGrammar(llama: Llama, format: ResponseFormat): Promise<LlamaGrammar | undefined> {
  if (format.type === "text") return undefined;
  if (format.type === "json_object") return llama.getGrammarFor("json");
  const location: InputLocation = { in: "responseFormat", schema: true };
  const schema = toGrammarSchema(format.schema, location);
  try {
    // The schema was validated above; node-llama-cpp types it by its literal shape.
    return await llama.createGrammarForJsonSchema(schema as never);
  } catch (error) {
    throw invalidInput(`the JSON schema is not supported: ${(error as Error).message}`, "unsupported_json_schema", location);
  }
}

/** Prompt tokens exactly as the chat template renders them, counted with the model's tokenizer. */
function countPromptTokens(wrapper: ChatWrapper, model: LlamaModel, history: ChatHistoryItem[], functions: ChatModelFunctions | undefined): number {
  const { contextText } = wrapper.generateContextState({ chatHistory: history, availableFunctions: functions, documentFunctionParams: true });
  return contextText.tokenize(model.tokenizer).length;
}

function finishReasonOf(stopReason: string): FinishReason {
  if (stopReason === "maxTokens") return "length";
  if (stopReason === "functionCalls") return "tool_calls";
  return "stop";
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
      // The schema was validated by toGrammarSchema; node-llama-cpp types it by its literal shape.
      grammar = await llama.createGrammarForJsonSchema(forced.schema as never);
    } else {
      functions = usesTools ? toLlamaFunctions(input.tools) : undefined;
      grammar = await createGrammar(llama, input.responseFormat);
    }
    promptTokens = countPromptTokens(slot.wrapper, model, history, functions);
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
    sequence = await slot.pool.acquire(signal);
  } catch (error) {
    finish();
    throw error;
  }

  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    slot.pool.release(sequence);
    finish();
  };
  // If the consumer never starts the stream (client gone before the first read), the
  // request's abort still returns the sequence.
  const onAbortBeforeStart = (): void => release();
  signal.addEventListener("abort", onAbortBeforeStart, { once: true });

  async function* events(): AsyncGenerator<ChatEvent, void, undefined> {
    signal.removeEventListener("abort", onAbortBeforeStart);
    if (released) return;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const queue = new AsyncQueue<ChatEvent>();
    let forcedText = "";
    const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: slot.wrapper, autoDisposeSequence: false });
    const meterBefore = sequence.tokenMeter.getState();
    const { temperature, topP, topK, minP, seed, frequencyPenalty, presencePenalty, repeatPenalty } = input.sampling;
    const penalize = frequencyPenalty !== undefined || presencePenalty !== undefined || repeatPenalty !== undefined;
    const common = {
      signal: stop.signal,
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
      onTextChunk: (text: string) => (forced ? (forcedText += text) : queue.push({ type: "text", text })),
    };
    const generation = (functions ? chat.generateResponse(history, { ...common, functions, documentFunctionParams: true }) : chat.generateResponse(history, { ...common, grammar }))
      .then((result) => {
        if (result.metadata.stopReason !== "abort") {
          const toolCalls: ToolCall[] = forced ? forced.toToolCalls(forcedText) : (result.functionCalls ?? []).map((call) => ({
            id: `call_${randomBase62(24)}`,
            name: call.functionName,
            arguments: JSON.stringify(call.params ?? {}),
          }));
          const completionTokens = TokenMeter.diff(sequence.tokenMeter, meterBefore).usedOutputTokens;
          const stopped = finishReasonOf(result.metadata.stopReason);
          const finishReason = stopped === "length" ? "length" : toolCalls.length > 0 ? "tool_calls" : stopped;
          queue.push({ type: "end", finishReason, toolCalls, completionTokens });
        }
        queue.end();
      })
      .catch((error: unknown) => queue.fail(error));
    try {
      for await (const event of queue) yield event;
    } finally {
      signal.removeEventListener("abort", onAbort);
      stop.abort();
      await generation;
      chat.dispose();
      release();
    }
  }
  return { promptTokens, contextSize: slot.contextSize, events: events() };
}
