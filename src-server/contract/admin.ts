/** The API contract: workspaces, API keys, the caller, browser sessions. Types only. */

export type Scope = "inference" | "rag.read" | "rag.write" | "keys.manage" | "workspaces.manage" | "audit.read";

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
