/**
 * The store's database, SQLite or Postgres, behind one asynchronous handle.
 *
 * Queries go through Kysely, which compiles one query (built, or written with its `sql`
 * tag) for either dialect: placeholders, identifiers and parameters are its job, so no
 * store holds SQL strings in two dialects. SQLite (the default: one file in the data
 * folder, nothing to install) is reached through better-sqlite3 on one connection, each
 * query or transaction holding it in turn; Postgres (`--database postgres://…`, several
 * replicas) through a node-postgres pool.
 *
 * Transactions are `BEGIN IMMEDIATE` on SQLite (the write lock up front, so two processes
 * on one file never deadlock on an upgrade) and READ COMMITTED on Postgres, where a store
 * that must serialize (a rate-limit bucket, an audit chain) takes advisory locks with
 * `lock()`: exact across replicas, and without serialization failures to retry.
 */
import type BetterSqlite3 from "better-sqlite3";
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql, type DatabaseConnection, type Driver } from "kysely";
import type pg from "pg";
import { openDatabase as openSqliteFile } from "./database.js";
import { MIGRATIONS, type Migration } from "./migrations/index.js";
import { POSTGRES_BASELINE, POSTGRES_BASELINE_VERSION } from "./migrations/postgres-baseline.js";
import type { Tables } from "./schema.js";

export type Dialect = "sqlite" | "postgres";
/** A database handle or a transaction: stores take either. */
export type Sql = Kysely<Tables>;

export interface SqlDatabase {
  readonly dialect: Dialect;
  readonly db: Sql;
  /** Runs `fn` in one transaction, committed when it resolves and rolled back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Serializes transactions on the same keys across every process sharing the store until
   * the transaction ends (Postgres advisory locks, taken in sorted order; on SQLite the
   * transaction already holds the write lock).
   */
  lock(tx: Sql, keys: readonly string[]): Promise<void>;
  /** The schema version applied (for readiness: it must equal `latestSchemaVersion`). */
  schemaVersion(): Promise<number>;
  /** Throws when the database cannot answer a query now. */
  ping(): Promise<void>;
  /** Where the data is, for logs: the file, or the Postgres URL without its password. */
  readonly location: string;
  /** The SQLite connection for code not yet on the asynchronous store (null on Postgres). */
  readonly sqlite: BetterSqlite3.Database | null;
  close(): Promise<void>;
}

export type DatabaseLocation = { kind: "sqlite"; dataDir: string } | { kind: "postgres"; url: string; poolSize?: number; statementTimeoutMs?: number };

export const latestSchemaVersion = (migrations: readonly Migration[] = MIGRATIONS): number => migrations.at(-1)?.version ?? 0;

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

export async function openSqlDatabase(location: DatabaseLocation, migrations: readonly Migration[] = MIGRATIONS): Promise<SqlDatabase> {
  return location.kind === "sqlite" ? openSqlite(location.dataDir, migrations) : openPostgres(location, migrations);
}

// --- SQLite ---------------------------------------------------------------------------

/** One connection, lent to one query or one transaction at a time. */
class Turnstile {
  private tail: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  async enter(): Promise<void> {
    let open!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (open = resolve));
    await previous;
    this.release = open;
  }

  leave(): void {
    const release = this.release;
    this.release = null;
    release?.();
  }
}

class SqliteTurnDriver implements Driver {
  private readonly turnstile = new Turnstile();
  constructor(private readonly inner: Driver) {}
  init(): Promise<void> {
    return this.inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    await this.turnstile.enter();
    return this.inner.acquireConnection();
  }
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("BEGIN IMMEDIATE"));
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.turnstile.leave();
    }
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

class SqliteTurnDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new SqliteTurnDriver(super.createDriver());
  }
}

