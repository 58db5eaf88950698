/** Permissions an API key can carry. */
export const SCOPES = ["inference", "rag.read", "rag.write", "keys.manage", "workspaces.manage", "audit.read", "metrics.read"] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes of a key created without an explicit list: use the service, manage nothing. */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = ["inference", "rag.read", "rag.write"];

/** Scopes of the bootstrap admin key of the default workspace. */
export const ADMIN_SCOPES: readonly Scope[] = SCOPES;

/** Who is calling: resolved from the bearer key on every request. */
export interface Principal {
  /** What authenticated: an API key (the default), a workbench session or a service account's token. */
  kind?: "api_key" | "session" | "service_account";
  workspaceId: string;
  keyId: string;
  keyName: string;
  scopes: ReadonlySet<Scope>;
}
