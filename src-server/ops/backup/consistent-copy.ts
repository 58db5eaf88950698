/**
 * The consistent part of a backup (see create-backup.ts): the primary database as of one
 * instant with every original it references, then the cold store limited to the tombstones
 * that snapshot catalogues.
 */
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { copyHashed, hashFile, inPool, type Copied } from "./backup-files.js";
import { BackupError, type ManifestFile } from "./backup-manifest.js";
import { snapshotSqlite } from "./sqlite-snapshot.js";

/** Database snapshots taken at most when documents keep being deleted while their originals are copied. */
const MAX_SNAPSHOTS = 5;
/** Originals copied at once. */
const COPY_CONCURRENCY = 4;

/** Records a file of the backup in its manifest. */
export type AddFile = (rel: string, copied: Copied, role: ManifestFile["role"]) => void;

/** What the primary snapshot says, read from the copy. */
export interface Snapshot {
  documents: { corpus_id: string; id: string }[];
  files: string[];
  tombstones: string[];
  counts: Record<string, number>;
  corpusModels: string[];
  schemaVersion: number;
}

/** The primary snapshot and every original it references (step 3 of create-backup.ts's comment). */
export async function snapshotWithOriginals(dataDir: string, partial: string, add: AddFile, signal: AbortSignal | undefined, say: (m: string) => void) {
  const copied = new Map<string, Copied>();
  let vanished = new Set<string>();
  for (let attempt = 1; attempt <= MAX_SNAPSHOTS; attempt++) {
    signal?.throwIfAborted();
    const dbCopy = path.join(partial, "data", "pustaka.db");
    await rm(dbCopy, { force: true });
    const snapshot = await snapshotPrimary(dataDir, dbCopy);
    const wanted = new Map<string, string>();
    for (const d of snapshot.documents) wanted.set(`data/blobs/${d.corpus_id}/${d.id}`, path.join(dataDir, "blobs", d.corpus_id, d.id));
    for (const f of snapshot.files) wanted.set(`data/openai-files/${f}`, path.join(dataDir, "openai-files", f));
    // Missing before this snapshot and still referenced by it: missing from the data folder itself.
    const missing = [...vanished].filter((rel) => wanted.has(rel));
    const gone = new Set<string>();
    const todo = [...wanted].filter(([rel]) => !copied.has(rel) && !missing.includes(rel));
    if (todo.length > 0) say(`copying ${todo.length} originals`);
    await inPool(todo, COPY_CONCURRENCY, async ([rel, from]) => {
      try {
        copied.set(rel, await copyHashed(from, path.join(partial, ...rel.split("/")), signal));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        gone.add(rel);
      }
    });
    if (gone.size === 0 || attempt === MAX_SNAPSHOTS) {
      if (gone.size > 0) throw new BackupError(`documents kept being deleted while their originals were copied (${MAX_SNAPSHOTS} database snapshots); run the backup again`, "backup_unsettled");
      // Originals copied for an earlier snapshot whose documents this one no longer holds.
      for (const rel of [...copied.keys()].filter((r) => !wanted.has(r))) {
        await rm(path.join(partial, ...rel.split("/")), { force: true });
        copied.delete(rel);
      }
      add("data/pustaka.db", await hashFile(dbCopy), "data");
      for (const [rel, c] of copied) add(rel, c, "data");
      return { snapshot, attempts: attempt, missing: missing.map((rel) => rel.split("/").at(-1)!) };
    }
    say(`${gone.size} originals were deleted while being copied: taking the database snapshot again`);
    vanished = gone;
  }
  throw new Error("unreachable");
}

const str = (rows: Record<string, unknown>[] | undefined, column: string): string[] => (rows ?? []).map((r) => String(r[column]));

async function snapshotPrimary(dataDir: string, destination: string): Promise<Snapshot> {
  const { rows } = await snapshotSqlite({
    source: path.join(dataDir, "pustaka.db"),
    destination,
    queries: [
      { sql: "SELECT corpus_id, id FROM documents" },
      { sql: "SELECT id FROM openai_files" },
      { sql: "SELECT id FROM tombstones" },
      {
        sql: `SELECT (SELECT COUNT(*) FROM workspaces) AS workspaces, (SELECT COUNT(*) FROM corpora) AS corpora, (SELECT COUNT(*) FROM chunks) AS chunks,
                     (SELECT COUNT(*) FROM audit_events) AS audit, (SELECT COUNT(*) FROM documents WHERE status IN ('queued', 'processing')) AS pending`,
      },
      { sql: "SELECT DISTINCT embedding_model FROM corpora ORDER BY embedding_model" },
      { sql: "PRAGMA user_version" },
    ],
  });
  return {
    documents: (rows[0] ?? []) as { corpus_id: string; id: string }[],
    files: str(rows[1], "id"),
    tombstones: str(rows[2], "id"),
    counts: (rows[3]?.[0] ?? {}) as Record<string, number>,
    corpusModels: str(rows[4], "embedding_model"),
    schemaVersion: Number(rows[5]?.[0]?.user_version ?? 0),
  };
}

/** The cold store as of now, limited to the tombstones the primary snapshot catalogues. */
export async function copyColdStore(dataDir: string, partial: string, tombstones: string[], add: AddFile, signal: AbortSignal | undefined): Promise<void> {
  const coldDb = path.join(dataDir, "cold", "tombstones.db");
  if (!(await stat(coldDb).catch(() => null))) return;
  const destination = path.join(partial, "data", "cold", "tombstones.db");
  const known = JSON.stringify(tombstones);
  await snapshotSqlite({
    source: coldDb,
    destination,
    statements: [
      // Rows dropped from the copy leave zeroed pages, not their bytes.
      { sql: "PRAGMA secure_delete = ON" },
      { sql: "DELETE FROM cold_chunks WHERE tombstone_id NOT IN (SELECT value FROM json_each(?))", params: [known] },
      { sql: "DELETE FROM cold_manifests WHERE tombstone_id NOT IN (SELECT value FROM json_each(?))", params: [known] },
    ],
  });
  add("data/cold/tombstones.db", await hashFile(destination), "data");
  for (const tombstone of tombstones) {
    const from = path.join(dataDir, "cold", "blobs", tombstone);
    for (const file of (await readdir(from).catch(() => [] as string[])).filter((f) => !f.endsWith(".part"))) {
      const rel = `data/cold/blobs/${tombstone}/${file}`;
      try {
        add(rel, await copyHashed(path.join(from, file), path.join(partial, ...rel.split("/")), signal), "data");
      } catch (error) {
        // Purged since the snapshot: its tombstone had expired, and the restored server purges it too.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }
}

