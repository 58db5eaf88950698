/**
 * A consistent copy of a live SQLite database through SQLite's online backup API
 * (better-sqlite3 `db.backup()`), taken in a worker thread on a connection of its own.
 *
 * The copy is made in one backup step: the step holds one read transaction for its whole
 * length, so the copy is the database as of one instant even while the server (another
 * connection, or another process) keeps writing; in WAL mode that reader blocks no writer.
 * Several small steps would restart from the first page whenever another connection
 * wrote between them, and a busy server writes all the time. One step blocks the thread
 * it runs on for the length of the copy, hence the worker: the server's event loop keeps
 * answering requests while a scheduled backup runs.
 *
 * The copy is switched to a rollback journal (no `-wal` file beside it: one file to hash
 * and move), then `statements` run on it (the backup's own edits) and `queries` read it.
 */
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";

export interface SnapshotRequest {
  /** The live database file. */
  source: string;
  /** Where the copy goes (a new file; its folder is created). */
  destination: string;
  /** Statements run on the copy after it is made, each with its parameters. */
  statements?: { sql: string; params?: unknown[] }[];
  /** Queries run on the copy last; their rows come back in order. */
  queries?: { sql: string; params?: unknown[] }[];
  /** VACUUM the copy after the statements (so deleted rows leave no bytes in free pages). */
  vacuum?: boolean;
  /** Give up when the source stays locked this long (another process holding it exclusively). Default 10 minutes. */
  busyTimeoutMs?: number;
}

export interface SnapshotResult {
  pages: number;
  /** Per query, its rows as objects. */
  rows: Record<string, unknown>[][];
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const { source, destination, statements, queries, vacuum, busyTimeoutMs } = workerData.request;
(async () => {
  const live = new Database(source, { fileMustExist: true });
  let pages = 0;
  try {
    live.pragma("busy_timeout = 5000");
    const started = Date.now();
    const result = await live.backup(destination, {
      // The first step only measures; the next copies every page at once (see the module comment).
      progress: () => {
        if (Date.now() - started > busyTimeoutMs) throw new Error("the database stayed locked by another process for " + Math.round(busyTimeoutMs / 1000) + " s");
        return 0x7fffffff;
      },
    });
    pages = result.totalPages;
  } finally {
    live.close();
  }
  const copy = new Database(destination, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
    for (const s of statements) copy.prepare(s.sql).run(...(s.params || []));
    if (vacuum) copy.exec("VACUUM");
    const rows = queries.map((q) => copy.prepare(q.sql).all(...(q.params || [])));
    parentPort.postMessage({ ok: true, pages, rows });
  } finally {
    copy.close();
  }
})().catch((error) => parentPort.postMessage({ ok: false, error: String((error && error.message) || error), code: error && error.code }));
`;

/** better-sqlite3 as this module resolves it (a packaged app's copy, not whatever the working directory finds). */
const driver = createRequire(import.meta.url).resolve("better-sqlite3");

/** Copies `request.source` to `request.destination` as of one instant; rejects with the driver's error. */
export async function snapshotSqlite(request: SnapshotRequest): Promise<SnapshotResult> {
  await mkdir(path.dirname(request.destination), { recursive: true, mode: 0o700 });
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, request: { statements: [], queries: [], vacuum: false, busyTimeoutMs: 600_000, ...request } },
  });
  try {
    const message = await new Promise<{ ok: true; pages: number; rows: Record<string, unknown>[][] } | { ok: false; error: string; code?: string }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the SQLite snapshot worker exited with code ${code}`)));
    });
    if (!message.ok) throw Object.assign(new Error(message.error), { code: message.code });
    return { pages: message.pages, rows: message.rows };
  } finally {
    await worker.terminate();
  }
}
