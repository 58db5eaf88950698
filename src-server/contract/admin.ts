/** The API contract: workspaces, API keys, the caller, browser sessions. Types only. */

export type Scope = "inference" | "rag.read" | "rag.write" | "keys.manage" | "workspaces.manage" | "audit.read" | "metrics.read";

export interface Workspace {
  id: string;
  object: "workspace";
  name: string;
  /** The named rate-limit tier its requests and tokens are counted against. */
  rate_limit_tier: string;
  created_at: number;
}

export interface ApiKey {
  id: string;
  object: "api_key";
  workspace_id: string;
  name: string;
  /** The visible start of the secret (`psk-abcd1234`), to tell keys apart. */
  prefix: string;
  scopes: Scope[];
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** The named rate-limit tier of this key (its workspace's applies too). */
  rate_limit_tier: string;
}

/** `POST /v1/admin/workspaces/{id}/api_keys` response: the secret, shown this once. */
export interface CreatedApiKey extends ApiKey {
  secret: string;
}

export interface CreateApiKeyRequest {
  name: string;
  scopes?: Scope[];
  expires_in_days?: number;
}

/** `GET /v1/me`: who the credential belongs to. */
export interface Principal {
  object: "principal";
  workspace_id: string;
  key_id: string;
  key_name: string;
  scopes: Scope[];
  /** The limits of the caller's key and workspace, and what is left of them this minute. */
  rate_limits: { key: RateLimitState; workspace: RateLimitState };
}

/** A scope's limits per minute (0 = unlimited) and what is left (null when unlimited). */
export interface RateLimitState {
  tier: string;
  requests_per_minute: number;
  tokens_per_minute: number;
  remaining_requests: number | null;
  remaining_tokens: number | null;
  /** Unix seconds when everything counted now has left the one-minute window. */
  resets_at: number;
}

/** `PATCH /v1/admin/workspaces/{id}` and `…/api_keys/{key_id}`: a named tier from the configuration, or null for the default. */
export interface PatchRateLimitTierRequest {
  rate_limit_tier: string | null;
}

/** `POST /v1/session` (browser mode): the sign-in token from the link's `#signin=` fragment. */
export interface SignInRequest {
  token: string;
}

export interface Session {
  object: "session";
  expires_at: number;
  principal: Principal;
}

/**
 * A service account: a non-human identity of a workspace for batch jobs and other
 * services, which gets short-lived access tokens from `POST /v1/oauth/token` (OAuth 2.0
 * client credentials with its secret, or a JWT assertion signed by its own key, RFC 7523).
 */
export interface ServiceAccount {
  id: string;
  object: "service_account";
  workspace_id: string;
  name: string;
  /** The OAuth `client_id` (equal to `id`). */
  client_id: string;
  /** The most a token may carry; a token request may ask for fewer. */
  scopes: Scope[];
  /** How it proves itself: a client secret, a registered public key, or both. */
  auth_methods: ("client_secret" | "private_key_jwt")[];
  /** The visible start of its current secret, null without one. */
  secret_prefix: string | null;
  /** The registered public key (JWK), null without one. */
  public_key: Record<string, unknown> | null;
  /** Unix seconds; a disabled account's tokens stop working at once. */
  disabled_at: number | null;
  created_at: number;
  last_token_at: number | null;
  rate_limit_tier: string;
}

/** `POST /v1/admin/workspaces/{id}/service_accounts`. Without `public_key`, a client secret is made and returned once. */
export interface CreateServiceAccountRequest {
  name: string;
  scopes?: Scope[];
  /** A public JWK (Ed25519, P-256 or RSA ≥ 2048) whose private half signs the account's assertions. */
  public_key?: Record<string, unknown>;
}

/** The create (and `POST …/{sa}/secret` rotate) response: the secret shown this once (null when the account uses a key only). */
export interface CreatedServiceAccount extends ServiceAccount {
  client_secret: string | null;
}

/** `PATCH /v1/admin/workspaces/{id}/service_accounts/{sa}`: every field optional. */
export interface PatchServiceAccountRequest {
  name?: string;
  scopes?: Scope[];
  disabled?: boolean;
  public_key?: Record<string, unknown> | null;
  rate_limit_tier?: string | null;
}

/** `POST /v1/oauth/token` success (RFC 6749 §5.1). Errors use RFC 6749 §5.2: `{ error, error_description }`. */
export interface OAuthTokenResponse {
  access_token: string;
  token_type: "Bearer";
  /** Seconds. */
  expires_in: number;
  scope: string;
}

/** `GET /v1/admin/security`: how this instance protects data and proves its records (workspaces.manage). */
export interface SecurityStatus {
  object: "security";
  key_provider: {
    /** `local-file` (development and single-user machines) or `pkcs11` (an HSM). */
    kind: string;
    /** The current key-encryption key's description, e.g. `pkcs11:token/label:…`. */
    id: string;
    /** False for the local key file: the KEK sits on this machine's disk. */
    hardware_backed: boolean;
  };
  audit: { signing_key_id: string; chains: number; entries: number };
  oauth: { issuer: string; signing_key_ids: string[]; token_ttl_seconds: number };
  transport: { tls: boolean; host: string; loopback_only: boolean };
}
