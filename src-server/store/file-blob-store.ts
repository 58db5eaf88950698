/**
 * Sealed bytes of files uploaded through `/v1/files`, by file id: files in
 * `<data-dir>/openai-files/` on a lone server, parts in `blob_parts` (owner `openai-files`)
 * when replicas share Postgres. Kept apart from the corpora's originals (`BlobStore`), whose
 * start-up sweep removes anything that is not a document. This store never sees plaintext
 * (`rag/vector-stores/file-service.ts` seals what it writes); paths are built only from ids
 * this server generated and checked.
 */
import { mkdir, open, readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { SqlBlobStore } from "./sql-blob-store.js";
import type { SqlDatabase } from "./sql-database.js";

const FILE_ID = /^file-[0-9A-Za-z]{24}$/;
/** The `blob_parts` owner of every uploaded file's parts. */
export const FILE_BLOB_OWNER = "openai-files";

function checkId(id: string): string {
  if (!FILE_ID.test(id)) throw new Error("invalid file id");
  return id;
}

export interface FileBlobStorage {
  /** Streams `source` into the blob; rejects when `source` or the storage fails (the caller then deletes). */
  write(fileId: string, source: AsyncIterable<Buffer>): Promise<void>;
  /** The stored (sealed) bytes, or undefined when there is no such blob. */
  read(fileId: string): Promise<Buffer | undefined>;
  delete(fileId: string): Promise<void>;
  /** Every stored file's id (names that are not file ids are ignored). */
  list(): Promise<string[]>;
}

export class FolderFileBlobs implements FileBlobStorage {
  constructor(private readonly root: string) {}

  async write(fileId: string, source: AsyncIterable<Buffer>): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    // Opened before any byte flows, so a failed upload's clean-up never races a lazy open.
    const handle = await open(path.join(this.root, checkId(fileId)), "w", 0o600);
    await pipeline(source as Readable, handle.createWriteStream());
  }

  async read(fileId: string): Promise<Buffer | undefined> {
    try {
      return await readFile(path.join(this.root, checkId(fileId)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async delete(fileId: string): Promise<void> {
    await rm(path.join(this.root, checkId(fileId)), { force: true });
  }

  async list(): Promise<string[]> {
    return (await readdir(this.root).catch(() => [] as string[])).filter((name) => FILE_ID.test(name));
  }
}

export class SqlFileBlobs implements FileBlobStorage {
  private readonly parts: SqlBlobStore;

  constructor(private readonly store: SqlDatabase) {
    this.parts = new SqlBlobStore(store);
  }

  async write(fileId: string, source: AsyncIterable<Buffer>): Promise<void> {
    await this.parts.writeParts(FILE_BLOB_OWNER, checkId(fileId), source);
  }

  read(fileId: string): Promise<Buffer | undefined> {
    return this.parts.readParts(FILE_BLOB_OWNER, checkId(fileId));
  }

  async delete(fileId: string): Promise<void> {
    await this.store.db.deleteFrom("blob_parts").where("owner", "=", FILE_BLOB_OWNER).where("name", "=", checkId(fileId)).execute();
  }

  async list(): Promise<string[]> {
    const rows = await this.store.db.selectFrom("blob_parts").select("name").where("owner", "=", FILE_BLOB_OWNER).where("part", "=", 0).orderBy("name").execute();
    return rows.map((r) => r.name).filter((name) => FILE_ID.test(name));
  }
}
