/** Service accounts and OAuth on the wire. Client secrets appear only in create and rotate responses. */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import { SCOPES } from "../../domain/scopes.js";
import type { ServiceAccountRecord } from "../../store/service-account-store.js";

const jwk = z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 8192, "a JWK of at most 8 KB");

export const CreateServiceAccountSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z.array(z.enum(SCOPES)).min(1).optional(),
    public_key: jwk.optional(),
  })
  .strict();

export const PatchServiceAccountSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    scopes: z.array(z.enum(SCOPES)).min(1).optional(),
    disabled: z.boolean().optional(),
    public_key: jwk.nullable().optional(),
    rate_limit_tier: z.string().min(1).max(40).nullable().optional(),
  })
  .strict()
  .refine((v) => Object.keys(v).length > 0, "give at least one field to change");

export const serviceAccountObject = (a: ServiceAccountRecord, tier: string): Api.ServiceAccount => ({
  id: a.id,
  object: "service_account",
  workspace_id: a.workspaceId,
  name: a.name,
  client_id: a.id,
  scopes: a.scopes,
  auth_methods: [...(a.secretSha256 ? (["client_secret"] as const) : []), ...(a.publicJwk ? (["private_key_jwt"] as const) : [])],
  secret_prefix: a.secretPrefix,
  public_key: a.publicJwk,
  disabled_at: a.disabledAt,
  created_at: a.createdAt,
  last_token_at: a.lastTokenAt,
  rate_limit_tier: tier,
});

export const createdServiceAccountObject = (a: ServiceAccountRecord, tier: string, secret: string | null): Api.CreatedServiceAccount => ({ ...serviceAccountObject(a, tier), client_secret: secret });
