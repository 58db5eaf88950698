/**
 * Translates the service's chat messages and tools into node-llama-cpp's chat history
 * and function definitions.
 */
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, ChatModelResponse } from "node-llama-cpp";
import { invalidInput, type InputLocation } from "../errors.js";
import { toGrammarSchema } from "./grammar-schema.js";
import type { ChatMessage, ToolDefinition } from "./types.js";

function parseArguments(text: string, location: InputLocation): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidInput("the arguments of a tool call are not valid JSON", "invalid_tool_arguments", location);
  }
}

/**
 * Builds the history node-llama-cpp renders with the model's chat template. Tool
 * results are attached to the assistant call they answer; consecutive messages of one
 * role are merged (many templates require strict alternation); the history ends with
 * an open model turn for the completion (or continues a final assistant message).
 */
export function toLlamaHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const pendingCalls = new Map<string, ChatModelFunctionCall>();
  const last = () => history.at(-1);

  messages.forEach((message, i) => {
    switch (message.role) {
      case "system": {
        const prev = last();
        if (prev?.type === "system" && typeof prev.text === "string") prev.text += `\n\n${message.content}`;
        else history.push({ type: "system", text: message.content });
        break;
      }
      case "user": {
        const prev = last();
        if (prev?.type === "user") prev.text += `\n\n${message.content}`;
        else history.push({ type: "user", text: message.content });
        break;
      }
      case "assistant": {
        const prev = last();
        const item: ChatModelResponse = prev?.type === "model" ? prev : { type: "model", response: [] };
        if (item !== prev) history.push(item);
        if (message.content) item.response.push(message.content);
        message.toolCalls.forEach((call, j) => {
          const functionCall: ChatModelFunctionCall = {
            type: "functionCall",
            name: call.name,
            params: parseArguments(call.arguments, { in: "messages", message: i, toolCall: j, field: "arguments" }),
            result: undefined,
            startsNewChunk: j === 0 ? true : undefined,
          };
          pendingCalls.set(call.id, functionCall);
          item.response.push(functionCall);
        });
        break;
      }
      case "tool": {
        const call = pendingCalls.get(message.toolCallId);
        if (!call) {
          throw invalidInput(
            `message ${i}: a tool result must answer a call of a preceding assistant message ('${message.toolCallId}' is unknown)`,
            "invalid_tool_message",
            { in: "messages", message: i, field: "toolCallId" },
          );
        }
        pendingCalls.delete(message.toolCallId);
        call.result = message.content;
        break;
      }
    }
  });
  if (pendingCalls.size > 0) {
    const ids = [...pendingCalls.keys()].join(", ");
    throw invalidInput(`an assistant message with tool calls must be followed by tool results answering each call (missing: ${ids})`, "invalid_tool_message", { in: "messages" });
  }
  if (last()?.type !== "model") history.push({ type: "model", response: [] });
  return history;
}

/** Tools as node-llama-cpp function definitions (their JSON Schemas become grammars). */
export function toLlamaFunctions(tools: readonly ToolDefinition[]): ChatModelFunctions {
  const functions: Record<string, ChatModelFunctions[string]> = {};
  tools.forEach((tool, i) => {
    functions[tool.name] = {
      description: tool.description,
      params: tool.parameters ? toGrammarSchema(tool.parameters, { in: "tools", tool: i }) : undefined,
    };
  });
  return functions;
}
