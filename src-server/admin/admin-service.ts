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
   * at all, one is generated and returned so the caller can print it once. Safe when
   * several replicas start together on one database: one creates, the others find it.
   */
  async bootstrap(envSecret?: string): Promise<BootstrapResult> {
    await this.workspaces.insertIfAbsent({ id: DEFAULT_WORKSPACE_ID, name: "Default", createdAt: nowSeconds() });
    if (envSecret) {
      if (!(await this.keys.findByDigest(hashSecret(envSecret)))) await this.keys.insertIfSecretAbsent(this.keyRecord(DEFAULT_WORKSPACE_ID, "PUSTAKA_API_KEY", [...ADMIN_SCOPES], envSecret, null));
      return {};
    }
    if ((await this.keys.countActive(DEFAULT_WORKSPACE_ID)) > 0) return {};
    const secret = generateSecret();
    const created = await this.keys.insertIfNoneActive(this.keyRecord(DEFAULT_WORKSPACE_ID, "admin (generated at first start)", [...ADMIN_SCOPES], secret, null));
    return created ? { generatedSecret: secret } : {};
  }

  /** Resolves a presented bearer secret to its principal, or throws 401. */
  async authenticate(secret: string): Promise<Principal> {
    const unauthorized = new ServiceError("authentication", "invalid API key", { code: "invalid_api_key" });
    if (!secret.startsWith(SECRET_MARKER) || secret.length < PREFIX_LENGTH + 8 || secret.length > 256) throw unauthorized;
    const digest = hashSecret(secret);
    const key = (await this.keys.findByPrefix(secretPrefix(secret))).find((candidate) => digestsEqual(candidate.secretSha256, digest));
    if (!key) throw unauthorized;
    const now = nowSeconds();
    if (key.revokedAt !== null) throw new ServiceError("authentication", "this API key has been revoked", { code: "revoked_api_key" });
    if (key.expiresAt !== null && key.expiresAt <= now) throw new ServiceError("authentication", "this API key has expired", { code: "expired_api_key" });
    if (key.lastUsedAt === null || now - key.lastUsedAt >= TOUCH_INTERVAL_SECONDS) await this.keys.touch(key.id, now);
    return { workspaceId: key.workspaceId, keyId: key.id, keyName: key.name, scopes: new Set(key.scopes) };
  }

  /** Throws 403 unless the principal holds `scope`. */
  require(principal: Principal, scope: Scope): void {
    if (!principal.scopes.has(scope)) throw permissionDenied(scope);
  }

  async createWorkspace(principal: Principal, name: string): Promise<WorkspaceRecord> {
    this.require(principal, "workspaces.manage");
    const record = { id: newId("ws_"), name, createdAt: nowSeconds() };
    await this.workspaces.insert(record);
    return record;
  }

  async listWorkspaces(principal: Principal, page: PageRequest): Promise<Page<WorkspaceRecord>> {
    this.require(principal, "workspaces.manage");
    return this.workspaces.list(page);
  }

  async getWorkspace(principal: Principal, workspaceId: string): Promise<WorkspaceRecord> {
    this.requireWorkspaceAccess(principal, workspaceId);
    const workspace = await this.workspaces.get(workspaceId);
    if (!workspace) throw notFound(`no workspace '${workspaceId}'`, "workspace_not_found");
    return workspace;
  }

  async createKey(principal: Principal, workspaceId: string, input: CreateKeyInput): Promise<CreatedKey> {
    await this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    const scopes = [...new Set(input.scopes ?? DEFAULT_KEY_SCOPES)];
    // A key can only hand out what it holds itself: no privilege escalation.
    const excess = scopes.filter((scope) => !principal.scopes.has(scope));
    if (excess.length > 0) throw invalidRequest(`cannot grant scopes this key does not hold: ${excess.join(", ")}`, "scope_not_grantable", "scopes");
    const expiresAt = input.expiresInDays === undefined ? null : nowSeconds() + Math.round(input.expiresInDays * 86400);
    const secret = generateSecret();
    const key = this.keyRecord(workspaceId, input.name, scopes, secret, expiresAt);
    await this.keys.insert(key);
    return { key, secret };
  }

  async listKeys(principal: Principal, workspaceId: string, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    await this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    return this.keys.list(workspaceId, page);
  }

  /** A key of the workspace (404 otherwise). */
  async getKey(principal: Principal, workspaceId: string, keyId: string): Promise<ApiKeyRecord> {
    await this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    const key = await this.keys.get(keyId);
    if (!key || key.workspaceId !== workspaceId) throw notFound(`no API key '${keyId}' in this workspace`, "api_key_not_found");
    return key;
  }

  /** Revokes a key (kept for the record, unusable from now on). Idempotent. */
  async revokeKey(principal: Principal, workspaceId: string, keyId: string): Promise<ApiKeyRecord> {
    await this.getWorkspace(principal, workspaceId);
    this.require(principal, "keys.manage");
    const key = await this.keys.get(keyId);
    if (!key || key.workspaceId !== workspaceId) throw notFound(`no API key '${keyId}' in this workspace`, "api_key_not_found");
    await this.keys.revoke(keyId, nowSeconds());
    return (await this.keys.get(keyId)) ?? key;
  }

  /** Other workspaces are invisible (404, not 403) unless the key manages all workspaces. */
  private requireWorkspaceAccess(principal: Principal, workspaceId: string): void {
    if (principal.workspaceId !== workspaceId && !principal.scopes.has("workspaces.manage")) {
      throw notFound(`no workspace '${workspaceId}'`, "workspace_not_found");
    }
  }

  private keyRecord(workspaceId: string, name: string, scopes: Scope[], secret: string, expiresAt: number | null): ApiKeyRecord {
    return {
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
  }
}
