/** Tombstones of deleted corpora and documents on the wire (`/v1/admin/tombstones`, delete responses). */
import type * as Api from "../../contract/index.js";
import type { PurgeResult } from "../../rag/tombstone-service.js";
import type { TombstoneRecord } from "../../store/tombstone-catalog.js";
import { ListQuerySchema } from "./list-wire.js";
import { z } from "zod";

/** The list's query: paging, and optionally one workspace (administrators of every workspace). */
export const TombstoneListQuerySchema = ListQuerySchema.extend({ workspace_id: z.string().min(1).max(128).optional() }).strict();

const STATUS: Record<TombstoneRecord["status"], Api.TombstoneStatus> = { moving: "deleting", retained: "retained", purging: "purging", purged: "purged" };

export const tombstoneObject = (t: TombstoneRecord, status: Api.TombstoneStatus = STATUS[t.status]): Api.Tombstone => ({
  id: t.id,
  object: "rag.tombstone",
  kind: t.kind,
  workspace_id: t.workspaceId,
  corpus_id: t.corpusId,
  document_id: t.documentId,
  status,
  documents: t.documents,
  chunks: t.chunks,
  bytes: t.bytes,
  deleted_at: t.deletedAt,
  expires_at: t.expiresAt,
});

export const purgeObject = (result: PurgeResult): Api.TombstonePurge => ({
  object: "rag.tombstone.purge",
  purged_at: result.purgedAt,
  purged: result.tombstones.map((t) => tombstoneObject(t, "purged")),
  keys_destroyed: result.keysDestroyed,
});
