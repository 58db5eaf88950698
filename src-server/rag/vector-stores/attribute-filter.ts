/**
 * OpenAI's attribute filters (`filters` of a vector-store search, and of `file_search`):
 * comparisons (`eq`, `ne`, `gt`, `gte`, `lt`, `lte`, `in`, `nin`) on one attribute, combined
 * with `and` / `or`. Evaluated here over each document's attributes (its metadata), to the
 * set of documents a search may return.
 */
import type { Attributes } from "../../store/vector-store-store.js";

export type AttributeValue = string | number | boolean;

export type ComparisonOperator = "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "nin";

export type AttributeFilter =
  | { type: ComparisonOperator; key: string; value: AttributeValue | (string | number)[] }
  | { type: "and" | "or"; filters: AttributeFilter[] };

/** Deepest nesting of compound filters accepted (far beyond any real filter). */
export const MAX_FILTER_DEPTH = 8;
/** Comparisons and compounds in one filter, at most. */
export const MAX_FILTER_NODES = 256;

/**
 * Whether `value` (a document attribute, absent = undefined) passes one comparison. As
 * OpenAI's: an absent attribute matches only `ne` and `nin`; order comparisons hold
 * between numbers, or between strings (compared as written, so ISO dates order by time);
 * `eq`/`ne` compare by type and value.
 */
function compare(type: ComparisonOperator, value: unknown, wanted: AttributeValue | (string | number)[]): boolean {
  switch (type) {
    case "eq":
      return value !== undefined && value === wanted;
    case "ne":
      return value !== wanted;
    case "in":
      return Array.isArray(wanted) && wanted.some((w) => w === value);
    case "nin":
      return !Array.isArray(wanted) || !wanted.some((w) => w === value);
    default: {
      if (Array.isArray(wanted) || typeof wanted === "boolean" || typeof value !== typeof wanted) return false;
      const a = value as string | number;
      const b = wanted;
      if (type === "gt") return a > b;
      if (type === "gte") return a >= b;
      if (type === "lt") return a < b;
      return a <= b;
    }
  }
}

/** Whether a document with these attributes passes the filter. */
export function matchesFilter(filter: AttributeFilter, attributes: Readonly<Record<string, unknown>>): boolean {
  if ("filters" in filter) return filter.type === "and" ? filter.filters.every((f) => matchesFilter(f, attributes)) : filter.filters.some((f) => matchesFilter(f, attributes));
  const value = Object.hasOwn(attributes, filter.key) ? attributes[filter.key] : undefined;
  return compare(filter.type, value, filter.value);
}

/** A document's metadata as attributes: its string, number and boolean values (others are not filterable). */
export function attributesOf(metadata: Readonly<Record<string, unknown>>): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) out[key] = value;
  }
  return out;
}
