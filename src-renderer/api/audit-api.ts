/** The audit trail: `/v1/audit/events`, `/export`, `/verify` and `/signing-key` (scope `audit.read`). */
import type { ApiClient } from "./client.js";
import type { AuditEvent, AuditEventsQuery, AuditSigningKey, AuditVerification, ListPage } from "./contract.js";

/** A query string from the set fields only (`?type=document.&limit=50`), or "" when none is set. */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export const listAuditEvents = (c: ApiClient, query: AuditEventsQuery, signal?: AbortSignal) =>
  c.json<ListPage<AuditEvent>>("GET", `/v1/audit/events${queryString({ ...query })}`, { signal });

export const verifyAudit = (c: ApiClient, chain?: string) => c.json<AuditVerification>("GET", `/v1/audit/verify${queryString({ chain })}`);

export const getSigningKey = (c: ApiClient) => c.json<AuditSigningKey>("GET", "/v1/audit/signing-key");

export type AuditExportFormat = "jsonl" | "csv";

/** The export request's path: the format and the time bounds of the current filter. */
export function exportPath(format: AuditExportFormat, range: { since?: string; until?: string; chain?: string }): string {
  return `/v1/audit/export${queryString({ format, since: range.since, until: range.until, chain: range.chain })}`;
}

/** The file name from `Content-Disposition: attachment; filename="…"`, or a fallback. */
export function attachmentName(header: string | null, fallback: string): string {
  const match = header ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header) : null;
  const name = match?.[1] ? decodeURIComponent(match[1]).replace(/[\\/]/g, "_") : "";
  return name || fallback;
}

/** Fetches an export with the workbench's own credential (cookie or bearer) and returns it as a file. */
export async function exportAudit(c: ApiClient, format: AuditExportFormat, range: { since?: string; until?: string; chain?: string }): Promise<{ blob: Blob; filename: string }> {
  const res = await c.request("GET", exportPath(format, range), { headers: { accept: format === "csv" ? "text/csv" : "application/x-ndjson" } });
  const blob = await res.blob();
  return { blob, filename: attachmentName(res.headers.get("content-disposition"), `pustaka-audit.${format}`) };
}
