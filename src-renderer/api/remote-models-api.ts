/** Remote models ("team servers") through the admin API (`workspaces.manage`): list, test, add, remove. */
import type { ApiClient } from "./client.js";
import type { CreateRemoteModelRequest, RemoteModel, RemoteModelTest } from "./contract.js";

const BASE = "/v1/admin/remote-models";
const one = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

export const listRemoteModels = (c: ApiClient, signal?: AbortSignal) => c.json<{ object: "list"; data: RemoteModel[] }>("GET", BASE, { signal });
/** Tests each replica's `GET /models` before adding; 200 even when a replica fails (`ok: false`, its `error`). */
export const testNewRemoteModel = (c: ApiClient, body: CreateRemoteModelRequest) => c.json<RemoteModelTest>("POST", `${BASE}/test`, { json: body });
export const createRemoteModel = (c: ApiClient, body: CreateRemoteModelRequest) => c.json<RemoteModel>("POST", BASE, { json: body });
export const testRemoteModel = (c: ApiClient, id: string) => c.json<RemoteModelTest>("POST", `${one(id)}/test`);
export const deleteRemoteModel = (c: ApiClient, id: string) => c.json<{ id: string; object: "remote_model"; deleted: true }>("DELETE", one(id));