function openSqlite(dataDir: string, migrations: readonly Migration[]): SqlDatabase {
  const raw = openSqliteFile(dataDir, migrations);
  const db = new Kysely<Tables>({ dialect: new SqliteTurnDialect({ database: raw }) });
  let closed = false;
  return {
    dialect: "sqlite",
    db,
    sqlite: raw,
    location: dataDir === ":memory:" ? ":memory:" : `${dataDir}/pustaka.db`,
    transaction: (fn) => db.transaction().execute(fn),
    lock: async () => {},
    schemaVersion: () => Promise.resolve(raw.pragma("user_version", { simple: true }) as number),
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

// --- Postgres -------------------------------------------------------------------------

const INT8 = 20;
const NUMERIC = 1700;
const numberParser = (value: string): number => Number(value);
const typeParsers = (types: typeof pg.types) => ({
  // BIGINT times and counts, and SUM()s, as numbers: they stay far below 2^53.
  getTypeParser: (oid: number, format?: "text" | "binary"): unknown => (oid === INT8 || oid === NUMERIC ? numberParser : (types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)),
});

/** One advisory-lock key space for the whole store (a 64-bit hash of the name). */
const lockKey = (name: string) => sql`hashtextextended(${`pustaka:${name}`}, 0)`;

async function openPostgres(location: Extract<DatabaseLocation, { kind: "postgres" }>, migrations: readonly Migration[]): Promise<SqlDatabase> {
  // The Postgres driver loads only for Postgres (a SQLite server never needs it).
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: location.url,
    max: location.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // A stuck query fails instead of holding a request (and a connection) forever.
    statement_timeout: location.statementTimeoutMs ?? 30_000,
    application_name: "pustaka",
    types: typeParsers(pg.types),
  });
  // An idle client whose server went away emits here; the pool drops it and reconnects.
  pool.on("error", () => {});
  // A client lent out (a transaction between two queries) whose server goes away emits on
  // itself, where the pool listens no more: without a listener of its own that would be an
  // uncaught error ending the process. Its next query fails instead (503), and the pool
  // drops it when it comes back.
  pool.on("connect", (client) => client.on("error", () => {}));
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migratePostgres(db, migrations);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  let closed = false;
  return {
    dialect: "postgres",
    db,
    sqlite: null,
    location: redactUrl(location.url),
    transaction: (fn) => db.transaction().execute(fn),
    lock: async (tx, keys) => {
      // One round trip for all keys, taken in sorted order (unnest yields them in order).
      const names = [...new Set(keys)].sort().map((key) => `pustaka:${key}`);
      if (names.length === 1) await sql`SELECT pg_advisory_xact_lock(${lockKey(keys[0]!)})`.execute(tx);
      else if (names.length > 1) await sql`SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(${names}::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n`.execute(tx);
    },
    schemaVersion: () => postgresVersion(db),
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

async function postgresVersion(db: Sql): Promise<number> {
  const { rows } = await sql<{ version: number | null }>`SELECT MAX(version) AS version FROM pustaka_schema`.execute(db);
  return rows[0]?.version ?? 0;
}

/**
 * Brings a Postgres database to the newest schema. Replicas starting together take one
 * session advisory lock, so exactly one migrates and the others find the work done.
 */
export async function migratePostgres(db: Sql, migrations: readonly Migration[]): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${lockKey("migrations")})`.execute(conn);
    try {
      await sql`CREATE TABLE IF NOT EXISTS pustaka_schema (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`.execute(conn);
      const current = await postgresVersion(conn);
      const newest = latestSchemaVersion(migrations);
      if (current > newest) throw new Error(`database schema version ${current} is newer than this build knows (${newest}); upgrade Pustaka`);
      const steps: { version: number; name: string; sql: string }[] = [];
      if (current < POSTGRES_BASELINE_VERSION) steps.push({ version: POSTGRES_BASELINE_VERSION, name: "baseline", sql: POSTGRES_BASELINE });
      for (const migration of migrations) {
        if (migration.version <= Math.max(current, POSTGRES_BASELINE_VERSION)) continue;
        if (migration.postgres === undefined) throw new Error(`migration ${migration.version} (${migration.name}) has no Postgres form`);
        steps.push({ version: migration.version, name: migration.name, sql: migration.postgres });
      }
      for (const step of steps) {
        await conn.transaction().execute(async (tx) => {
          await sql.raw(step.sql).execute(tx);
          await sql`INSERT INTO pustaka_schema (version, name, applied_at) VALUES (${step.version}, ${step.name}, ${Date.now()})`.execute(tx);
        });
      }
    } finally {
      await sql`SELECT pg_advisory_unlock(${lockKey("migrations")})`.execute(conn);
    }
  });
}

/**
 * True when an error means the database cannot be reached or is restarting (connection
 * refused or lost, the server shutting down or starting up): the request may succeed
 * later, so it is answered 503 rather than 500.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    // Class 08: connection exceptions; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03") return true;
    if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"].includes(code)) return true;
  }
  if (typeof message === "string") {
    return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|terminating connection/i.test(message);
  }
  return false;
}

/** Where the configuration puts the store: Postgres when it names a URL, else SQLite in the data folder. */
export function databaseLocationOf(config: { dataDir: string; database: { url?: string | undefined; poolSize: number; statementTimeoutSeconds: number } }): DatabaseLocation {
  const { url, poolSize, statementTimeoutSeconds } = config.database;
  return url ? { kind: "postgres", url, poolSize, statementTimeoutMs: statementTimeoutSeconds * 1000 } : { kind: "sqlite", dataDir: config.dataDir };
}
