/**
 * Sealed bytes in the store's database (`blob_parts`), for replicas that share Postgres and
 * no folder: an original is written once, by whichever replica took the upload, and read by
 * whichever indexes or serves it. Parts are at most 1 MiB, so no row, buffer or query is the
 * size of a whole file. A write removes what an earlier write left, and a failed write
 * removes its own parts: a blob is whole or absent. Bytes arrive sealed (the caller
 * encrypts); ids are checked, never taken from a request.
 */
import { Readable } from "node:stream";
import type { BlobStorage } from "./blob-store.js";
import type { SqlDatabase } from "./sql-database.js";

const ID = /^(corp|doc)_[0-9A-Za-z]{24}$/;
export const BLOB_PART_BYTES = 1024 * 1024;

function checkId(id: string): string {
  if (!ID.test(id)) throw new Error("invalid blob id");
  return id;
}

/** Regroups a stream's chunks into parts of exactly `size` bytes (the last one shorter). */
async function* parts(source: AsyncIterable<Buffer | Uint8Array>, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of source) {
    let buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    while (buffer.length > 0) {
      const take = Math.min(size - pendingBytes, buffer.length);
      pending.push(buffer.subarray(0, take));
      pendingBytes += take;
      buffer = buffer.subarray(take);
      if (pendingBytes === size) {
        yield Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
      }
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending);
}

export class SqlBlobStore implements BlobStorage {
  /** `owner` names what the blobs belong to; by default the corpus (cold storage passes its own). */
  constructor(
    private readonly store: SqlDatabase,
    private readonly ownerOf: (corpusId: string) => string = (corpusId) => corpusId,
  ) {}

  async write(corpusId: string, documentId: string, source: Readable | AsyncIterable<Buffer>): Promise<void> {
    await this.writeParts(this.ownerOf(checkId(corpusId)), checkId(documentId), source);
  }

  /** Writes under an owner of the caller's naming (cold storage); returns the bytes written. */
  async writeParts(owner: string, name: string, source: Readable | AsyncIterable<Buffer>): Promise<number> {
    const db = this.store.db;
    await db.deleteFrom("blob_parts").where("owner", "=", owner).where("name", "=", name).execute();
    let part = 0;
    let bytes = 0;
    try {
      for await (const data of parts(source as AsyncIterable<Buffer>, BLOB_PART_BYTES)) {
        await db.insertInto("blob_parts").values({ owner, name, part, data }).execute();
        part += 1;
        bytes += data.length;
      }
      // An empty blob still exists: one empty part says so.
      if (part === 0) await db.insertInto("blob_parts").values({ owner, name, part: 0, data: Buffer.alloc(0) }).execute();
    } catch (error) {
      await db
        .deleteFrom("blob_parts")
        .where("owner", "=", owner)
        .where("name", "=", name)
        .execute()
        .catch(() => undefined);
      throw error;
    }
    return bytes;
  }

  async read(corpusId: string, documentId: string): Promise<Buffer> {
    const found = await this.readParts(this.ownerOf(checkId(corpusId)), checkId(documentId));
    if (!found) throw Object.assign(new Error("no such blob"), { code: "ENOENT" });
    return found;
  }

  async readParts(owner: string, name: string): Promise<Buffer | undefined> {
    const chunks: Buffer[] = [];
    for await (const data of this.iterate(owner, name)) chunks.push(data);
    return chunks.length === 0 ? undefined : Buffer.concat(chunks);
  }

  async openRead(corpusId: string, documentId: string): Promise<Readable | undefined> {
    const owner = this.ownerOf(checkId(corpusId));
    const name = checkId(documentId);
    const first = await this.store.db.selectFrom("blob_parts").select("part").where("owner", "=", owner).where("name", "=", name).limit(1).executeTakeFirst();
    if (!first) return undefined;
    return Readable.from(this.iterate(owner, name));
  }

  /** The parts in order, one query each (a stream never holds a connection between reads). */
  private async *iterate(owner: string, name: string): AsyncGenerator<Buffer> {
    for (let part = 0; ; part++) {
      const row = await this.store.db.selectFrom("blob_parts").select("data").where("owner", "=", owner).where("name", "=", name).where("part", "=", part).executeTakeFirst();
      if (!row) return;
      yield row.data;
    }
  }

  async delete(corpusId: string, documentId: string): Promise<void> {
    await this.store.db.deleteFrom("blob_parts").where("owner", "=", this.ownerOf(checkId(corpusId))).where("name", "=", checkId(documentId)).execute();
  }

  async list(): Promise<{ corpusId: string; documentId: string }[]> {
    const rows = await this.store.db.selectFrom("blob_parts").select(["owner", "name"]).where("part", "=", 0).orderBy("owner").orderBy("name").execute();
    return rows.filter((r) => ID.test(r.owner) && ID.test(r.name)).map((r) => ({ corpusId: r.owner, documentId: r.name }));
  }

  async deleteCorpus(corpusId: string): Promise<void> {
    await this.store.db.deleteFrom("blob_parts").where("owner", "=", this.ownerOf(checkId(corpusId))).execute();
  }

  /** Bytes and count of the blobs under an owner. */
  async statOwner(owner: string): Promise<{ blobs: number; bytes: number }> {
    const row = await this.store.db
      .selectFrom("blob_parts")
      .select((eb) => [eb.fn.count<number>("name").distinct().as("blobs"), eb.fn.coalesce(eb.fn.sum<number>(eb.fn("length", ["data"])), eb.lit(0)).as("bytes")])
      .where("owner", "=", owner)
      .executeTakeFirstOrThrow();
    return { blobs: Number(row.blobs), bytes: Number(row.bytes) };
  }

  async deleteOwner(owner: string): Promise<void> {
    await this.store.db.deleteFrom("blob_parts").where("owner", "=", owner).execute();
  }

  async owners(prefix: string): Promise<string[]> {
    const rows = await this.store.db.selectFrom("blob_parts").select("owner").distinct().where("part", "=", 0).execute();
    return rows.map((r) => r.owner).filter((o) => o.startsWith(prefix));
  }
}
