/**
 * The local cold store: a folder apart from the primary database, `<dir>/tombstones.db`
 * (its own SQLite file: chunk rows and manifests) and `<dir>/blobs/<tombstone>/<document>`
 * (sealed originals). Folder 0700, files 0600. The database commits with
 * `synchronous = FULL` (fsync at every commit), zeroes freed pages (`secure_delete`) and
 * gives them back at once (`auto_vacuum = FULL`); blob files are fsynced, then renamed
 * into place, then their folder is fsynced. Ids are checked, never taken from a request.
 */
import { createWriteStream } from "node:fs";
import { chmod, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import BetterSqlite3 from "better-sqlite3";
import type { SealedChunk } from "./chunk-store.js";
import type { ColdContents, ColdStore } from "./cold-store.js";
import { migrate, type Database } from "./database.js";
import type { Migration } from "./migrations/index.js";
import { reclaimSpace } from "./space-reclaim.js";

const ID = /^(corp|doc)_[0-9A-Za-z]{24}$/;

/** The cold database's own schema (its `user_version`, independent of the primary's). */
export const COLD_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "cold-tombstones",
    sql: `
CREATE TABLE cold_manifests (
  tombstone_id TEXT PRIMARY KEY,
  sealed       BLOB NOT NULL
) STRICT;
CREATE TABLE cold_chunks (
  tombstone_id TEXT NOT NULL,
  id           TEXT NOT NULL,
  corpus_id    TEXT NOT NULL,
  document_id  TEXT NOT NULL,
  idx          INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset   INTEGER NOT NULL,
  page_start   INTEGER,
  page_end     INTEGER,
  token_count  INTEGER NOT NULL,
  content      BLOB NOT NULL,
  vector       BLOB NOT NULL,
  UNIQUE (tombstone_id, id)
) STRICT;
`,
  },
];

interface ColdChunkRow {
  id: string;
  corpus_id: string;
  document_id: string;
  idx: number;
  start_offset: number;
  end_offset: number;
  page_start: number | null;
  page_end: number | null;
  token_count: number;
  content: Buffer;
  vector: Buffer;
}

function checkId(id: string): string {
  if (!ID.test(id)) throw new Error("invalid tombstone or document id");
  return id;
}

/** A synchronous step as a promise: errors reject rather than throw, as the interface promises. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

async function fsyncPath(file: string): Promise<void> {
  const handle = await open(file, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Opens (creating) `<dir>/tombstones.db` with the pragmas above and its schema. */
function openColdDatabase(dir: string): Database {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = path.join(dir, "tombstones.db");
  closeSync(openSync(file, "a", 0o600));
  chmodSync(file, 0o600);
  const db = new BetterSqlite3(file);
  // Before WAL: on a new file the mode is set without a VACUUM.
  db.pragma("auto_vacuum = FULL");
  db.pragma("journal_mode = WAL");
  if ((db.pragma("auto_vacuum", { simple: true }) as number) === 0) db.exec("VACUUM");
  db.pragma("synchronous = FULL");
  db.pragma("secure_delete = ON");
  db.pragma("busy_timeout = 5000");
  migrate(db, COLD_MIGRATIONS);
  for (const extra of [`${file}-wal`, `${file}-shm`]) if (existsSync(extra)) chmodSync(extra, 0o600);
  return db;
}

export class SqliteColdStore implements ColdStore {
  readonly location: string;
  private readonly db: Database;
  private readonly blobsDir: string;
  private closed = false;

  /** Opens the cold store in `dir` (created 0700 if missing), e.g. `<data-dir>/cold`. */
  constructor(dir: string) {
    this.location = dir;
    this.db = openColdDatabase(dir);
    this.blobsDir = path.join(dir, "blobs");
  }

