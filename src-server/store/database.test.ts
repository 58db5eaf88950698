import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { openDatabase } from "./database.js";

describe("openDatabase", () => {
  it("keeps the data folder 0700 and the database and its WAL 0600, even in a folder that existed", () => {
    const parent = mkdtempSync(path.join(os.tmpdir(), "pustaka-db-"));
    const dir = path.join(parent, "data");
    mkdirSync(dir, { mode: 0o755 });
    const db = openDatabase(dir);
    db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_x', 'x', 1)").run();
    const mode = (file: string) => statSync(file).mode & 0o777;
    assert.equal(mode(dir), 0o700);
    for (const file of ["pustaka.db", "pustaka.db-wal", "pustaka.db-shm"]) assert.equal(mode(path.join(dir, file)), 0o600, file);
    db.close();
    rmSync(parent, { recursive: true, force: true });
  });
});
