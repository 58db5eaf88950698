/**
 * The Ollama-compatible listener's lifecycle. Many Ollama clients cannot send a header, so an
 * administrator may open a listener on 127.0.0.1 (Ollama's port 11434 by default) that serves
 * Ollama's API without a key, every request acting as one bound API key: that key's workspace,
 * scopes and rate limits, resolved afresh on each request so that revoking the key takes effect
 * at once. The setting is kept in the store and the listener opens again at the next start.
 * Knows nothing of HTTP: the composition root passes `bind`, which starts the listener's app.
 */
import { actorOf } from "../audit/audit-service.js";
import type { Principal, Scope } from "../domain/scopes.js";
import { invalidRequest, notFound, ServiceError } from "../errors.js";
import { nowSeconds } from "../ids.js";
import type { ApiKeyRecord, ApiKeyStore } from "../store/api-key-store.js";
import type { OllamaListenerSetting, OllamaListenerStore } from "../store/ollama-listener-store.js";
import type { WorkspaceRecord, WorkspaceStore } from "../store/workspace-store.js";

/** Ollama's own port: what clients try when told nothing. */
export const DEFAULT_OLLAMA_PORT = 11434;
/** The only interface the listener ever binds. */
export const OLLAMA_LISTENER_HOST = "127.0.0.1";
/** Host names a request to open may give; both mean 127.0.0.1. */
const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost"]);
/** Scopes a listener's key must not hold: with no secret to present, any local program would have them. */
const ADMIN_SCOPES: readonly Scope[] = ["keys.manage", "workspaces.manage"];
/** `last_used_at` is refreshed at most this often, as for keys presented in a header. */
const TOUCH_INTERVAL_SECONDS = 60;

/** A started listener. */
export interface BoundListener {
  /** Stops accepting connections at once; resolves when the requests in flight have ended (or were cut). */
  close(): Promise<void>;
}

export type OllamaListenerProblem = { code: "revoked_api_key" | "expired_api_key" | "api_key_not_found" | "port_in_use" | "port_not_permitted" | "listen_failed" | "not_available"; message: string };

export interface OllamaListenerState {
  status: "closed" | "open" | "broken" | "unavailable";
  listening: boolean;
  setting: OllamaListenerSetting | null;
  key: ApiKeyRecord | null;
  workspace: WorkspaceRecord | null;
  problem: OllamaListenerProblem | null;
}

export interface OpenListenerInput {
  keyId: string;
  port?: number | undefined;
  host?: string | undefined;
}

export interface OllamaListenerServiceDeps {
  settings: Pick<OllamaListenerStore, "get" | "put" | "remove">;
  keys: Pick<ApiKeyStore, "get" | "touch">;
  workspaces: Pick<WorkspaceStore, "get">;
  /** Starts the listener's app on 127.0.0.1:`port`; rejects with the system's error (`EADDRINUSE`, `EACCES`). */
  bind: (port: number) => Promise<BoundListener>;
  /** Why this deployment cannot have a listener (replicas sharing a database); null or absent = it can. */
  unavailable?: string | null;
  onWarning?: (message: string) => void;
  /** Unix seconds now (key expiry, `opened_at`). Default: the system clock. */
  now?: () => number;
}

export class OllamaListenerService {
  private setting: OllamaListenerSetting | null = null;
  private bound: BoundListener | null = null;
  /** Why the port could not be taken at start (the setting stands: the Security page shows it). */
  private bindProblem: OllamaListenerProblem | null = null;
  private stopped = false;
  /** Opening, closing, restoring and stopping run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  private readonly now: () => number;

  constructor(private readonly deps: OllamaListenerServiceDeps) {
    this.now = deps.now ?? nowSeconds;
  }

  /** The listener as it stands (workspaces.manage). */
  async state(principal: Principal): Promise<OllamaListenerState> {
    requireAdmin(principal);
    return this.describe();
  }

