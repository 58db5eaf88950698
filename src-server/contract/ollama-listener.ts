/** The API contract of the Ollama-compatible listener (`/v1/admin/ollama-listener`). Types only. */
import type { Scope } from "./admin.js";

/**
 * Why the listener does not serve as it should: its key was revoked or has expired (it
 * answers 401), its key is gone, its port could not be taken at start, or this deployment
 * cannot have one (replicas sharing a database).
 */
export type OllamaListenerProblemCode = "revoked_api_key" | "expired_api_key" | "api_key_not_found" | "port_in_use" | "port_not_permitted" | "listen_failed" | "not_available";

/**
 * `GET`, `POST` and `DELETE /v1/admin/ollama-listener` (workspaces.manage): a listener on
 * 127.0.0.1 that serves only Ollama's API (`/api/*`) without a key, acting as one bound API key.
 * `status`: `closed` (none), `open` (listening, its key valid), `broken` (opened, but its key no
 * longer works or its port could not be taken: see `problem`), `unavailable` (this deployment
 * cannot have one).
 */
export interface OllamaListener {
  object: "ollama_listener";
  status: "closed" | "open" | "broken" | "unavailable";
  /** Whether the port is being listened on now. */
  listening: boolean;
  /** Always 127.0.0.1: the listener never binds another interface. */
  host: "127.0.0.1";
  /** The port opened (null when closed). */
  port: number | null;
  /** What clients are pointed at (`OLLAMA_HOST`), e.g. `http://127.0.0.1:11434`; null when closed. */
  url: string | null;
  /** The port used when none is given (Ollama's own). */
  default_port: number;
  /** The key whose workspace, scopes and rate limits every request gets (null when closed). */
  key: { id: string; name: string; prefix: string; scopes: Scope[]; expires_at: number | null; revoked_at: number | null } | null;
  workspace: { id: string; name: string } | null;
  /** Unix seconds. */
  opened_at: number | null;
  /** The audit actor who opened it. */
  opened_by: string | null;
  problem: { code: OllamaListenerProblemCode; message: string } | null;
}

/** `POST /v1/admin/ollama-listener`: open (or move) the listener. */
export interface OpenOllamaListenerRequest {
  key_id: string;
  /** Default 11434. */
  port?: number;
  /** Only `127.0.0.1` or `localhost` (both bind 127.0.0.1); anything else is refused. */
  host?: string;
}
