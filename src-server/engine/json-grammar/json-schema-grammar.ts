/**
 * JSON Schema → a GBNF grammar whose every sentence is compact JSON (no whitespace
 * between tokens) valid against the schema. Covers what llama.cpp's own converter
 * enforces and more: types and type lists, `const`, `enum`, `anyOf`/`oneOf`/`allOf`,
 * local `$ref` (recursion included), objects (declared order, optional properties,
 * `additionalProperties`), arrays (`items`, `prefixItems`, `minItems`/`maxItems`),
 * strings (`minLength`/`maxLength`, `pattern`, formats date, time, date-time, uuid,
 * ipv4), integers and numbers within `minimum`/`maximum`/`exclusiveMinimum`/
 * `exclusiveMaximum`. A keyword it cannot enforce is refused with the path to it, never
 * ignored. Objects without `additionalProperties` get only their declared properties
 * (always valid, and what a client expects).
 */
import { GrammarTooLarge, literal, RuleSet } from "./gbnf.js";
import { integerGrammar, naturalRange, numberGrammar, NumericRangeError, type Bound } from "./numeric-range.js";
import { PatternError, patternToGbnf } from "./pattern-grammar.js";

export class SchemaError extends Error {
  constructor(
    /** Dotted path of the keyword at fault inside the schema ("" = the schema itself). */
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

/** Keywords that only describe. */
const ANNOTATIONS = new Set(["$schema", "$id", "$anchor", "$comment", "title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly", "strict", "discriminator", "$defs", "definitions", "contentEncoding", "contentMediaType"]);
/** Keywords this compiler enforces. */
const ENFORCED = new Set([
  "type", "const", "enum", "anyOf", "oneOf", "allOf", "$ref", "nullable",
  "properties", "required", "additionalProperties", "unevaluatedProperties", "minProperties", "maxProperties",
  "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
  "minLength", "maxLength", "pattern", "format",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
]);
const WHY: Record<string, string> = {
  multipleOf: "a grammar cannot enforce divisibility",
  not: "a grammar cannot enforce the negation of a schema",
  if: "conditional schemas (if/then/else) cannot be enforced",
  then: "conditional schemas (if/then/else) cannot be enforced",
  else: "conditional schemas (if/then/else) cannot be enforced",
  patternProperties: "property names by pattern cannot be enforced",
  propertyNames: "constraints on property names cannot be enforced",
  dependentRequired: "dependencies between properties cannot be enforced",
  dependentSchemas: "dependencies between properties cannot be enforced",
  dependencies: "dependencies between properties cannot be enforced",
  contains: "'contains' cannot be enforced",
  minContains: "'contains' cannot be enforced",
  maxContains: "'contains' cannot be enforced",
  unevaluatedItems: "'unevaluatedItems' cannot be enforced",
};
const TYPES = ["string", "number", "integer", "boolean", "null", "object", "array"];
const MAX_DEPTH = 64;
const MAX_BYTES = 256 * 1024;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const count = (v: unknown, what: string, path: string): number => {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new SchemaError(path, `${what} must be a non-negative integer`);
  return v;
};

const PRIMITIVES: Record<string, string> = {
  "string-char": String.raw`[^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})`,
  string: String.raw`"\"" string-char* "\""`,
  integer: String.raw`"-"? ("0" | [1-9] [0-9]{0,15})`,
  number: String.raw`"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?`,
  boolean: `"true" | "false"`,
  null: `"null"`,
  value: "object | array | string | number | boolean | null",
  object: String.raw`"{" (string ":" value ("," string ":" value)*)? "}"`,
  array: String.raw`"[" (value ("," value)*)? "]"`,
};
const PRIMITIVE_USES: Record<string, string[]> = { string: ["string-char"], value: ["object", "array", "string", "number", "boolean", "null"], object: ["string", "value"], array: ["value"] };

const HOUR = `([01] [0-9] | "2" [0-3])`;
const MINSEC = "[0-5] [0-9]";
const DATE = `[0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])`;
const TIME = `${HOUR} ":" ${MINSEC} ":" ${MINSEC} ("." [0-9]{1,6})? ("Z" | [+-] ${HOUR} ":" ${MINSEC})`;
const FORMATS: Record<string, () => string> = {
  date: () => DATE,
  time: () => TIME,
  "date-time": () => `${DATE} "T" ${TIME}`,
  uuid: () => `[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}`,
  ipv4: () => {
    const octet = naturalRange(0, 255);
    return `${octet} "." ${octet} "." ${octet} "." ${octet}`;
  },
};

/** Compiles `schema` to GBNF (root rule `root`); throws `SchemaError` naming what cannot be enforced. */
export function jsonSchemaToGbnf(schema: unknown): string {
  const rules = new RuleSet(MAX_BYTES);
  const refs = new Map<string, string>();

  const primitive = (name: string): string => {
    if (!rules.has(name)) {
      rules.reserve(name);
      for (const dep of PRIMITIVE_USES[name] ?? []) primitive(dep);
      rules.define(name, PRIMITIVES[name]!);
    }
    return name;
  };

  const resolve = (pointer: string, path: string): unknown => {
    if (!pointer.startsWith("#")) throw new SchemaError(path, `only references inside the schema ('#/…') are supported, not ${JSON.stringify(pointer)}`);
    let node: unknown = schema;
    for (const raw of pointer.slice(1).split("/").slice(1)) {
      const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (!isObject(node) && !Array.isArray(node)) throw new SchemaError(path, `the reference ${pointer} points at nothing`);
      node = (node as Json)[part];
      if (node === undefined) throw new SchemaError(path, `the reference ${pointer} points at nothing`);
    }
    return node;
  };

  /** Merges allOf parts (objects: properties and required united; other keywords must agree). */
  const merge = (parts: unknown[], path: string): Json => {
    const out: Json = {};
    for (const [i, raw] of parts.entries()) {
      const part = isObject(raw) && typeof raw.$ref === "string" ? mergeRef(raw, `${path}.${i}`) : raw;
      if (!isObject(part)) throw new SchemaError(`${path}.${i}`, "allOf must hold schemas");
      for (const [key, value] of Object.entries(part)) {
        if (key === "properties" && isObject(value)) out.properties = { ...(out.properties as Json | undefined), ...value };
        else if (key === "required" && Array.isArray(value)) out.required = [...new Set([...((out.required as string[] | undefined) ?? []), ...(value as string[])])];
        else if (key === "allOf" && Array.isArray(value)) Object.assign(out, merge([out, ...(value as unknown[])], `${path}.${i}.allOf`));
        else if (ANNOTATIONS.has(key)) continue;
        else if (key in out && JSON.stringify(out[key]) !== JSON.stringify(value)) throw new SchemaError(`${path}.${i}.${key}`, `allOf parts disagree on '${key}'; only parts that combine properties can be merged`);
        else out[key] = value;
      }
    }
    return out;
  };
  const mergeRef = (node: Json, path: string): unknown => {
    const target = resolve(node.$ref as string, `${path}.$ref`);
    const { $ref: _ref, ...rest } = node;
    return Object.keys(rest).some((k) => !ANNOTATIONS.has(k)) ? merge([target, rest], path) : target;
  };

  function visit(node: unknown, path: string, hint: string, depth: number): string {
    if (depth > MAX_DEPTH) throw new SchemaError(path, `nested deeper than ${MAX_DEPTH} levels`);
    if (node === true) return primitive("value");
    if (node === false) throw new SchemaError(path, "the schema 'false' allows no value at all");
    if (!isObject(node)) throw new SchemaError(path, "a schema must be a JSON object (or true)");
    const at = (key: string) => (path ? `${path}.${key}` : key);
    for (const key of Object.keys(node)) {
      if (ANNOTATIONS.has(key) || ENFORCED.has(key)) continue;
      throw new SchemaError(at(key), WHY[key] ? `the keyword '${key}' cannot be enforced: ${WHY[key]}` : `the keyword '${key}' is not supported`);
    }

    if (typeof node.$ref === "string") {
      const { $ref, ...rest } = node;
      if (Object.keys(rest).some((k) => !ANNOTATIONS.has(k))) return visit(merge([{ $ref }, rest], at("$ref")), path, hint, depth + 1);
      const known = refs.get($ref);
      if (known) return known;
      const name = rules.reserve(`ref-${$ref.split("/").at(-1) ?? "root"}`);
      refs.set($ref, name);
      rules.define(name, visit(resolve($ref, at("$ref")), at("$ref"), name, depth + 1));
      return name;
    }
    if (node.$ref !== undefined) throw new SchemaError(at("$ref"), "must be a string");
    if (node.allOf !== undefined) {
      if (!Array.isArray(node.allOf) || node.allOf.length === 0) throw new SchemaError(at("allOf"), "must be a non-empty array of schemas");
      const { allOf, ...rest } = node;
      return visit(merge([rest, ...(allOf as unknown[])], at("allOf")), path, hint, depth + 1);
    }
    for (const key of ["anyOf", "oneOf"] as const) {
      if (node[key] === undefined) continue;
      const options = node[key];
      if (!Array.isArray(options) || options.length === 0) throw new SchemaError(at(key), "must be a non-empty array of schemas");
      const { [key]: _omit, ...rest } = node;
      const shared = Object.keys(rest).some((k) => !ANNOTATIONS.has(k));
      const alternatives = options.map((option, i) => visit(shared ? merge([rest, option], at(`${key}.${i}`)) : option, at(`${key}.${i}`), `${hint}-${i}`, depth + 1));
      return rules.add(hint, alternatives.join(" | "));
    }
    if (node.nullable === true) {
      const { nullable: _n, ...rest } = node;
      return rules.add(hint, `${visit(rest, path, `${hint}-value`, depth + 1)} | ${primitive("null")}`);
    }
    if (node.const !== undefined) return rules.add(hint, literal(JSON.stringify(node.const)));
    if (node.enum !== undefined) {
      if (!Array.isArray(node.enum) || node.enum.length === 0) throw new SchemaError(at("enum"), "must be a non-empty array");
      return rules.add(hint, node.enum.map((v) => literal(JSON.stringify(v))).join(" | "));
    }
    if (Array.isArray(node.type)) {
      if (node.type.length === 0) throw new SchemaError(at("type"), "must name at least one type");
      return rules.add(hint, (node.type as unknown[]).map((t) => visit({ ...node, type: t }, path, `${hint}-${String(t)}`, depth + 1)).join(" | "));
    }
    const type = node.type ?? inferType(node);
    if (type === undefined) return primitive("value");
    if (typeof type !== "string" || !TYPES.includes(type)) throw new SchemaError(at("type"), `unknown type ${JSON.stringify(type)}`);
    try {
      switch (type) {
        case "boolean":
        case "null":
          return primitive(type);
        case "string":
          return stringRule(node, path, hint);
        case "integer":
        case "number":
          return numberRule(node, type, path, hint);
        case "array":
          return arrayRule(node, path, hint, depth);
        default:
          return objectRule(node, path, hint, depth);
      }
    } catch (error) {
      if (error instanceof NumericRangeError) throw new SchemaError(path, error.message);
      if (error instanceof PatternError) throw new SchemaError(at("pattern"), `the pattern cannot be enforced: ${error.message}`);
      throw error;
    }
  }

  function inferType(node: Json): string | undefined {
    if (node.properties !== undefined || node.additionalProperties !== undefined || node.required !== undefined) return "object";
    if (node.items !== undefined || node.prefixItems !== undefined) return "array";
    if (node.pattern !== undefined || node.minLength !== undefined || node.maxLength !== undefined || node.format !== undefined) return "string";
    if (["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].some((k) => node[k] !== undefined)) return "number";
    return undefined;
  }

  function stringRule(node: Json, path: string, hint: string): string {
    const at = (key: string) => (path ? `${path}.${key}` : key);
    const min = node.minLength === undefined ? 0 : count(node.minLength, "minLength", at("minLength"));
    const max = node.maxLength === undefined ? undefined : count(node.maxLength, "maxLength", at("maxLength"));
    if (max !== undefined && max < min) throw new SchemaError(at("maxLength"), "maxLength is below minLength");
    const char = primitive("string-char");
    const quote = String.raw`"\""`;
    if (node.format !== undefined) {
      const name = typeof node.format === "string" ? node.format : JSON.stringify(node.format);
      const format = FORMATS[name];
      if (!format) throw new SchemaError(at("format"), `the format ${JSON.stringify(node.format)} cannot be enforced (enforced: ${Object.keys(FORMATS).join(", ")})`);
      if (node.pattern !== undefined || node.minLength !== undefined || node.maxLength !== undefined) throw new SchemaError(at("format"), "a format cannot be combined with pattern, minLength or maxLength");
      return rules.add(`${hint}-${name}`, `${quote} ${format()} ${quote}`);
    }
    if (node.pattern !== undefined) {
      if (typeof node.pattern !== "string") throw new SchemaError(at("pattern"), "must be a string");
      if (node.minLength !== undefined || node.maxLength !== undefined) throw new SchemaError(at("pattern"), "a pattern cannot be enforced together with minLength or maxLength; put the length into the pattern");
      return rules.add(hint, `${quote} ${patternToGbnf(node.pattern, char)} ${quote}`);
    }
    if (min === 0 && max === undefined) return primitive("string");
    return rules.add(hint, `${quote} ${char}{${min},${max ?? ""}} ${quote}`);
  }

  function numberRule(node: Json, type: "integer" | "number", path: string, hint: string): string {
    const bound = (plain: string, exclusive: string): Bound | undefined => {
      const value = node[plain];
      const strict = node[exclusive];
      if (typeof strict === "number") return { value: strict, inclusive: false };
      if (value === undefined) return undefined;
      if (typeof value !== "number") throw new SchemaError(path ? `${path}.${plain}` : plain, "must be a number");
      // Draft 4: exclusiveMinimum/Maximum as booleans beside minimum/maximum.
      return { value, inclusive: strict !== true };
    };
    const lo = bound("minimum", "exclusiveMinimum");
    const hi = bound("maximum", "exclusiveMaximum");
    if (!lo && !hi) return primitive(type);
    return rules.add(hint, type === "integer" ? integerGrammar(lo, hi) : numberGrammar(lo, hi));
  }

  function arrayRule(node: Json, path: string, hint: string, depth: number): string {
    const at = (key: string) => (path ? `${path}.${key}` : key);
    if (node.uniqueItems === true) throw new SchemaError(at("uniqueItems"), "the keyword 'uniqueItems' cannot be enforced: a grammar cannot compare items");
    const min = node.minItems === undefined ? 0 : count(node.minItems, "minItems", at("minItems"));
    const max = node.maxItems === undefined ? Infinity : count(node.maxItems, "maxItems", at("maxItems"));
    if (max < min) throw new SchemaError(at("maxItems"), "maxItems is below minItems");
    const prefix = node.prefixItems === undefined ? [] : node.prefixItems;
    if (!Array.isArray(prefix)) throw new SchemaError(at("prefixItems"), "must be an array of schemas");
    const rest = node.items === false ? null : visit(node.items ?? true, at("items"), `${hint}-item`, depth + 1);
    if (prefix.length === 0) {
      if (rest === null || max === 0) return rules.add(hint, `"[" "]"`);
      const more = Number.isFinite(max) ? `{${Math.max(0, min - 1)},${max - 1}}` : min > 1 ? `{${min - 1},}` : "*";
      const items = `${rest} ("," ${rest})${more}`;
      return rules.add(hint, min === 0 ? `"[" (${items})? "]"` : `"[" ${items} "]"`);
    }
    // A tuple: position i (0-based) is mandatory below minItems; each later one optional, in order.
    const elements = prefix.map((s, i) => visit(s, at(`prefixItems.${i}`), `${hint}-${i}`, depth + 1));
    if (min > elements.length && rest === null) throw new SchemaError(at("minItems"), "minItems exceeds the tuple's length and 'items' is false");
    let tail: string;
    const remaining = Number.isFinite(max) ? max - elements.length : Infinity;
    if (rest === null || remaining <= 0) tail = '""';
    else {
      const needed = Math.max(0, min - elements.length);
      tail = rules.add(`${hint}-rest`, `("," ${rest}){${needed},${Number.isFinite(remaining) ? remaining : ""}}`);
    }
    const upTo = Math.min(elements.length, Number.isFinite(max) ? max : elements.length);
    // chain(i): elements from i on, each preceded by a comma (position 0 has none).
    let chain = tail;
    for (let i = upTo - 1; i >= 0; i--) {
      const step = `${i === 0 ? "" : '"," '}${elements[i]} ${chain}`;
      chain = rules.add(`${hint}-from-${i}`, i < min ? step : `(${step})?`);
    }
    return rules.add(hint, `"[" ${chain} "]"`);
  }

  function objectRule(node: Json, path: string, hint: string, depth: number): string {
    const at = (key: string) => (path ? `${path}.${key}` : key);
    const properties = node.properties === undefined ? {} : node.properties;
    if (!isObject(properties)) throw new SchemaError(at("properties"), "must be an object of schemas");
    const required = node.required === undefined ? [] : node.required;
    if (!Array.isArray(required) || required.some((r) => typeof r !== "string")) throw new SchemaError(at("required"), "must be an array of property names");
    const entries: [string, unknown][] = Object.entries(properties);
    for (const name of required as string[]) if (!(name in properties)) entries.push([name, true]);
    const additional = node.additionalProperties ?? node.unevaluatedProperties;
    // An object with no declared properties is open only when it declares none at all
    // (`{"type":"object"}`) or allows extras explicitly; `"properties": {}` is the empty object,
    // as for a tool that takes no arguments (llama.cpp's conversion reads it the same way).
    if (entries.length === 0 && (additional === true || (additional === undefined && node.properties === undefined))) {
      if (node.minProperties !== undefined && count(node.minProperties, "minProperties", at("minProperties")) > 0) throw new SchemaError(at("minProperties"), "the keyword 'minProperties' cannot be enforced on an open object");
      return primitive("object");
    }
    const extra = additional === undefined || additional === false ? null : visit(additional, at("additionalProperties"), `${hint}-extra`, depth + 1);
    const mustHave = new Set(required as string[]);
    const declared = entries.length + (extra ? Infinity : 0);
    if (node.minProperties !== undefined && count(node.minProperties, "minProperties", at("minProperties")) > mustHave.size) throw new SchemaError(at("minProperties"), "the keyword 'minProperties' can only be enforced through 'required'");
    if (node.maxProperties !== undefined && count(node.maxProperties, "maxProperties", at("maxProperties")) < declared) throw new SchemaError(at("maxProperties"), "the keyword 'maxProperties' can only be enforced when it allows every declared property");
    const pairs = entries.map(([name, schema]) => rules.add(`${hint}-${name}-kv`, `${literal(JSON.stringify(name))} ":" ${visit(schema, at(`properties.${name}`), `${hint}-${name}`, depth + 1)}`));
    const extraPair = extra ? rules.add(`${hint}-extra-kv`, `${primitive("string")} ":" ${extra}`) : null;
    // rest(i, first): the pairs from i on; `first` = nothing written yet (no leading comma).
    const memo = new Map<string, string>();
    const rest = (i: number, first: boolean): string => {
      const key = `${i}:${first}`;
      const known = memo.get(key);
      if (known) return known;
      let body: string;
      if (i === entries.length) {
        body = extraPair ? (first ? `(${extraPair} ("," ${extraPair})*)?` : `("," ${extraPair})*`) : '""';
      } else {
        const comma = first ? "" : '"," ';
        const present = `${comma}${pairs[i]} ${rest(i + 1, false)}`;
        body = mustHave.has(entries[i]![0]) ? present : `${present} | ${rest(i + 1, first)}`;
      }
      const name = rules.add(`${hint}-from-${i}${first ? "-first" : ""}`, body);
      memo.set(key, name);
      return name;
    };
    return rules.add(hint, `"{" ${rest(0, true)} "}"`);
  }

  try {
    rules.define("root", visit(schema, "", "root-value", 0));
  } catch (error) {
    if (error instanceof GrammarTooLarge) throw new SchemaError("", error.message);
    throw error;
  }
  return rules.toString();
}
