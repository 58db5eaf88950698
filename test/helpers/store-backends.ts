/**
 * Store tests on both backends: `describeBackends(title, body)` registers the suite twice,
 * on SQLite in memory and on a real Postgres (one server per suite, a fresh database per
 * `open()`), so every store keeps one behaviour whichever database holds it.
 */
import { after, before, describe } from "node:test";
import { openSqlDatabase, type Dialect, type SqlDatabase } from "../../src-server/store/sql-database.js";
import { startPostgres, type PostgresServer } from "./postgres.js";

export interface Backend {
  dialect: Dialect;
  /** A new, empty, migrated database; closed when the suite ends. */
  open(): Promise<SqlDatabase>;
  /** The Postgres server (null on SQLite): for psql, and to stop and start it. */
  readonly server: PostgresServer | null;
  /** The URL of the last database `open()` made (null on SQLite). */
  readonly lastUrl: string | null;
}

export function describeBackends(title: string, body: (backend: Backend) => void): void {
  for (const dialect of ["sqlite", "postgres"] as const) {
    describe(`${title} [${dialect}]`, () => {
      const opened: SqlDatabase[] = [];
      let server: PostgresServer | null = null;
      let lastUrl: string | null = null;
      if (dialect === "postgres") {
        before(async () => {
          server = await startPostgres();
        });
      }
      after(async () => {
        for (const db of opened.splice(0)) await db.close().catch(() => {});
        await server?.close();
      });
      const backend: Backend = {
        dialect,
        get server() {
          return server;
        },
        get lastUrl() {
          return lastUrl;
        },
        async open() {
          let db: SqlDatabase;
          if (dialect === "sqlite") db = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
          else {
            if (!server) throw new Error("the Postgres server is not started (open() is for tests, not for describe bodies)");
            lastUrl = await server.createDatabase();
            db = await openSqlDatabase({ kind: "postgres", url: lastUrl });
          }
          opened.push(db);
          return db;
        },
      };
      body(backend);
    });
  }
}
