/** The Ollama-compatible listener on the wire (`/v1/admin/ollama-listener`). */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import { DEFAULT_OLLAMA_PORT, OLLAMA_LISTENER_HOST, type OllamaListenerState } from "../../admin/ollama-listener-service.js";

export const OpenOllamaListenerSchema = z
  .object({
    key_id: z.string().trim().min(1).max(100),
    port: z.number().int().min(1).max(65535).optional(),
    host: z.string().max(255).optional(),
  })
  .strict();

export function ollamaListenerObject(state: OllamaListenerState): Api.OllamaListener {
  const { setting, key, workspace } = state;
  const port = setting?.port ?? null;
  return {
    object: "ollama_listener",
    status: state.status,
    listening: state.listening,
    host: OLLAMA_LISTENER_HOST,
    port,
    url: port === null ? null : `http://${OLLAMA_LISTENER_HOST}:${port}`,
    default_port: DEFAULT_OLLAMA_PORT,
    key: key && { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, expires_at: key.expiresAt, revoked_at: key.revokedAt },
    workspace: workspace && { id: workspace.id, name: workspace.name },
    opened_at: setting?.openedAt ?? null,
    opened_by: setting?.openedBy ?? null,
    problem: state.problem,
  };
}
