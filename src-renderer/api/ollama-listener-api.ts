/** The Ollama-compatible listener on 127.0.0.1: its state, opening (or moving) it, closing it (workspaces.manage). */
import type { ApiClient } from "./client.js";
import type { OllamaListener, OpenOllamaListenerRequest } from "./contract.js";

const PATH = "/v1/admin/ollama-listener";

export const getOllamaListener = (c: ApiClient, signal?: AbortSignal) => c.json<OllamaListener>("GET", PATH, { signal });
export const openOllamaListener = (c: ApiClient, body: OpenOllamaListenerRequest) => c.json<OllamaListener>("POST", PATH, { json: body });
export const closeOllamaListener = (c: ApiClient) => c.json<OllamaListener>("DELETE", PATH);
