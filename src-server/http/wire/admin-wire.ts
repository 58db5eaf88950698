/** Workspaces and API keys on the wire. Secrets appear only in the creation response. */
import { z } from "zod";
import { SCOPES } from "../../admin/scopes.js";
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

export const workspaceObject = (w: WorkspaceRecord) => ({ id: w.id, object: "workspace" as const, name: w.name, created_at: w.createdAt });

export const apiKeyObject = (k: ApiKeyRecord) => ({
  id: k.id,
  object: "api_key" as const,
  workspace_id: k.workspaceId,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes,
  created_at: k.createdAt,
  expires_at: k.expiresAt,
  revoked_at: k.revokedAt,
  last_used_at: k.lastUsedAt,
});
