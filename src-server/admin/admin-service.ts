/**
 * Workspaces and API keys: bootstrap, authentication and key lifecycle.
 * Knows nothing of HTTP; callers pass the acting `Principal`.
 */
import { ServiceError, invalidRequest, notFound } from "../errors.js";
import { newId, nowSeconds } from "../ids.js";
import { digestsEqual, generateSecret, hashSecret, secretPrefix, SECRET_MARKER, PREFIX_LENGTH } from "../security/secrets.js";
import type { ApiKeyRecord, ApiKeyStore } from "../store/api-key-store.js";
import type { Page, PageRequest } from "../store/pagination.js";
import type { WorkspaceRecord, WorkspaceStore } from "../store/workspace-store.js";
import { ADMIN_SCOPES, DEFAULT_KEY_SCOPES, type Principal, type Scope } from "../domain/scopes.js";

export const DEFAULT_WORKSPACE_ID = "ws_default";
/** `last_used_at` is refreshed at most this often, to keep auth free of writes on hot paths. */
const TOUCH_INTERVAL_SECONDS = 60;

export interface CreateKeyInput {
  name: string;
  scopes?: Scope[] | undefined;
  /** Days until the key stops working; omitted = never. */
  expiresInDays?: number | undefined;
}

export interface CreatedKey {
  key: ApiKeyRecord;
  /** The secret, shown once and never stored. */
  secret: string;
}

export interface BootstrapResult {
  /** Set when a new admin key was generated and must be shown to the user now. */
  generatedSecret?: string;
}

function permissionDenied(scope: Scope): ServiceError {
  return new ServiceError("permission", `this API key lacks the '${scope}' scope`, { code: "insufficient_scope" });
}

export class AdminService {
  constructor(
    private readonly workspaces: WorkspaceStore,
    private readonly keys: ApiKeyStore,
  ) {}

  /**
   * Ensures the default workspace exists and has an admin key. `envSecret` (from
   * `PUSTAKA_API_KEY`) is registered if new; otherwise, when the workspace has no key
   * at all, one is generated and returned so the caller can print it once.
   */
  bootstrap(envSecret?: string): BootstrapResult {
    if (!this.workspaces.get(DEFAULT_WORKSPACE_ID)) {
      this.workspaces.insert({ id: DEFAULT_WORKSPACE_ID, name: "Default", createdAt: nowSeconds() });
    }
    if (envSecret) {
      if (!this.keys.findByDigest(hashSecret(envSecret))) this.insertKey(DEFAULT_WORKSPACE_ID, "PUSTAKA_API_KEY", [...ADMIN_SCOPES], envSecret, null);
      return {};
    }
    if (this.keys.countActive(DEFAULT_WORKSPACE_ID) > 0) return {};
    const secret = generateSecret();
    this.insertKey(DEFAULT_WORKSPACE_ID, "admin (generated at first start)", [...ADMIN_SCOPES], secret, null);
    return { generatedSecret: secret };
  }

  /** Resolves a presented bearer secret to its principal, or throws 401. */
  authenticate(secret: string): Principal {
    const unauthorized = new ServiceError("authentication", "invalid API key", { code: "invalid_api_key" });
    if (!secret.startsWith(SECRET_MARKER) || secret.length < PREFIX_LENGTH + 8 || secret.length > 256) throw unauthorized;
    const digest = hashSecret(secret);
    const key = this.keys.findByPrefix(secretPrefix(secret)).find((candidate) => digestsEqual(candidate.secretSha256, digest));
    if (!key) throw unauthorized;
    const now = nowSeconds();
    if (key.revokedAt !== null) throw new ServiceError("authentication", "this API key has been revoked", { code: "revoked_api_key" });
    if (key.expiresAt !== null && key.expiresAt <= now) throw new ServiceError("authentication", "this API key has expired", { code: "expired_api_key" });
    if (key.lastUsedAt === null || now - key.lastUsedAt >= TOUCH_INTERVAL_SECONDS) this.keys.touch(key.id, now);
    return { workspaceId: key.workspaceId, keyId: key.id, keyName: key.name, scopes: new Set(key.scopes) };
  }

  /** Throws 403 unless the principal holds `scope`. */
  require(principal: Principal, scope: Scope): void {
    if (!principal.scopes.has(scope)) throw permissionDenied(scope);
  }

  createWorkspace(principal: Principal, name: string): WorkspaceRecord {
    this.require(principal, "workspaces.manage");
    const record = { id: newId("ws_"), name, createdAt: nowSeconds() };
    this.workspaces.insert(record);
    return record;
  }

  listWorkspaces(principal: Principal, page: PageRequest): Page<WorkspaceRecord> {
    this.require(principal, "workspaces.manage");
    return this.workspaces.list(page);
  }

  getWorkspace(principal: Principal, workspaceId: string): WorkspaceRecord {
    this.requireWorkspaceAccess(principal, workspaceId);
    const workspace = this.workspaces.get(workspaceId);
    if (!workspace) throw notFound(`no workspace '${workspaceId}'`, "workspace_not_found");
    return workspace;
  }

  createKey(principal: Principal, workspaceId: string, input: CreateKeyInput): CreatedKey {
    this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    const scopes = [...new Set(input.scopes ?? DEFAULT_KEY_SCOPES)];
    // A key can only hand out what it holds itself: no privilege escalation.
    const excess = scopes.filter((scope) => !principal.scopes.has(scope));
    if (excess.length > 0) throw invalidRequest(`cannot grant scopes this key does not hold: ${excess.join(", ")}`, "scope_not_grantable", "scopes");
    const expiresAt = input.expiresInDays === undefined ? null : nowSeconds() + Math.round(input.expiresInDays * 86400);
    const secret = generateSecret();
    return { key: this.insertKey(workspaceId, input.name, scopes, secret, expiresAt), secret };
  }

  listKeys(principal: Principal, workspaceId: string, page: PageRequest): Page<ApiKeyRecord> {
    this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    return this.keys.list(workspaceId, page);
  }

  /** A key of the workspace (404 otherwise). */
  getKey(principal: Principal, workspaceId: string, keyId: string): ApiKeyRecord {
    this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    const key = this.keys.get(keyId);
    if (!key || key.workspaceId !== workspaceId) throw notFound(`no API key '${keyId}' in this workspace`, "api_key_not_found");
    return key;
  }

  /** Revokes a key (kept for the record, unusable from now on). Idempotent. */
  revokeKey(principal: Principal, workspaceId: string, keyId: string): ApiKeyRecord {
    this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    const key = this.keys.get(keyId);
    if (!key || key.workspaceId !== workspaceId) throw notFound(`no API key '${keyId}' in this workspace`, "api_key_not_found");
    this.keys.revoke(keyId, nowSeconds());
    return this.keys.get(keyId) ?? key;
  }

  /** Other workspaces are invisible (404, not 403) unless the key manages all workspaces. */
  private requireWorkspaceAccess(principal: Principal, workspaceId: string): void {
    if (principal.workspaceId !== workspaceId && !principal.scopes.has("workspaces.manage")) {
      throw notFound(`no workspace '${workspaceId}'`, "workspace_not_found");
    }
  }

  private insertKey(workspaceId: string, name: string, scopes: Scope[], secret: string, expiresAt: number | null): ApiKeyRecord {
    const record: ApiKeyRecord = {
      id: newId("key_"),
      workspaceId,
      name,
      prefix: secretPrefix(secret),
      secretSha256: hashSecret(secret),
      scopes,
      createdAt: nowSeconds(),
      expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    };
    this.keys.insert(record);
    return record;
  }
}
