/**
 * SQLite's migrations and Postgres's (the baseline and every later step) must give the same
 * schema: the same tables and columns (type class, nullability, defaults present), primary
 * keys, unique constraints, foreign keys with their ON DELETE, and indexes. Checked here by
 * reading both catalogs after migrating each from empty.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { startPostgres, type PostgresServer } from "../../test/helpers/postgres.js";
import { MIGRATIONS } from "./migrations/index.js";
import { POSTGRES_BASELINE_VERSION } from "./migrations/postgres-baseline.js";
import { latestSchemaVersion, migratePostgres, openSqlDatabase, type SqlDatabase } from "./sql-database.js";

interface Column {
  type: "text" | "integer" | "bytes";
  notNull: boolean;
  hasDefault: boolean;
}

interface Shape {
  columns: Record<string, Record<string, Column>>;
  primaryKeys: Record<string, string[]>;
  uniques: Record<string, string[]>;
  foreignKeys: Record<string, string[]>;
  indexes: Record<string, string>;
}

const sortObject = <T>(o: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

function typeClass(declared: string): Column["type"] {
  const t = declared.toLowerCase();
  if (t.includes("int")) return "integer";
  if (t.includes("blob") || t.includes("bytea")) return "bytes";
  if (t.includes("text") || t.includes("char")) return "text";
  throw new Error(`unexpected column type ${declared}`);
}

async function sqliteShape(db: SqlDatabase): Promise<Shape> {
  const raw = db.sqlite!;
  const tables = (raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
  const shape: Shape = { columns: {}, primaryKeys: {}, uniques: {}, foreignKeys: {}, indexes: {} };
  for (const table of tables) {
    const columns = raw.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string; notnull: number; dflt_value: unknown; pk: number }[];
    shape.columns[table] = Object.fromEntries(columns.map((c) => [c.name, { type: typeClass(c.type), notNull: c.notnull === 1 || c.pk > 0, hasDefault: c.dflt_value !== null || (c.pk > 0 && typeClass(c.type) === "integer" && columns.filter((x) => x.pk > 0).length === 1) }]));
    shape.primaryKeys[table] = columns
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const indexList = raw.prepare(`PRAGMA index_list(${table})`).all() as { name: string; unique: number; origin: string; partial: number }[];
    const uniques: string[] = [];
    for (const index of indexList) {
      const cols = (raw.prepare(`PRAGMA index_info(${index.name})`).all() as { name: string }[]).map((c) => c.name).join(",");
      if (index.origin === "u") uniques.push(cols);
      else if (index.origin === "c") shape.indexes[index.name] = `${table}(${cols})${index.unique ? " unique" : ""}${index.partial ? " partial" : ""}`;
    }
    shape.uniques[table] = uniques.sort();
    const fks = raw.prepare(`PRAGMA foreign_key_list(${table})`).all() as { table: string; from: string; to: string; on_delete: string }[];
    shape.foreignKeys[table] = fks.map((f) => `${f.from}->${f.table}.${f.to} ${f.on_delete.toLowerCase()}`).sort();
  }
  shape.columns = sortObject(shape.columns);
  shape.indexes = sortObject(shape.indexes);
  return shape;
}

async function postgresShape(db: SqlDatabase): Promise<Shape> {
  const q = async <R>(query: ReturnType<typeof sql<R>>) => (await query.execute(db.db)).rows;
  const shape: Shape = { columns: {}, primaryKeys: {}, uniques: {}, foreignKeys: {}, indexes: {} };
  const columns = await q(sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null; is_identity: string }>`
    SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> 'pustaka_schema' ORDER BY table_name, ordinal_position`);
  for (const c of columns) {
    (shape.columns[c.table_name] ??= {})[c.column_name] = { type: typeClass(c.data_type), notNull: c.is_nullable === "NO", hasDefault: c.column_default !== null || c.is_identity === "YES" };
  }
  const constraints = await q(sql<{ table_name: string; name: string; kind: string; columns: string; ref: string | null; on_delete: string }>`
    SELECT rel.relname AS table_name, con.conname AS name, con.contype AS kind,
      (SELECT string_agg(att.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = k.attnum) AS columns,
      CASE WHEN con.contype = 'f' THEN (SELECT frel.relname || '.' || string_agg(att.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute att ON att.attrelid = con.confrelid AND att.attnum = k.attnum JOIN pg_class frel ON frel.oid = con.confrelid GROUP BY frel.relname) END AS ref,
      con.confdeltype AS on_delete
    FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid JOIN pg_namespace ns ON ns.oid = rel.relnamespace
    WHERE ns.nspname = 'public' AND rel.relname <> 'pustaka_schema'`);
  const onDelete: Record<string, string> = { a: "no action", r: "restrict", c: "cascade", n: "set null", d: "set default" };
  for (const table of Object.keys(shape.columns)) {
    shape.primaryKeys[table] = [];
    shape.uniques[table] = [];
    shape.foreignKeys[table] = [];
  }
  for (const c of constraints) {
    if (c.kind === "p") shape.primaryKeys[c.table_name] = c.columns.split(",");
    if (c.kind === "u") shape.uniques[c.table_name]!.push(c.columns);
    if (c.kind === "f") shape.foreignKeys[c.table_name]!.push(`${c.columns}->${c.ref} ${onDelete[c.on_delete]}`);
  }
  for (const table of Object.keys(shape.columns)) {
    shape.uniques[table]!.sort();
    shape.foreignKeys[table]!.sort();
  }
  const indexes = await q(sql<{ table_name: string; name: string; columns: string; unique: boolean; partial: boolean }>`
    SELECT t.relname AS table_name, i.relname AS name, ix.indisunique AS unique, ix.indpred IS NOT NULL AS partial,
      (SELECT string_agg(att.attname, ',' ORDER BY k.ord) FROM unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute att ON att.attrelid = t.oid AND att.attnum = k.attnum) AS columns
    FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace
    WHERE ns.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid)`);
  for (const index of indexes) shape.indexes[index.name] = `${index.table_name}(${index.columns})${index.unique ? " unique" : ""}${index.partial ? " partial" : ""}`;
  shape.columns = sortObject(shape.columns);
  shape.indexes = sortObject(shape.indexes);
  return shape;
}

describe("the schema on SQLite and on Postgres", () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server.close();
  });

  it("is the same: tables, columns, keys, foreign keys and indexes", async () => {
    const lite = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    const postgres = await openSqlDatabase({ kind: "postgres", url: await server.createDatabase() });
    try {
      assert.equal(await lite.schemaVersion(), latestSchemaVersion());
      assert.equal(await postgres.schemaVersion(), latestSchemaVersion());
      const [a, b] = [await sqliteShape(lite), await postgresShape(postgres)];
      assert.ok(Object.keys(a.columns).length >= 18, "every table is compared");
      assert.deepEqual(b.columns, a.columns);
      assert.deepEqual(b.primaryKeys, a.primaryKeys);
      assert.deepEqual(b.uniques, a.uniques);
      assert.deepEqual(b.foreignKeys, a.foreignKeys);
      assert.deepEqual(b.indexes, a.indexes);
    } finally {
      await lite.close();
      await postgres.close();
    }
  });

  it("gives every migration after the Postgres baseline a Postgres form", () => {
    for (const migration of MIGRATIONS.filter((m) => m.version > POSTGRES_BASELINE_VERSION)) assert.ok(migration.postgres, `migration ${migration.version} (${migration.name}) needs its Postgres form`);
  });

  it("migrates once when three replicas start together, and refuses a schema newer than the build", async () => {
    const url = await server.createDatabase();
    const replicas = await Promise.all([1, 2, 3].map(() => openSqlDatabase({ kind: "postgres", url })));
    try {
      const { rows } = await sql<{ version: number }>`SELECT version FROM pustaka_schema ORDER BY version`.execute(replicas[0]!.db);
      assert.deepEqual(
        rows.map((r) => r.version),
        [POSTGRES_BASELINE_VERSION, ...MIGRATIONS.filter((m) => m.version > POSTGRES_BASELINE_VERSION).map((m) => m.version)],
      );
      await sql`INSERT INTO pustaka_schema (version, name, applied_at) VALUES (${latestSchemaVersion() + 1}, 'from the future', 0)`.execute(replicas[0]!.db);
      await assert.rejects(migratePostgres(replicas[1]!.db, MIGRATIONS), /newer than this build knows/);
    } finally {
      for (const r of replicas) await r.close();
    }
  });
});
