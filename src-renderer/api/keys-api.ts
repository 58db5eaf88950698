/** API keys of the caller's workspace. */
import type { ApiClient } from "./client.js";
import type { ApiKey, CreateApiKeyRequest, CreatedApiKey, ListPage } from "./contract.js";

const base = (ws: string) => `/v1/admin/workspaces/${encodeURIComponent(ws)}/api_keys`;

export const listKeys = (c: ApiClient, ws: string) => c.json<ListPage<ApiKey>>("GET", `${base(ws)}?limit=100`);
export const createKey = (c: ApiClient, ws: string, body: CreateApiKeyRequest) => c.json<CreatedApiKey>("POST", base(ws), { json: body });
export const revokeKey = (c: ApiClient, ws: string, id: string) => c.json<ApiKey>("DELETE", `${base(ws)}/${encodeURIComponent(id)}`);
