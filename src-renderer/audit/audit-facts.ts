/** Short, readable facts of an audit entry for the table, and its actor in words. */
import type { AuditEvent } from "../api/contract.js";
import { countOf, type MessageKey, type Translate } from "../i18n/i18n.js";
import { formatBytes } from "../lib/format.js";
import { TYPE_GROUPS } from "./audit-filters.js";

const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const str = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

export interface Fact {
  text: string;
  /** An error code or a failed status, shown in the danger colour. */
  bad?: boolean;
}

/** Up to `max` facts: the error first, then model and tokens, what the entry names, status and latency. */
export function keyFacts(event: AuditEvent, t: Translate, max = 4): Fact[] {
  const d = event.data;
  const out: Fact[] = [];
  const error = str(d.error) ?? str(d.reason);
  if (error) out.push({ text: error, bad: true });
  const facts: string[] = [];
  const model = str(d.model);
  if (model) facts.push(model);
  const tokens = (num(d.prompt_tokens) ?? 0) + (num(d.completion_tokens) ?? 0);
  if (num(d.prompt_tokens) !== null || num(d.completion_tokens) !== null) facts.push(countOf(t, "audit.fact.tokens", tokens));
  if (str(d.name)) facts.push(`“${str(d.name)}”`);
  if (str(d.format) && num(d.bytes) !== null) facts.push(`${str(d.format)} · ${formatBytes(num(d.bytes))}`);
  if (Array.isArray(d.citations)) facts.push(countOf(t, "audit.fact.citations", d.citations.length));
  if (num(d.inputs) !== null) facts.push(countOf(t, "audit.fact.inputs", num(d.inputs)!));
  // Words the entry names as they are: an operation refused, how a token was asked for, its scopes.
  for (const field of ["filename", "operation", "method", "auth", "scope", "client_id"]) {
    const value = str(d[field]);
    if (value) facts.push(value);
  }
  if (Array.isArray(d.changed) && d.changed.length > 0) facts.push(t("audit.fact.changed", { list: d.changed.filter((x) => typeof x === "string").join(", ") }));
  if ("rate_limit_tier" in d) facts.push(t("audit.fact.tier", { tier: str(d.rate_limit_tier) ?? "default" }));
  out.push(...facts.map((text) => ({ text })));
  const status = num(d.status);
  if (status !== null && (status >= 400 || out.length < max - 1)) out.push({ text: t("audit.fact.status", { n: status }), bad: status >= 400 });
  const latency = num(d.latency_ms);
  if (latency !== null) out.push({ text: t("audit.fact.latency", { n: latency }) });
  return out.slice(0, max);
}

const ACTOR_KINDS = ["api_key", "session", "service_account", "system", "cli", "anonymous"] as const;

/** `api_key:key_1` → { kind: "API key", id: "key_1" }; unknown kinds are shown as they are. */
export function describeActor(actor: string, t: Translate): { kind: string; id: string | null } {
  const colon = actor.indexOf(":");
  const kind = colon >= 0 ? actor.slice(0, colon) : actor;
  const id = colon >= 0 ? actor.slice(colon + 1) : null;
  if ((ACTOR_KINDS as readonly string[]).includes(kind)) return { kind: t(`audit.actor.${kind}` as MessageKey), id };
  return { kind: actor, id: null };
}

/** The catalogue key of a type's group (`document.upload` → `audit.group.document.`), null for an unknown family. */
export function groupLabelKey(type: string): MessageKey | null {
  const prefix = `${type.split(".")[0]}.`;
  return (TYPE_GROUPS as readonly string[]).includes(prefix) ? (`audit.group.${prefix}` as MessageKey) : null;
}
