/** Workspaces and API keys on the wire. Secrets appear only in the creation response. */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { ScopedState } from "../../admin/rate-limit-service.js";
import { SCOPES, type Principal } from "../../domain/scopes.js";
import type { ApiKeyRecord } from "../../store/api-key-store.js";
import type { WorkspaceRecord } from "../../store/workspace-store.js";

export const CreateWorkspaceSchema = z.object({ name: z.string().trim().min(1).max(200) }).strict();

export const CreateKeySchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z.array(z.enum(SCOPES)).min(1).optional(),
    expires_in_days: z.number().positive().max(3650).optional(),
  })
  .strict();

export const workspaceObject = (w: WorkspaceRecord, tier: string): Api.Workspace => ({ id: w.id, object: "workspace", name: w.name, rate_limit_tier: tier, created_at: w.createdAt });

export const apiKeyObject = (k: ApiKeyRecord, tier: string): Api.ApiKey => ({
  id: k.id,
  object: "api_key",
  workspace_id: k.workspaceId,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes,
  created_at: k.createdAt,
  expires_at: k.expiresAt,
  revoked_at: k.revokedAt,
  last_used_at: k.lastUsedAt,
  rate_limit_tier: tier,
});

export const PatchTierSchema = z.object({ rate_limit_tier: z.string().min(1).max(40).nullable() }).strict();

const limitView = (s: ScopedState, now: number): Api.RateLimitState => ({
  tier: s.tier,
  requests_per_minute: s.limit.requestsPerMinute,
  tokens_per_minute: s.limit.tokensPerMinute,
  remaining_requests: s.limit.requestsPerMinute > 0 ? Math.max(0, s.limit.requestsPerMinute - s.usedRequests) : null,
  remaining_tokens: s.limit.tokensPerMinute > 0 ? Math.max(0, s.limit.tokensPerMinute - s.usedTokens) : null,
  resets_at: Math.ceil(Math.max(now, s.resetAt) / 1000),
});

/** Both scopes' limits and what is left of them (`GET /v1/me`). */
export const rateLimitsObject = (states: ScopedState[], now = Date.now()): Api.Principal["rate_limits"] => ({
  key: limitView(states.find((s) => s.scope === "key")!, now),
  workspace: limitView(states.find((s) => s.scope === "workspace")!, now),
});

export const createdApiKeyObject = (k: ApiKeyRecord, tier: string, secret: string): Api.CreatedApiKey => ({ ...apiKeyObject(k, tier), secret });

export const principalObject = (p: Principal, limits: ScopedState[]): Api.Principal => ({
  object: "principal",
  workspace_id: p.workspaceId,
  key_id: p.keyId,
  key_name: p.keyName,
  scopes: [...p.scopes],
  rate_limits: rateLimitsObject(limits),
});