  /**
   * Opens the listener on 127.0.0.1 acting as `keyId`, or moves an open one to another key or
   * port (the new port is taken before the old one is let go, so a busy port changes nothing).
   * Returns the new state and the setting it replaced.
   */
  async open(principal: Principal, input: OpenListenerInput): Promise<{ state: OllamaListenerState; previous: OllamaListenerSetting | null }> {
    requireAdmin(principal);
    if (this.deps.unavailable) throw new ServiceError("conflict", this.deps.unavailable, { code: "not_available" });
    if (input.host !== undefined && !LOOPBACK_NAMES.has(input.host.trim().toLowerCase())) {
      throw invalidRequest(`the Ollama listener binds 127.0.0.1 only (it needs no key, so it must never be reachable from another computer); '${input.host}' is refused`, "host_not_loopback", "host");
    }
    const port = input.port ?? DEFAULT_OLLAMA_PORT;
    return this.serially(async () => {
      if (this.stopped) throw new ServiceError("unavailable", "the server is shutting down", { code: "server_shutting_down" });
      const key = await this.deps.keys.get(input.keyId);
      if (!key) throw notFound(`no API key '${input.keyId}'`, "api_key_not_found");
      const unusable = keyProblem(key, this.now());
      if (unusable) throw invalidRequest(unusable.message, unusable.code, "key_id");
      const powerful = key.scopes.filter((scope) => ADMIN_SCOPES.includes(scope));
      if (powerful.length > 0) {
        throw invalidRequest(
          `key '${key.name}' holds ${powerful.join(", ")}: the listener lends its key's access to every program on this computer without a secret, so bind a key without administrative scopes (one with 'inference' is enough for Ollama clients)`,
          "api_key_too_powerful",
          "key_id",
        );
      }
      // A key can only lend what its administrator holds, as a key can only grant what it holds.
      const excess = key.scopes.filter((scope) => !principal.scopes.has(scope));
      if (excess.length > 0) throw invalidRequest(`cannot lend scopes the caller does not hold: ${excess.join(", ")}`, "scope_not_grantable", "key_id");

      const previous = this.setting;
      const reuse = this.bound !== null && previous?.port === port;
      const fresh = reuse ? null : await this.listen(port);
      const setting: OllamaListenerSetting = { keyId: key.id, port, openedBy: actorOf(principal), openedAt: this.now() };
      try {
        await this.deps.settings.put(setting);
      } catch (error) {
        await fresh?.close();
        throw error;
      }
      if (fresh) {
        const old = this.bound;
        this.bound = fresh;
        await old?.close();
      }
      this.setting = setting;
      this.bindProblem = null;
      return { state: await this.describe(), previous };
    });
  }

  /**
   * Closes the listener and forgets it (it stays closed after a restart). Idempotent; returns
   * the setting it had and the workspace of the key it lent.
   */
  async close(principal: Principal): Promise<{ state: OllamaListenerState; previous: OllamaListenerSetting | null; workspaceId: string | null }> {
    requireAdmin(principal);
    return this.serially(async () => {
      await this.deps.settings.remove();
      const previous = this.setting;
      const workspaceId = previous ? ((await this.deps.keys.get(previous.keyId))?.workspaceId ?? null) : null;
      const bound = this.bound;
      this.setting = null;
      this.bound = null;
      this.bindProblem = null;
      await bound?.close();
      return { state: await this.describe(), previous, workspaceId };
    });
  }

  /**
   * At start: opens the listener an administrator left open. Never throws: a port now taken
   * (another Ollama started first) leaves it broken, with the reason, until it is opened again.
   */
  async restore(): Promise<void> {
    await this.serially(async () => {
      const setting = await this.deps.settings.get();
      if (!setting || this.stopped) return;
      if (this.deps.unavailable) {
        this.deps.onWarning?.(`an Ollama listener was left open on port ${setting.port}, but ${this.deps.unavailable}; it stays closed`);
        return;
      }
      this.setting = setting;
      try {
        this.bound = await this.listen(setting.port);
      } catch (error) {
        this.bindProblem = error instanceof ServiceError ? { code: problemCode(error.code), message: error.message } : { code: "listen_failed", message: String(error) };
        this.deps.onWarning?.(`the Ollama listener could not open again on 127.0.0.1:${setting.port}: ${this.bindProblem.message}`);
        return;
      }
      const key = await this.deps.keys.get(setting.keyId);
      const problem = key ? keyProblem(key, this.now()) : null;
      if (problem) this.deps.onWarning?.(`the Ollama listener on 127.0.0.1:${setting.port} answers 401: ${problem.message}`);
    });
  }

