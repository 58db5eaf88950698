/** How this instance protects data and proves its records: `GET /v1/admin/security`, and token signing key rotation (workspaces.manage). */
import type { ApiClient } from "./client.js";
import type { SecurityStatus } from "./contract.js";

export const getSecurityStatus = (c: ApiClient, signal?: AbortSignal) => c.json<SecurityStatus>("GET", "/v1/admin/security", { signal });

/** `POST /v1/admin/oauth/rotate-signing-key`: the new key's id and every key id still published (newest first). */
export interface RotatedSigningKey {
  object: "oauth.signing_key";
  kid: string;
  published: string[];
}

/** Makes a new access-token signing key; the previous keys stay published until the tokens they signed expire. */
export const rotateTokenSigningKey = (c: ApiClient) => c.json<RotatedSigningKey>("POST", "/v1/admin/oauth/rotate-signing-key");
