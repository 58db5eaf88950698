/**
 * Cold storage for tombstones in the store's database (`cold_manifests`, `cold_chunks`, and
 * sealed originals in `blob_parts` under `cold:<tombstone>`), for replicas sharing Postgres:
 * a tombstone made on one replica is restored or purged by any other. Same contract as
 * `SqliteColdStore` (cold-store.ts): idempotent writes, durable when they resolve (Postgres
 * commits), never plaintext. Space freed by `destroy` is Postgres's to reuse; `compact`
 * runs VACUUM on the cold tables so destroyed tuples are not left for autovacuum's next turn.
 */
import type { Readable } from "node:stream";
import { sql } from "kysely";
import type { SealedChunk } from "./chunk-store.js";
import type { ColdContents, ColdStore } from "./cold-store.js";
import { SqlBlobStore } from "./sql-blob-store.js";
import type { SqlDatabase } from "./sql-database.js";

const ID = /^(corp|doc)_[0-9A-Za-z]{24}$/;
const COLD = "cold:";
/** Rows per multi-row insert (13 columns: far below either database's parameter limit). */
const INSERT_BATCH = 500;

function checkId(id: string): string {
  if (!ID.test(id)) throw new Error("invalid tombstone or document id");
  return id;
}

export class SqlColdStore implements ColdStore {
  readonly location: string;
  private readonly blobs: SqlBlobStore;

  constructor(private readonly store: SqlDatabase) {
    this.location = `${store.location} (cold tables)`;
    this.blobs = new SqlBlobStore(store);
  }

  async putChunks(tombstoneId: string, chunks: readonly SealedChunk[]): Promise<void> {
    checkId(tombstoneId);
    if (chunks.length === 0) return;
    await this.store.transaction(async (tx) => {
      for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
        const rows = chunks.slice(i, i + INSERT_BATCH).map((c) => ({
          tombstone_id: tombstoneId,
          id: c.id,
          corpus_id: c.corpusId,
          document_id: c.documentId,
          idx: c.index,
          start_offset: c.start,
          end_offset: c.end,
          page_start: c.pageStart,
          page_end: c.pageEnd,
          token_count: c.tokenCount,
          content: c.content,
          vector: c.vector,
        }));
        await tx
          .insertInto("cold_chunks")
          .values(rows)
          .onConflict((oc) =>
            oc.columns(["tombstone_id", "id"]).doUpdateSet((eb) => ({
              corpus_id: eb.ref("excluded.corpus_id"),
              document_id: eb.ref("excluded.document_id"),
              idx: eb.ref("excluded.idx"),
              start_offset: eb.ref("excluded.start_offset"),
              end_offset: eb.ref("excluded.end_offset"),
              page_start: eb.ref("excluded.page_start"),
              page_end: eb.ref("excluded.page_end"),
              token_count: eb.ref("excluded.token_count"),
              content: eb.ref("excluded.content"),
              vector: eb.ref("excluded.vector"),
            })),
          )
          .execute();
      }
    });
  }

  async putManifest(tombstoneId: string, sealed: Buffer): Promise<void> {
    await this.store.db
      .insertInto("cold_manifests")
      .values({ tombstone_id: checkId(tombstoneId), sealed })
      .onConflict((oc) => oc.column("tombstone_id").doUpdateSet({ sealed }))
      .execute();
  }

  putBlob(tombstoneId: string, documentId: string, source: Readable): Promise<number> {
    return this.blobs.writeParts(COLD + checkId(tombstoneId), checkId(documentId), source);
  }

  async readChunks(tombstoneId: string, page: { after?: string; limit: number }): Promise<SealedChunk[]> {
    const rows = await this.store.db
      .selectFrom("cold_chunks")
      .selectAll()
      .where("tombstone_id", "=", checkId(tombstoneId))
      .where("id", ">", page.after ?? "")
      .orderBy("id")
      .limit(page.limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      corpusId: r.corpus_id,
      documentId: r.document_id,
      index: r.idx,
      start: r.start_offset,
      end: r.end_offset,
      pageStart: r.page_start,
      pageEnd: r.page_end,
      tokenCount: r.token_count,
      content: r.content,
      vector: r.vector,
    }));
  }

  async readManifest(tombstoneId: string): Promise<Buffer | undefined> {
    const row = await this.store.db.selectFrom("cold_manifests").select("sealed").where("tombstone_id", "=", checkId(tombstoneId)).executeTakeFirst();
    return row?.sealed;
  }

  readBlob(tombstoneId: string, documentId: string): Promise<Buffer | undefined> {
    return this.blobs.readParts(COLD + checkId(tombstoneId), checkId(documentId));
  }

  async stat(tombstoneId: string): Promise<ColdContents> {
    checkId(tombstoneId);
    const chunks = await this.store.db
      .selectFrom("cold_chunks")
      .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.coalesce(eb.fn.sum<number>(sql`length(content) + length(vector)`), eb.lit(0)).as("bytes")])
      .where("tombstone_id", "=", tombstoneId)
      .executeTakeFirstOrThrow();
    const manifest = await this.store.db
      .selectFrom("cold_manifests")
      .select((eb) => eb.fn<number>("length", ["sealed"]).as("bytes"))
      .where("tombstone_id", "=", tombstoneId)
      .executeTakeFirst();
    const blobs = await this.blobs.statOwner(COLD + tombstoneId);
    return { chunks: Number(chunks.n), blobs: blobs.blobs, bytes: Number(chunks.bytes) + Number(manifest?.bytes ?? 0) + blobs.bytes };
  }

  async ids(): Promise<string[]> {
    const manifests = await this.store.db.selectFrom("cold_manifests").select("tombstone_id").execute();
    const chunks = await this.store.db.selectFrom("cold_chunks").select("tombstone_id").distinct().execute();
    const blobs = (await this.blobs.owners(COLD)).map((o) => o.slice(COLD.length));
    return [...new Set([...manifests.map((r) => r.tombstone_id), ...chunks.map((r) => r.tombstone_id), ...blobs])].filter((id) => ID.test(id)).sort();
  }

  async destroy(tombstoneId: string): Promise<ColdContents> {
    const before = await this.stat(tombstoneId);
    await this.store.transaction(async (tx) => {
      await tx.deleteFrom("cold_chunks").where("tombstone_id", "=", tombstoneId).execute();
      await tx.deleteFrom("cold_manifests").where("tombstone_id", "=", tombstoneId).execute();
      await tx.deleteFrom("blob_parts").where("owner", "=", COLD + tombstoneId).execute();
    });
    return before;
  }

  async compact(): Promise<void> {
    // VACUUM cannot run in a transaction; on SQLite the primary database reclaims its own space.
    if (this.store.dialect === "postgres") await sql`VACUUM cold_chunks, cold_manifests, blob_parts`.execute(this.store.db);
  }

  async close(): Promise<void> {
    // The database belongs to the server, which closes it.
  }
}
