/**
 * What a key can do over MCP. The server lets a key with `rag.read` list, search and read
 * every corpus of its own workspace (and nothing else), and `ask_corpus` also needs
 * `inference`; a revoked or expired key reaches nothing.
 */
import type { ApiKey } from "../api/contract.js";

/** `ask`: search, read and ask; `search`: search and read only; `none`: no MCP at all. */
export type McpAccess = "ask" | "search" | "none";

export function mcpAccess(key: Pick<ApiKey, "scopes">): McpAccess {
  if (!key.scopes.includes("rag.read")) return "none";
  return key.scopes.includes("inference") ? "ask" : "search";
}

/** Whether the key still works at `nowSeconds` (not revoked, not expired). */
export const isActiveKey = (key: Pick<ApiKey, "revoked_at" | "expires_at">, nowSeconds: number) => !key.revoked_at && (key.expires_at === null || key.expires_at > nowSeconds);

/** The keys to show, those that can connect first (asking before search-only), in the table's order otherwise. */
export function keysByAccess<K extends Pick<ApiKey, "scopes" | "revoked_at" | "expires_at">>(keys: readonly K[], nowSeconds: number): { key: K; access: McpAccess }[] {
  const rank: Record<McpAccess, number> = { ask: 0, search: 1, none: 2 };
  return keys
    .filter((k) => isActiveKey(k, nowSeconds))
    .map((key) => ({ key, access: mcpAccess(key) }))
    .sort((a, b) => rank[a.access] - rank[b.access]);
}
