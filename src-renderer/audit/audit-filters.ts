/** The audit page's filters and the `GET /v1/audit/events` query they make (plain logic, tested alone). */
import type { AuditEventsQuery } from "../api/contract.js";

/** Type prefixes offered as groups (the API matches a type that starts with a prefix ending in `.`). */
export const TYPE_GROUPS = [
  "chat.",
  "embeddings.",
  "rag.",
  "document.",
  "corpus.",
  "tombstone.",
  "api_key.",
  "service_account.",
  "workspace.",
  "session.",
  "auth.",
  "rate_limit.",
  "kek.",
  "oauth.",
  "audit.",
] as const;
export type TypeGroup = (typeof TYPE_GROUPS)[number];

export const TIME_RANGES = ["any", "1h", "24h", "7d", "30d", "custom"] as const;
export type TimeRange = (typeof TIME_RANGES)[number];

export interface AuditFilters {
  /** A type group, or "" for every type. */
  type: TypeGroup | "";
  outcome: "" | "success" | "failure";
  range: TimeRange;
  /** ISO 8601 bounds, fixed when the range was chosen (so the query does not drift with the clock). */
  since: string | null;
  until: string | null;
  /** An exact actor (`api_key:key_…`), or "". */
  actor: string;
  /** An exact request id, or "". */
  requestId: string;
}

export const NO_FILTERS: AuditFilters = { type: "", outcome: "", range: "any", since: null, until: null, actor: "", requestId: "" };

/** Entries fetched per page. */
export const PAGE_SIZE = 50;

const HOUR_MS = 3_600_000;
const SPANS: Record<Exclude<TimeRange, "any" | "custom">, number> = { "1h": HOUR_MS, "24h": 24 * HOUR_MS, "7d": 7 * 24 * HOUR_MS, "30d": 30 * 24 * HOUR_MS };

/** The filters with a preset range applied at `nowMs` (custom keeps its bounds until they are edited). */
export function withRange(filters: AuditFilters, range: TimeRange, nowMs: number): AuditFilters {
  if (range === "any") return { ...filters, range, since: null, until: null };
  if (range === "custom") return { ...filters, range };
  return { ...filters, range, since: new Date(nowMs - SPANS[range]).toISOString(), until: null };
}

/** A `datetime-local` value (local time, no zone) as ISO 8601 UTC; null when empty or invalid. */
export function localInputToIso(value: string): string | null {
  if (!value) return null;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** ISO 8601 as a `datetime-local` value in local time ("" for null). */
export function isoToLocalInput(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The list query for these filters, newest first, continuing after `after` when given. */
export function eventsQuery(filters: AuditFilters, after?: string): AuditEventsQuery {
  const query: AuditEventsQuery = { limit: PAGE_SIZE, order: "desc" };
  if (filters.type) query.type = filters.type;
  if (filters.outcome) query.outcome = filters.outcome;
  if (filters.actor.trim()) query.actor = filters.actor.trim();
  if (filters.requestId.trim()) query.request_id = filters.requestId.trim();
  if (filters.since) query.since = filters.since;
  if (filters.until) query.until = filters.until;
  if (after) query.after = after;
  return query;
}

/** The time bounds an export should respect. */
export function exportRange(filters: AuditFilters): { since?: string; until?: string } {
  return { ...(filters.since ? { since: filters.since } : {}), ...(filters.until ? { until: filters.until } : {}) };
}

export function isFiltered(filters: AuditFilters): boolean {
  return filters.type !== "" || filters.outcome !== "" || filters.range !== "any" || filters.actor.trim() !== "" || filters.requestId.trim() !== "";
}
