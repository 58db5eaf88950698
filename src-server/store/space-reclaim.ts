/**
 * Giving deleted pages back: with `secure_delete` on, SQLite zeroes what a DELETE frees;
 * these helpers make sure the freed pages also leave the files. The database must use
 * `auto_vacuum = INCREMENTAL` (or FULL), which only takes effect through a VACUUM once
 * a database has tables; `ensureIncrementalVacuum` does that conversion once.
 */
import type { Database } from "./database.js";

const INCREMENTAL = 2;

/**
 * Switches the database to incremental auto-vacuum if it is not already (FULL is kept).
 * On a database that already has pages this runs one VACUUM (about 0.6 s per 100 MB
 * here), once; later opens find the mode set and do nothing.
 */
export function ensureIncrementalVacuum(db: Database): void {
  if ((db.pragma("auto_vacuum", { simple: true }) as number) !== 0) return;
  db.pragma("auto_vacuum = INCREMENTAL");
  if ((db.pragma("auto_vacuum", { simple: true }) as number) !== INCREMENTAL) db.exec("VACUUM");
}

export interface ReclaimResult {
  /** Free pages handed back to the file system (the file shrank by this many pages). */
  freedPages: number;
  /** Whether the write-ahead log was emptied (false when a reader held it). */
  walTruncated: boolean;
}

/**
 * Returns free pages to the file system (the file shrinks) and empties the write-ahead
 * log into the database (the log file is truncated to zero bytes), so page images of
 * deleted rows linger in neither file. Cost is proportional to what was freed.
 */
export function reclaimSpace(db: Database): ReclaimResult {
  const freedPages = db.pragma("freelist_count", { simple: true }) as number;
  // exec, not a prepared statement: incremental_vacuum frees one page per step.
  if (freedPages > 0) db.exec("PRAGMA incremental_vacuum");
  const [checkpoint] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number; log: number; checkpointed: number }[];
  return { freedPages, walTruncated: checkpoint === undefined || checkpoint.busy === 0 };
}
