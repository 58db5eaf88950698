/** The API contract: workspaces, API keys, the caller, browser sessions. Types only. */

export type Scope = "inference" | "rag.read" | "rag.write" | "keys.manage" | "workspaces.manage" | "audit.read";

export interface Workspace {
  id: string;
  object: "workspace";
  name: string;
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
