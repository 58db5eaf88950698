/** How this instance protects data and proves its records: `GET /v1/admin/security` (workspaces.manage). */
import type { ApiClient } from "./client.js";
import type { SecurityStatus } from "./contract.js";

export const getSecurityStatus = (c: ApiClient, signal?: AbortSignal) => c.json<SecurityStatus>("GET", "/v1/admin/security", { signal });