  putChunks(tombstoneId: string, chunks: readonly SealedChunk[]): Promise<void> {
    return settle(() => {
      checkId(tombstoneId);
      const insert = this.db.prepare(
        `INSERT OR REPLACE INTO cold_chunks (tombstone_id, id, corpus_id, document_id, idx, start_offset, end_offset, page_start, page_end, token_count, content, vector)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      this.db.transaction(() => {
        for (const c of chunks) insert.run(tombstoneId, c.id, c.corpusId, c.documentId, c.index, c.start, c.end, c.pageStart, c.pageEnd, c.tokenCount, c.content, c.vector);
      })();
    });
  }

  putManifest(tombstoneId: string, sealed: Buffer): Promise<void> {
    return settle(() => void this.db.prepare("INSERT OR REPLACE INTO cold_manifests (tombstone_id, sealed) VALUES (?, ?)").run(checkId(tombstoneId), sealed));
  }

  async putBlob(tombstoneId: string, documentId: string, source: Readable): Promise<number> {
    const dir = path.join(this.blobsDir, checkId(tombstoneId));
    const file = path.join(dir, checkId(documentId));
    const created = await mkdir(dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.part`;
    await pipeline(source, createWriteStream(partial, { mode: 0o600 }));
    await chmod(partial, 0o600);
    await fsyncPath(partial);
    await rename(partial, file);
    // The rename, and the folder when it is new, must survive a power cut too.
    await fsyncPath(dir);
    if (created !== undefined) await fsyncPath(this.blobsDir);
    return (await stat(file)).size;
  }

  readChunks(tombstoneId: string, page: { after?: string; limit: number }): Promise<SealedChunk[]> {
    return settle(() =>
      (this.db.prepare("SELECT * FROM cold_chunks WHERE tombstone_id = ? AND id > ? ORDER BY id LIMIT ?").all(checkId(tombstoneId), page.after ?? "", page.limit) as ColdChunkRow[]).map((r) => ({
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
      })),
    );
  }

  readManifest(tombstoneId: string): Promise<Buffer | undefined> {
    return settle(() => (this.db.prepare("SELECT sealed FROM cold_manifests WHERE tombstone_id = ?").get(checkId(tombstoneId)) as { sealed: Buffer } | undefined)?.sealed);
  }

  async readBlob(tombstoneId: string, documentId: string): Promise<Buffer | undefined> {
    try {
      return await readFile(path.join(this.blobsDir, checkId(tombstoneId), checkId(documentId)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async stat(tombstoneId: string): Promise<ColdContents> {
    const rows = this.db
      .prepare("SELECT COUNT(*) AS n, COALESCE(SUM(length(content) + length(vector)), 0) AS bytes FROM cold_chunks WHERE tombstone_id = ?")
      .get(checkId(tombstoneId)) as { n: number; bytes: number };
    const manifest = this.db.prepare("SELECT length(sealed) AS bytes FROM cold_manifests WHERE tombstone_id = ?").get(tombstoneId) as { bytes: number } | undefined;
    const files = await this.blobFiles(tombstoneId);
    const blobs = files.filter((f) => !f.name.endsWith(".part")).length;
    return { chunks: rows.n, blobs, bytes: rows.bytes + (manifest?.bytes ?? 0) + files.reduce((a, f) => a + f.size, 0) };
  }

  async ids(): Promise<string[]> {
    const fromDb = this.db.prepare("SELECT tombstone_id FROM cold_manifests UNION SELECT DISTINCT tombstone_id FROM cold_chunks").pluck().all() as string[];
    const fromFiles = (await readdir(this.blobsDir).catch(() => [] as string[])).filter((d) => ID.test(d));
    return [...new Set([...fromDb, ...fromFiles])].sort();
  }

  async destroy(tombstoneId: string): Promise<ColdContents> {
    const before = await this.stat(tombstoneId);
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM cold_chunks WHERE tombstone_id = ?").run(tombstoneId);
      this.db.prepare("DELETE FROM cold_manifests WHERE tombstone_id = ?").run(tombstoneId);
    })();
    await rm(path.join(this.blobsDir, tombstoneId), { recursive: true, force: true });
    return before;
  }

  compact(): Promise<void> {
    return settle(() => void reclaimSpace(this.db));
  }

  close(): Promise<void> {
    if (!this.closed) this.db.close();
    this.closed = true;
    return Promise.resolve();
  }

  /** The tombstone's files: sealed originals, and partial ones of an interrupted copy (their bytes count too). */
  private async blobFiles(tombstoneId: string): Promise<{ name: string; size: number }[]> {
    const dir = path.join(this.blobsDir, checkId(tombstoneId));
    const names = await readdir(dir).catch(() => [] as string[]);
    return Promise.all(names.map(async (name) => ({ name, size: (await stat(path.join(dir, name))).size })));
  }
}
