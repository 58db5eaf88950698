import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { snapshotSqlite } from "./sqlite-snapshot.js";

const root = mkdtempSync(path.join(tmpdir(), "pustaka-sqlite-snapshot-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("snapshotSqlite", () => {
  it("copies a database as of one instant while another connection keeps writing, without stopping the writer", async () => {
    const source = path.join(root, "live.db");
    const live = new BetterSqlite3(source);
    live.pragma("journal_mode = WAL");
    live.pragma("synchronous = NORMAL");
    live.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, pad BLOB); CREATE TABLE tally (n INTEGER); INSERT INTO tally VALUES (0)");
    const insert = live.prepare("INSERT INTO rows (pad) VALUES (randomblob(2000))");
    const count = live.prepare("UPDATE tally SET n = n + 1");
    // Every transaction adds a row and updates the tally: a copy mixing two instants would disagree with itself.
    const write = live.transaction(() => {
      insert.run();
      count.run();
    });
    live.transaction(() => {
      for (let i = 0; i < 20_000; i++) write();
    })();
    // Writes at every turn of the event loop while the copy is made in the worker.
    let during = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        write();
        during++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const destination = path.join(root, "copies", "copy.db");
    const copied = await snapshotSqlite({
      source,
      destination,
      queries: [{ sql: "SELECT (SELECT COUNT(*) FROM rows) AS rows, (SELECT n FROM tally) AS tally" }, { sql: "PRAGMA integrity_check" }, { sql: "PRAGMA journal_mode" }],
    });
    writing = false;
    await writer;
    const [[state], [integrity], [mode]] = copied.rows as [[{ rows: number; tally: number }], [{ integrity_check: string }], [{ journal_mode: string }]];
    assert.ok(during > 0, "the writer kept writing while the copy was made");
    assert.equal(state.rows, state.tally, "the copy is consistent");
    assert.ok(state.rows >= 20_000);
    assert.equal(integrity.integrity_check, "ok");
    assert.equal(mode.journal_mode, "delete", "one file: no write-ahead log beside the copy");
    assert.ok(!existsSync(`${destination}-wal`));
    assert.ok(copied.pages > 0);
    live.close();
  });

  it("runs the backup's own edits on the copy, never on the source", async () => {
    const source = path.join(root, "edits.db");
    const live = new BetterSqlite3(source);
    live.exec("CREATE TABLE t (id TEXT); INSERT INTO t VALUES ('keep'), ('drop')");
    const destination = path.join(root, "edits-copy.db");
    const { rows } = await snapshotSqlite({ source, destination, statements: [{ sql: "DELETE FROM t WHERE id NOT IN (SELECT value FROM json_each(?))", params: ['["keep"]'] }], queries: [{ sql: "SELECT id FROM t" }] });
    assert.deepEqual(rows[0], [{ id: "keep" }]);
    assert.deepEqual(live.prepare("SELECT id FROM t ORDER BY id").pluck().all(), ["drop", "keep"]);
    live.close();
  });

  it("rejects with the driver's reason when the source does not exist, creating nothing", async () => {
    await assert.rejects(snapshotSqlite({ source: path.join(root, "absent.db"), destination: path.join(root, "x.db") }), /unable to open|not exist|SQLITE_CANTOPEN|directory/i);
    assert.ok(!existsSync(path.join(root, "absent.db")), "a missing source is not created");
  });
});