  /** Stops listening at shutdown; the setting stays for the next start. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.serially(async () => {
      const bound = this.bound;
      this.bound = null;
      await bound?.close();
    });
  }

  /**
   * Who a request on the listener acts as: the bound key, read from the store on every request,
   * so a revoked or expired key is refused (401) from the next request on.
   */
  async principal(): Promise<Principal> {
    const setting = this.setting;
    if (!setting) throw new ServiceError("authentication", "the Ollama listener is closed", { code: "listener_closed" });
    const key = await this.deps.keys.get(setting.keyId);
    const now = this.now();
    if (!key) throw new ServiceError("authentication", "the API key this Ollama listener acts as no longer exists; an administrator must open it again with another key", { code: "invalid_api_key" });
    const problem = keyProblem(key, now);
    if (problem) throw new ServiceError("authentication", `${problem.message}, and this Ollama listener acts as it: an administrator must open the listener again with another key (Security page)`, { code: problem.code });
    if (key.lastUsedAt === null || now - key.lastUsedAt >= TOUCH_INTERVAL_SECONDS) await this.deps.keys.touch(key.id, now);
    return { kind: "api_key", workspaceId: key.workspaceId, keyId: key.id, keyName: key.name, scopes: new Set(key.scopes) };
  }

  private async describe(): Promise<OllamaListenerState> {
    const listening = this.bound !== null;
    if (this.deps.unavailable) return { status: "unavailable", listening, setting: null, key: null, workspace: null, problem: { code: "not_available", message: this.deps.unavailable } };
    const setting = this.setting;
    if (!setting) return { status: "closed", listening, setting: null, key: null, workspace: null, problem: null };
    const key = (await this.deps.keys.get(setting.keyId)) ?? null;
    const workspace = key ? ((await this.deps.workspaces.get(key.workspaceId)) ?? null) : null;
    const problem = this.bindProblem ?? (key ? keyProblem(key, this.now()) : { code: "api_key_not_found" as const, message: `the API key '${setting.keyId}' no longer exists` });
    return { status: problem ? "broken" : "open", listening, setting, key, workspace, problem };
  }

  /** Starts the listener, turning the system's refusals into errors a person can act on. */
  private async listen(port: number): Promise<BoundListener> {
    try {
      return await this.deps.bind(port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") {
        throw new ServiceError("conflict", `port ${port} on 127.0.0.1 is already in use (is Ollama itself running?); stop what uses it or choose another port`, { code: "port_in_use", cause: error });
      }
      if (code === "EACCES") throw invalidRequest(`this system does not let Pustaka listen on port ${port} (ports below 1024 need administrator rights); choose another, such as ${DEFAULT_OLLAMA_PORT}`, "port_not_permitted", "port");
      throw new ServiceError("server", `the Ollama listener could not listen on 127.0.0.1:${port}: ${(error as Error).message}`, { code: "listen_failed", cause: error });
    }
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function requireAdmin(principal: Principal): void {
  if (!principal.scopes.has("workspaces.manage")) throw new ServiceError("permission", "this API key lacks the 'workspaces.manage' scope", { code: "insufficient_scope" });
}

/** Why a key cannot be used now, or null. */
function keyProblem(key: ApiKeyRecord, now: number): OllamaListenerProblem | null {
  if (key.revokedAt !== null) return { code: "revoked_api_key", message: `the API key '${key.name}' (${key.prefix}…) has been revoked` };
  if (key.expiresAt !== null && key.expiresAt <= now) return { code: "expired_api_key", message: `the API key '${key.name}' (${key.prefix}…) has expired` };
  return null;
}

function problemCode(code: string): OllamaListenerProblem["code"] {
  return code === "port_in_use" || code === "port_not_permitted" ? code : "listen_failed";
}
