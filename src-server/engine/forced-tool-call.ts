/**
 * `tool_choice: "required"` or a named function: the call is forced with a grammar
 * instead of hoping the model emits its native call syntax. The model sees the tools
 * described in a system message and can only produce JSON that is a valid call.
 */
import type { ChatHistoryItem } from "node-llama-cpp";
import { invalidInput } from "../errors.js";
import { randomBase62 } from "../ids.js";
import { schemaGbnf } from "./schema-grammar.js";
import type { JsonSchema, ToolCall, ToolDefinition } from "./types.js";

export interface ForcedToolPlan {
  history: ChatHistoryItem[];
  /** The grammar of the call's JSON (compact, every constraint of the parameters enforced). */
  gbnf: string;
  /** Turns the generated JSON into tool calls; raw text is kept when it is cut short. */
  toToolCalls(text: string): ToolCall[];
}

const NO_PARAMS = { type: "object", properties: {} };

/**
 * What forcing a call means whatever runs the model: the JSON Schema the reply must follow
 * (a single tool's parameters, or `{name, arguments}` over the candidates), the instruction
 * the model reads, and how the JSON becomes tool calls. A remote model's upstream enforces the
 * schema as a `json_schema` response format; the local engine compiles it to a grammar.
 */
export interface ForcedToolSpec {
  schema: JsonSchema;
  instruction: string;
  /** The one tool that can be called, when only one can. */
  single: ToolDefinition | null;
  toToolCalls: (text: string) => ToolCall[];
}

export function forcedToolSpec(tools: readonly ToolDefinition[], choice: "required" | { name: string }): ForcedToolSpec {
  if (tools.length === 0) throw invalidInput("forcing a tool call needs at least one tool", "invalid_parameter", { in: "toolChoice" });
  const candidates = typeof choice === "object" ? tools.filter((t) => t.name === choice.name) : [...tools];
  if (candidates.length === 0) throw invalidInput(`the forced tool '${(choice as { name: string }).name}' is not among the tools offered`, "invalid_parameter", { in: "toolChoice" });
  const single = candidates.length === 1 ? candidates[0]! : null;
  const schema: JsonSchema = single
    ? (single.parameters ?? NO_PARAMS)
    : {
        anyOf: candidates.map((tool) => ({
          type: "object",
          properties: { name: { const: tool.name }, arguments: tool.parameters ?? NO_PARAMS },
          required: ["name", "arguments"],
          additionalProperties: false,
        })),
      };
  const described = candidates
    .map((tool) => `- ${tool.name}${tool.description ? `: ${tool.description}` : ""}\n  parameters (JSON Schema): ${JSON.stringify(tool.parameters ?? NO_PARAMS)}`)
    .join("\n");
  const instruction = single
    ? `You must call the function '${single.name}' now. Reply with only the JSON object of its arguments.\n${described}`
    : `You must call one of these functions now. Reply with only a JSON object {"name": <function name>, "arguments": <its arguments>}.\n${described}`;
  return {
    schema,
    instruction,
    single,
    toToolCalls: (text) => {
      const id = `call_${randomBase62(24)}`;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Cut short by max_tokens: hand back what was generated, as OpenAI does.
        return [{ id, name: single?.name ?? "", arguments: text }];
      }
      if (single) return [{ id, name: single.name, arguments: JSON.stringify(parsed) }];
      const call = parsed as { name: string; arguments: unknown };
      return [{ id, name: call.name, arguments: JSON.stringify(call.arguments ?? {}) }];
    },
  };
}

export function planForcedToolCall(history: ChatHistoryItem[], tools: readonly ToolDefinition[], choice: "required" | { name: string }): ForcedToolPlan {
  const spec = forcedToolSpec(tools, choice);
  const candidates = spec.single ? [spec.single] : typeof choice === "object" ? tools.filter((t) => t.name === choice.name) : [...tools];
  // Each tool's parameters are checked on their own, so a refusal names the tool.
  for (const tool of candidates) schemaGbnf(tool.parameters ?? NO_PARAMS, { in: "tools", tool: tools.indexOf(tool) });
  const gbnf = schemaGbnf(spec.schema, { in: "tools", tool: spec.single ? tools.indexOf(spec.single) : 0 });
  const withInstruction: ChatHistoryItem[] = [...history];
  const first = withInstruction[0];
  if (first?.type === "system" && typeof first.text === "string") withInstruction[0] = { type: "system", text: `${first.text}\n\n${spec.instruction}` };
  else withInstruction.unshift({ type: "system", text: spec.instruction });
  return { history: withInstruction, gbnf, toToolCalls: spec.toToolCalls };
}
