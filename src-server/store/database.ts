/**
 * Opens the SQLite database (WAL, foreign keys, secure_delete) and applies migrations.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { MIGRATIONS, type Migration } from "./migrations/index.js";

export type Database = BetterSqlite3.Database;

/**
 * Opens `<dataDir>/pustaka.db`, creating the folder if needed, and migrates it to the
 * newest schema. Pass `":memory:"` as `dataDir` for a throwaway database.
 */
export function openDatabase(dataDir: string, migrations: readonly Migration[] = MIGRATIONS): Database {
  let file = ":memory:";
  if (dataDir !== ":memory:") {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    file = path.join(dataDir, "pustaka.db");
  }
  const db = new BetterSqlite3(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  // Freed pages are overwritten with zeros, so deleted rows do not linger on disk.
  db.pragma("secure_delete = ON");
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
