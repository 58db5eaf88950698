/**
 * Opens the SQLite database (WAL, foreign keys, secure_delete) and applies migrations.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { MIGRATIONS, type Migration } from "./migrations/index.js";
import { ensureIncrementalVacuum } from "./space-reclaim.js";

export type Database = BetterSqlite3.Database;

/**
 * Opens `<dataDir>/pustaka.db`, creating the folder if needed, and migrates it to the
 * newest schema. Pass `":memory:"` as `dataDir` for a throwaway database.
 */
export function openDatabase(dataDir: string, migrations: readonly Migration[] = MIGRATIONS): Database {
  let file = ":memory:";
  if (dataDir !== ":memory:") {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Private whatever the umask or an existing folder said: 0700 for the folder, 0600 for
    // the database. SQLite gives the WAL and shared-memory files the database's mode.
    chmodSync(dataDir, 0o700);
    file = path.join(dataDir, "pustaka.db");
    closeSync(openSync(file, "a", 0o600));
    chmodSync(file, 0o600);
  }
  const db = new BetterSqlite3(file);
  db.pragma("journal_mode = WAL");
  for (const extra of [`${file}-wal`, `${file}-shm`]) if (file !== ":memory:" && existsSync(extra)) chmodSync(extra, 0o600);
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  // Freed pages are overwritten with zeros, so deleted rows do not linger on disk.
  db.pragma("secure_delete = ON");
  // Freed pages are also given back to the file system after deletions (space-reclaim.ts).
  ensureIncrementalVacuum(db);
  migrate(db, migrations);
  return db;
}

/** Applies every migration newer than the database's `user_version`. */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  const newest = migrations.at(-1)?.version ?? 0;
  if (current > newest) {
    throw new Error(`database schema version ${current} is newer than this build knows (${newest}); upgrade Pustaka`);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
}
