/**
 * Chat completions: resolves the model, admits the generation on the engine, and
 * either hands back the event stream or collects it into one result.
 */
import type { ChatGenerationInput, ChatRun, CompletionRun, FinishReason, TextCompletionInput, ToolCall } from "../engine/types.js";
import type { InferenceEngine } from "../engine/types.js";
import { invalidRequest } from "../errors.js";
import { modelFacts, type ModelEntry, type ModelRegistry } from "../models/model-registry.js";

export interface StartedChat {
  /** The model name as requested (an alias stays an alias). */
  model: string;
  entry: ModelEntry;
  run: ChatRun;
}

export interface StartedCompletion extends StartedChat {
  run: CompletionRun;
}

export interface ChatResult {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: { promptTokens: number; completionTokens: number; cachedTokens: number };
}

export class ChatService {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly engine: InferenceEngine,
    private readonly defaultModel: string,
  ) {}

  /** Resolves the model and admits the generation (errors here precede any output). */
  async start(modelName: string | undefined, input: ChatGenerationInput, signal: AbortSignal): Promise<StartedChat> {
    const { model, entry } = this.chatModel(modelName, "chat completions");
    const run = await this.engine.startChat(entry, input, signal);
    return { model, entry, run };
  }

  /** Resolves the model and admits a text completion (no chat template) on it. */
  async startCompletion(modelName: string | undefined, input: TextCompletionInput, signal: AbortSignal): Promise<StartedCompletion> {
    const { model, entry } = this.chatModel(modelName, "text completions");
    const run = await this.engine.startCompletion(entry, input, signal);
    return { model, entry, run };
  }

  /** Tokens the request's prompt would take on the model, nothing generated. */
  async countPromptTokens(modelName: string | undefined, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<{ model: string; tokens: number }> {
    const { model, entry } = this.chatModel(modelName, "chat completions");
    return { model, tokens: await this.engine.countChatTokens(entry, input) };
  }

  /** The chat model a request names (or the default); 400 for a model of another type. */
  private chatModel(modelName: string | undefined, what: string): { model: string; entry: ModelEntry } {
    const model = modelName ?? this.registry.defaultName("chat", this.defaultModel);
    const entry = this.registry.resolve(model);
    if (entry.type !== "chat") {
      throw invalidRequest(`'${model}' is ${entry.type === "embedding" ? "an embedding" : `a ${entry.type}`} model (${modelFacts(entry).architecture}); it cannot generate ${what}`, "model_not_supported", "model");
    }
    return { model, entry };
  }

  /** Runs a started chat to its end and collects the text, tool calls and usage. */
  async collect(started: StartedChat): Promise<ChatResult> {
    let content = "";
    for await (const event of started.run.events) {
      if (event.type === "text") {
        content += event.text;
        continue;
      }
      return {
        content,
        toolCalls: event.toolCalls,
        finishReason: event.finishReason,
        usage: { promptTokens: event.promptTokens ?? started.run.promptTokens, completionTokens: event.completionTokens, cachedTokens: event.cachedTokens },
      };
    }
    // The stream ended without an end event: the request was aborted.
    throw invalidRequest("the request was cancelled before the completion finished", "request_aborted");
  }
}
