/** `/v1/audit` query strings in, contract objects out. */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { AuditVerification } from "../../audit/audit-service.js";

/** ISO 8601 (with a zone, or UTC) or Unix seconds → milliseconds. */
const instant = z
  .string()
  .max(40)
  .transform((value, ctx) => {
    const ms = /^\d{1,12}(\.\d+)?$/.test(value) ? Number(value) * 1000 : /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: "custom", message: "must be an ISO 8601 time (2026-11-22T10:00:00Z) or Unix seconds" });
      return z.NEVER;
    }
    return ms;
  });

const chain = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a workspace id or 'instance'");

export const AuditEventsQuerySchema = z
  .object({
    chain: chain.optional(),
    type: z.string().regex(/^[a-z_]+(\.[a-z_]+)*\.?$/, "must be an event type such as 'chat.completion' or a prefix such as 'document.'").max(64).optional(),
    actor: z.string().min(1).max(128).optional(),
    outcome: z.enum(["success", "failure"]).optional(),
    request_id: z.string().min(1).max(128).optional(),
    since: instant.optional(),
    until: instant.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    after: z.string().min(1).max(128).optional(),
    order: z.enum(["asc", "desc"]).default("desc"),
  })
  .strict();

export const AuditExportQuerySchema = z
  .object({
    chain: chain.optional(),
    format: z.enum(["jsonl", "csv"]).default("jsonl"),
    since: instant.optional(),
    until: instant.optional(),
  })
  .strict();

export const AuditVerifyQuerySchema = z.object({ chain: chain.optional() }).strict();

export const verificationObject = (v: AuditVerification): Api.AuditVerification => ({ object: "audit.verification", ...v });

export const signingKeyObject = (key: { key_id: string; public_key: string; public_key_pem: string }): Api.AuditSigningKey => ({ object: "audit.signing_key", ...key });
