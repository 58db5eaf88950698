import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { openDatabase } from "./database.js";
import { ensureIncrementalVacuum, reclaimSpace } from "./space-reclaim.js";

const parent = mkdtempSync(path.join(os.tmpdir(), "pustaka-reclaim-"));
after(() => rmSync(parent, { recursive: true, force: true }));

describe("space reclaim", () => {
  it("converts a database made before incremental auto-vacuum, keeping its rows", () => {
    const file = path.join(parent, "old.db");
    const old = new BetterSqlite3(file);
    old.pragma("journal_mode = WAL");
    old.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
    old.prepare("INSERT INTO t (b) VALUES (?)").run(Buffer.alloc(100, 1));
    assert.equal(old.pragma("auto_vacuum", { simple: true }), 0);
    ensureIncrementalVacuum(old);
    assert.equal(old.pragma("auto_vacuum", { simple: true }), 2);
    assert.equal((old.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n, 1);
    old.close();
  });

  it("gives deleted pages back and leaves no page image of deleted rows in the database or its WAL", () => {
    const dir = path.join(parent, "data");
    const db = openDatabase(dir);
    assert.equal(db.pragma("auto_vacuum", { simple: true }), 2, "new databases are created with incremental auto-vacuum");
    db.exec("CREATE TABLE scratch (id INTEGER PRIMARY KEY, keep INTEGER, b BLOB)");
    const marker = Buffer.from("SECRET-CIPHERTEXT-MARKER");
    const insert = db.prepare("INSERT INTO scratch (keep, b) VALUES (?, ?)");
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(i % 4 === 0 ? 1 : 0, Buffer.concat([i % 4 === 0 ? Buffer.alloc(marker.length) : marker, Buffer.alloc(3000, i % 251)]));
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    const file = path.join(dir, "pustaka.db");
    const before = statSync(file).size;
    db.prepare("DELETE FROM scratch WHERE keep = 0").run();
    const result = reclaimSpace(db);
    assert.ok(result.freedPages > 1000, `freed ${result.freedPages} pages`);
    assert.equal(result.walTruncated, true);
    assert.ok(statSync(file).size < before / 2, "the file shrank");
    assert.equal(statSync(`${file}-wal`).size, 0);
    assert.equal(readFileSync(file).includes(marker), false, "no deleted bytes left in the database file");
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM scratch").get() as { n: number }).n, 500);
    db.close();
  });
});
