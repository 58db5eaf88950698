/** Service accounts of a workspace (`/v1/admin/workspaces/{ws}/service_accounts`). */
import type { ApiClient } from "./client.js";
import type { CreatedServiceAccount, CreateServiceAccountRequest, ListPage, PatchServiceAccountRequest, ServiceAccount } from "./contract.js";

const base = (ws: string) => `/v1/admin/workspaces/${encodeURIComponent(ws)}/service_accounts`;
const one = (ws: string, id: string) => `${base(ws)}/${encodeURIComponent(id)}`;

export const listServiceAccounts = (c: ApiClient, ws: string) => c.json<ListPage<ServiceAccount>>("GET", `${base(ws)}?limit=100`);
export const createServiceAccount = (c: ApiClient, ws: string, body: CreateServiceAccountRequest) => c.json<CreatedServiceAccount>("POST", base(ws), { json: body });
export const patchServiceAccount = (c: ApiClient, ws: string, id: string, body: PatchServiceAccountRequest) => c.json<ServiceAccount>("PATCH", one(ws, id), { json: body });
export const deleteServiceAccount = (c: ApiClient, ws: string, id: string) => c.json<unknown>("DELETE", one(ws, id));
/** A new client secret; the old one stops working. The answer carries the secret this once. */
export const rotateServiceAccountSecret = (c: ApiClient, ws: string, id: string) => c.json<CreatedServiceAccount>("POST", `${one(ws, id)}/secret`);
