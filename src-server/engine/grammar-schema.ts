/**
 * JSON Schema → the subset node-llama-cpp's function calling turns into a grammar (the
 * `auto` tool choice, where the model decides whether to call). The schema is first
 * checked by the full compiler (`schemaGbnf`), so every tool choice accepts and refuses
 * the same schemas. Constraints node-llama-cpp cannot express (patterns, numeric bounds,
 * `allOf`, some formats) are then described to the model in the property's description
 * instead: in `auto` mode, as with OpenAI's non-strict tools, they guide rather than bind;
 * a forced call (`required` or a named tool) and `response_format` enforce all of them.
 */
import type { GbnfJsonSchema } from "node-llama-cpp";
import { invalidInput, type InputLocation } from "../errors.js";
import { schemaGbnf } from "./schema-grammar.js";

const TYPES = new Set(["string", "number", "integer", "boolean", "null", "object", "array"]);
const ANNOTATIONS = new Set(["$schema", "$id", "title", "examples", "default", "strict", "$comment", "deprecated", "readOnly", "writeOnly"]);
const KEYWORDS = new Set([
  "type", "description", "const", "enum", "oneOf", "$defs", "$ref",
  "properties", "required", "additionalProperties", "minProperties", "maxProperties",
  "items", "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "format",
]);
/** Enforced by the full compiler, described (not enforced) to node-llama-cpp's function calling. */
const DESCRIBED = new Set(["pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "nullable", "unevaluatedProperties", "uniqueItems"]);
const STRING_FORMATS = new Set(["date-time", "time", "date"]);
const MAX_DEPTH = 32;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Validates and normalises `schema`. `location` is the input that holds it (the
 * response format's schema, a tool's parameters); errors name the keyword's path in it.
 */
export function toGrammarSchema(schema: unknown, location: InputLocation): GbnfJsonSchema {
  schemaGbnf(schema, location);
  const fail = (where: string, message: string) => invalidInput(`JSON schema${where ? ` at '${where.slice(1)}'` : ""}: ${message}`, "unsupported_json_schema", location);

  function walk(node: unknown, where: string, depth: number): Json {
    if (depth > MAX_DEPTH) throw fail(where, `nested deeper than ${MAX_DEPTH} levels`);
    if (!isObject(node)) throw fail(where, "a schema must be a JSON object");
    const out: Json = {};
    const described: string[] = [];
    for (const [key, value] of Object.entries(node)) {
      if (ANNOTATIONS.has(key)) continue;
      const at = `${where}.${key}`;
      switch (key) {
        case "anyOf":
        case "oneOf":
          if (!Array.isArray(value) || value.length === 0) throw fail(at, "must be a non-empty array of schemas");
          out.oneOf = value.map((s, i) => walk(s, `${at}.${i}`, depth + 1));
          break;
        case "definitions":
        case "$defs":
          if (!isObject(value)) throw fail(at, "must be an object of schemas");
          out.$defs = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, walk(s, `${at}.${name}`, depth + 1)]));
          break;
        case "$ref":
          if (typeof value !== "string" || !/^#\/(\$defs|definitions)\/[^/]+$/.test(value)) throw fail(at, "only local references of the form #/$defs/NAME are supported");
          out.$ref = value.replace("#/definitions/", "#/$defs/");
          break;
        case "type": {
          const types = Array.isArray(value) ? value : [value];
          for (const t of types) if (typeof t !== "string" || !TYPES.has(t)) throw fail(at, `unknown type ${JSON.stringify(t)}`);
          if (Array.isArray(value) && value.some((t) => t === "object" || t === "array")) {
            // The grammar takes type lists of scalars only; express the union explicitly.
            const { type: _omit, ...rest } = node;
            return walk({ oneOf: value.map((t: string) => ({ ...rest, type: t })) }, where, depth + 1);
          }
          out.type = value;
          break;
        }
        case "properties":
          if (!isObject(value)) throw fail(at, "must be an object of schemas");
          out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, walk(s, `${at}.${name}`, depth + 1)]));
          break;
        case "items":
          out.items = walk(value, at, depth + 1);
          break;
        case "prefixItems":
          if (!Array.isArray(value)) throw fail(at, "must be an array of schemas");
          out.prefixItems = value.map((s, i) => walk(s, `${at}.${i}`, depth + 1));
          break;
        case "additionalProperties":
          out.additionalProperties = typeof value === "boolean" ? value : walk(value, at, depth + 1);
          break;
        case "format":
          if (typeof value === "string" && STRING_FORMATS.has(value)) out.format = value;
          else described.push(`format: ${String(value)}`);
          break;
        case "allOf":
          if (!Array.isArray(value)) throw fail(at, "must be an array of schemas");
          // Described parts: the full compiler merged them; here the first part shapes the value.
          if (value.length === 1) Object.assign(out, walk(value[0], `${at}.0`, depth + 1));
          else described.push(`all of: ${JSON.stringify(value)}`);
          break;
        default:
          if (KEYWORDS.has(key)) out[key] = value;
          else if (DESCRIBED.has(key)) described.push(`${key}: ${JSON.stringify(value)}`);
          else throw fail(at, `the keyword '${key}' cannot be enforced by the grammar engine; remove it`);
      }
    }
    if (described.length > 0) out.description = [typeof out.description === "string" ? out.description : "", `(${described.join("; ")})`].filter(Boolean).join(" ");
    return out;
  }

  return walk(schema, "", 0) as GbnfJsonSchema;
}
