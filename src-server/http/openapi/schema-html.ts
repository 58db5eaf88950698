/**
 * JSON Schema (as the OpenAPI document holds it, converted from zod) as readable HTML for
 * the `/docs` page: an object becomes a list of its fields with type, whether required,
 * bounds and description; arrays show their items' fields; `anyOf`/`oneOf` list their
 * variants. Every string from the schema is escaped: names, descriptions, enum values and
 * patterns are data, never markup.
 */

/** Escapes text for HTML content and for quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Escaped text whose `backticked` spans become `<code>` (summaries are written that way). */
export function inlineText(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);

/** Deeper than this, a schema is named but not expanded (no document here nests so far; a bound all the same). */
const MAX_DEPTH = 12;

/** A JSON value as it would be written in a request (strings quoted), escaped. */
const literal = (value: unknown): string => `<code>${escapeHtml(JSON.stringify(value) ?? String(value))}</code>`;

function variantsOf(schema: Schema): Schema[] | undefined {
  const list = schema.anyOf ?? schema.oneOf;
  return Array.isArray(list) ? list.filter(isSchema) : undefined;
}

/** A short name for what a value must be: `string`, `array of object`, `"message"`, `one of 3 forms`. */
export function typeLabel(schema: Schema): string {
  if (typeof schema.$ref === "string") return escapeHtml(schema.$ref.split("/").at(-1) ?? schema.$ref);
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(literal).join(", ")}`;
  const variants = variantsOf(schema);
  if (variants) {
    const simple = variants.every((v) => !hasChildren(v));
    return simple ? variants.map(typeLabel).join(" or ") : `one of ${variants.length} forms`;
  }
  const type = Array.isArray(schema.type) ? schema.type.map(String).join(" or ") : typeof schema.type === "string" ? schema.type : "";
  if (type === "array" && isSchema(schema.items)) return `array of ${typeLabel(schema.items)}`;
  if (type === "object" && isSchema(schema.additionalProperties) && !isSchema(schema.properties)) return `map of ${typeLabel(schema.additionalProperties)}`;
  return escapeHtml(type || "any");
}

/** The bounds and formats a value is checked against, in words. */
function constraints(schema: Schema): string[] {
  const out: string[] = [];
  // zod writes JavaScript's safe-integer range as the bounds of a plain integer: no bound worth saying.
  const bound = (value: unknown) => (typeof value === "number" && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined);
  const pair = (min: string, max: string, unit: string) => {
    const lo = bound(schema[min]);
    const hi = bound(schema[max]);
    if (typeof lo === "number" && typeof hi === "number") out.push(`${lo}–${hi}${unit}`);
    else if (typeof lo === "number") out.push(`at least ${lo}${unit}`);
    else if (typeof hi === "number") out.push(`at most ${hi}${unit}`);
  };
  pair("minLength", "maxLength", " characters");
  pair("minItems", "maxItems", " items");
  pair("minimum", "maximum", "");
  if (typeof schema.exclusiveMinimum === "number") out.push(`more than ${schema.exclusiveMinimum}`);
  if (typeof schema.exclusiveMaximum === "number") out.push(`less than ${schema.exclusiveMaximum}`);
  if (typeof schema.format === "string") out.push(`format ${escapeHtml(schema.format)}`);
  if (typeof schema.pattern === "string") out.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if ("default" in schema) out.push(`default ${literal(schema.default)}`);
  return out;
}

/** Whether a schema has fields or variants worth listing under its name. */
function hasChildren(schema: Schema): boolean {
  if (isSchema(schema.properties) && Object.keys(schema.properties).length > 0) return true;
  if (isSchema(schema.items)) return hasChildren(schema.items);
  if (isSchema(schema.additionalProperties)) return hasChildren(schema.additionalProperties);
  return (variantsOf(schema) ?? []).some(hasChildren);
}

/** What lies under a schema's name: its fields, its items' fields, or its variants. */
function children(schema: Schema, depth: number): string {
  if (depth > MAX_DEPTH) return `<p class="more">(nested further; see <a href="/v1/openapi.json">the document</a>)</p>`;
  if (isSchema(schema.properties)) return fieldList(schema, depth);
  if (isSchema(schema.items)) return children(schema.items, depth);
  if (isSchema(schema.additionalProperties) && hasChildren(schema.additionalProperties)) return children(schema.additionalProperties, depth);
  const variants = variantsOf(schema);
  if (variants?.some(hasChildren)) {
    const items = variants.map((v) => `<li><span class="type">${typeLabel(v)}</span>${describe(v)}${hasChildren(v) ? children(v, depth + 1) : ""}</li>`);
    return `<ol class="variants">${items.join("")}</ol>`;
  }
  return "";
}

function describe(schema: Schema): string {
  const notes = constraints(schema);
  const text = typeof schema.description === "string" ? ` <span class="desc">${inlineText(schema.description)}</span>` : "";
  return (notes.length ? ` <span class="bounds">${notes.join(" · ")}</span>` : "") + text;
}

function fieldList(schema: Schema, depth: number): string {
  const properties = schema.properties as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const items = Object.entries(properties).map(([name, value]) => {
    const field = isSchema(value) ? value : {};
    const need = required.has(name) ? ` <span class="required">required</span>` : "";
    return `<li><code class="field">${escapeHtml(name)}</code> <span class="type">${typeLabel(field)}</span>${need}${describe(field)}${hasChildren(field) ? children(field, depth + 1) : ""}</li>`;
  });
  const closed = schema.additionalProperties === false ? "" : isSchema(schema.additionalProperties) && Object.keys(schema.additionalProperties).length > 0 ? `<li class="extra">other fields: <span class="type">${typeLabel(schema.additionalProperties)}</span></li>` : "";
  if (items.length === 0 && !closed) return "";
  return `<ul class="fields">${items.join("")}${closed}</ul>`;
}

/** A whole schema: its type line, then what it holds. */
export function schemaHtml(value: unknown): string {
  const schema = isSchema(value) ? value : {};
  return `<p class="schema-type"><span class="type">${typeLabel(schema)}</span>${describe(schema)}</p>${children(schema, 0)}`;
}
