/** Workspaces and API keys on the wire. Secrets appear only in the creation response. */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
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

export const workspaceObject = (w: WorkspaceRecord): Api.Workspace => ({ id: w.id, object: "workspace", name: w.name, created_at: w.createdAt });

export const apiKeyObject = (k: ApiKeyRecord): Api.ApiKey => ({
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
});

export const createdApiKeyObject = (k: ApiKeyRecord, secret: string): Api.CreatedApiKey => ({ ...apiKeyObject(k), secret });

export const principalObject = (p: Principal): Api.Principal => ({ object: "principal", workspace_id: p.workspaceId, key_id: p.keyId, key_name: p.keyName, scopes: [...p.scopes] });
