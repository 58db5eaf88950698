/** /v1/audit: list, export (streamed, signed manifest last), verify, and the signing key. */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { AuditService } from "../../audit/audit-service.js";
import { principalOf } from "../authenticate.js";
import { parseWith } from "../validate.js";
import { listObject } from "../wire/list-wire.js";
import { AuditEventsQuerySchema, AuditExportQuerySchema, AuditVerifyQuerySchema, signingKeyObject, verificationObject } from "../wire/audit-wire.js";

export function auditRoutes(audit: AuditService): Router {
  const router = Router();
  router.get("/v1/audit/events", doc({ summary: "Audit events, newest first, filtered", tag: "Audit", query: AuditEventsQuerySchema }), async (req, res) => {
    const q = parseWith(AuditEventsQuerySchema, req.query, "query string");
    const page = await audit.list(principalOf(res.locals), { chain: q.chain, type: q.type, actor: q.actor, outcome: q.outcome, requestId: q.request_id, sinceMs: q.since, untilMs: q.until, limit: q.limit, order: q.order, after: q.after });
    res.json(listObject(page.data, page.hasMore));
  });
  router.get("/v1/audit/export", doc({ summary: "Export the audit log (JSON lines or CSV) with a signed manifest", tag: "Audit", query: AuditExportQuerySchema, response: { contentType: "application/x-ndjson" } }), async (req, res) => {
    const q = parseWith(AuditExportQuerySchema, req.query, "query string");
    const lines = audit.export(principalOf(res.locals), { chain: q.chain, format: q.format, sinceMs: q.since, untilMs: q.until });
    // The first batch is read before the headers go out, so a refused chain is still a clean error.
    const first = await lines.next();
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    res.setHeader("Content-Type", q.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
    res.setHeader("Content-Disposition", `attachment; filename="pustaka-audit-${stamp}.${q.format}"`);
    res.setHeader("Cache-Control", "no-store");
    if (!first.done) res.write(first.value);
    for await (const chunk of lines) {
      if (res.destroyed) {
        await lines.return(undefined);
        return;
      }
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
    }
    res.end();
  });
  router.get("/v1/audit/verify", doc({ summary: "Verify the audit chain's hashes and signatures", tag: "Audit", query: AuditVerifyQuerySchema }), async (req, res) => {
    const q = parseWith(AuditVerifyQuerySchema, req.query, "query string");
    res.json(verificationObject(await audit.verify(principalOf(res.locals), q.chain)));
  });
  router.get("/v1/audit/signing-key", doc({ summary: "The public key audit exports are signed with", tag: "Audit" }), (_req, res) => {
    principalOf(res.locals);
    res.json(signingKeyObject(audit.signingKey()));
  });
  return router;
}
