/** Models, the engine's health, the catalog and downloads. */
import type { ApiClient } from "./client.js";
import type { CatalogList, CreatePullRequest, Health, ModelList, ModelPull, PullEvent, RegisterModelFileRequest } from "./contract.js";
import { parseJsonData } from "./sse.js";

export const listModels = (c: ApiClient) => c.json<ModelList>("GET", "/v1/models");
export const getHealth = (c: ApiClient) => c.json<Health>("GET", "/healthz");
export const getCatalog = (c: ApiClient) => c.json<CatalogList>("GET", "/v1/models/catalog");
export const listPulls = (c: ApiClient) => c.json<{ object: "list"; data: ModelPull[] }>("GET", "/v1/models/pulls");
export const createPull = (c: ApiClient, body: CreatePullRequest) => c.json<ModelPull>("POST", "/v1/models/pulls", { json: body });
export const cancelPull = (c: ApiClient, id: string) => c.json<ModelPull>("DELETE", `/v1/models/pulls/${encodeURIComponent(id)}`);
export const registerModelFile = (c: ApiClient, body: RegisterModelFileRequest) => c.json<unknown>("POST", "/v1/models/files", { json: body });

export function followPullEvents(c: ApiClient, onEvent: (event: PullEvent) => void, signal: AbortSignal): Promise<void> {
  return c.sse("GET", "/v1/models/pulls/events", (data) => onEvent(parseJsonData<PullEvent>(data)), { signal });
}
