/** API keys of the caller's workspace, and their rate-limit tiers. */
import type { ApiClient } from "./client.js";
import type { ApiKey, CreateApiKeyRequest, CreatedApiKey, ListPage, PatchRateLimitTierRequest } from "./contract.js";

const base = (ws: string) => `/v1/admin/workspaces/${encodeURIComponent(ws)}/api_keys`;

export const listKeys = (c: ApiClient, ws: string) => c.json<ListPage<ApiKey>>("GET", `${base(ws)}?limit=100`);
export const createKey = (c: ApiClient, ws: string, body: CreateApiKeyRequest) => c.json<CreatedApiKey>("POST", base(ws), { json: body });
export const revokeKey = (c: ApiClient, ws: string, id: string) => c.json<ApiKey>("DELETE", `${base(ws)}/${encodeURIComponent(id)}`);
/** Puts a key on a named tier (null: back to the default); needs `workspaces.manage`. */
export const setKeyTier = (c: ApiClient, ws: string, id: string, tier: string | null) =>
  c.json<ApiKey>("PATCH", `${base(ws)}/${encodeURIComponent(id)}`, { json: { rate_limit_tier: tier } satisfies PatchRateLimitTierRequest });
