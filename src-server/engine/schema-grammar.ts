/**
 * Structured output on the engine: a JSON Schema (a response format's, a forced tool
 * call's) compiled to a grammar llama.cpp samples under. A schema it cannot enforce is a
 * 400 `unsupported_json_schema` naming the keyword's place in the request.
 */
import type { Llama, LlamaGrammar } from "node-llama-cpp";
import { invalidInput, type InputLocation } from "../errors.js";
import { jsonSchemaToGbnf, SchemaError } from "./json-grammar/json-schema-grammar.js";

/** The GBNF for `schema`; `location` is the input holding it (errors name the keyword's path in it). */
export function schemaGbnf(schema: unknown, location: InputLocation): string {
  try {
    return jsonSchemaToGbnf(schema);
  } catch (error) {
    if (!(error instanceof SchemaError)) throw error;
    throw invalidInput(`JSON schema${error.path ? ` at '${error.path}'` : ""}: ${error.message}`, "unsupported_json_schema", location);
  }
}

/** Any JSON object, compact (JSON mode). */
export const JSON_OBJECT_GBNF = jsonSchemaToGbnf({ type: "object" });

/** A grammar node-llama-cpp samples with; generation ends when the JSON is complete. */
export function createGbnfGrammar(llama: Llama, gbnf: string): Promise<LlamaGrammar> {
  return llama.createGrammar({ grammar: gbnf });
}
