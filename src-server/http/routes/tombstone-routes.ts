/** /v1/admin/tombstones: what deletions keep in cold storage until their retention ends, and the purge. Access rules live in the service. */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { TombstoneService } from "../../rag/tombstone-service.js";
import { principalOf } from "../authenticate.js";
import { parseWith } from "../validate.js";
import { listObject, toPageRequest } from "../wire/list-wire.js";
import { TombstoneListQuerySchema, purgeObject, tombstoneObject } from "../wire/tombstone-wire.js";

export function tombstoneRoutes(tombstones: TombstoneService): Router {
  const router = Router();
  router.get("/v1/admin/tombstones", doc({ summary: "Tombstones of deleted data and when they expire", tag: "Administration", query: TombstoneListQuerySchema }), async (req, res) => {
    const query = parseWith(TombstoneListQuerySchema, req.query, "query string");
    const result = await tombstones.list(principalOf(res.locals), toPageRequest(query), query.workspace_id);
    res.json(listObject(result.data.map((t) => tombstoneObject(t)), result.hasMore));
  });
  /** Runs the purge now (it also runs hourly): destroys expired tombstones and the keys nothing needs any more. */
  router.post("/v1/admin/tombstones/purge", doc({ summary: "Destroy expired tombstones now", tag: "Administration" }), async (_req, res) => {
    // What it destroyed is also reported through the service's onPurged (server.ts), like every purge.
    res.json(purgeObject(await tombstones.purgeNow(principalOf(res.locals))));
  });
  return router;
}
