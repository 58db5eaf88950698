/**
 * A team server's store is Postgres: `pustaka backup` refuses it and points to pg_dump, and
 * the pg_dump and pg_restore commands docs/backup-restore.md shows are run here as written
 * (only the database's address changed) against a real Postgres while the server writes to
 * it. A server on the restored database, with the same key file, reads and searches the same.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { shellBlocks } from "../helpers/doc-commands.js";
import { testModel } from "../helpers/models.js";
import { startPostgres, type PostgresServer } from "../helpers/postgres.js";
import { pustaka } from "../helpers/pustaka-cli.js";
import { EVAL_DOCS, evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const DOCUMENTED_SERVER = "postgres://pustaka@db.internal:5432";
const QUESTION = "For how long did ship handling stop at the state's main seaport during the Pahang floods?";

describe("backing up a team server on Postgres", () => {
  let postgres: PostgresServer;
  let work: string;
  let keyFile: string;
  let a: TestServer;
  let server: string;
  let corpusId: string;
  let documentId: string;

  before(async () => {
    postgres = await startPostgres();
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-backup-pg-"));
    keyFile = path.join(work, "kek.bin");
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    // The database the documentation names.
    const url = await postgres.createDatabase("pustaka");
    server = url.slice(0, url.lastIndexOf("/"));
    a = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, config: { database: { url }, security: { keyFile } } });
    corpusId = (await a.call("POST", "/v1/rag/corpora", { name: "Floods", embedding_model: "minilm" })).json.id;
    const res = await upload(a, corpusId, [evalDoc("floods-pahang-2023-briefing.md"), evalDoc("banjir-kelantan-2022.md")]);
    documentId = res.json.documents[0].id;
    assert.equal((await waitForStatus(a, corpusId)).status, "ready");
  });
  after(async () => {
    await a?.close();
    await postgres?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("refuses `pustaka backup` and `pustaka restore` on Postgres, pointing to pg_dump", { timeout: 120_000 }, async () => {
    const backup = await pustaka(["backup", path.join(work, "backups"), "--database", `${server}/pustaka`, "--data-dir", a.dataDir]);
    assert.equal(backup.status, 2);
    assert.match(backup.stderr, /^pustaka: pustaka backup: this instance keeps its state in Postgres \(database\.url\), shared by its replicas: back the database up with pg_dump/m);
    const restore = await pustaka(["restore", path.join(work, "nothing"), "--database", `${server}/pustaka`]);
    assert.equal(restore.status, 2);
    assert.match(restore.stderr, /pustaka restore restores a data folder, not Postgres: .*pg_dump/);
  });

  it("runs the documented pg_dump and pg_restore while the server writes; a server on the restored database reads the same", { timeout: 600_000 }, async () => {
    const before = (await a.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: QUESTION, top_k: 4 })).json.data;
    // Writes while the dump runs: pg_dump reads one snapshot.
    let writing = true;
    const writes = (async () => {
      while (writing) await a.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: QUESTION, top_k: 2 });
    })();
    const lines = shellBlocks("docs/backup-restore.md")
      .filter((b) => b.checkedBy === "backup-postgres")
      .flatMap((b) => b.lines);
    assert.deepEqual(
      lines.map((l) => l.split(" ")[0]),
      ["pg_dump", "createdb", "pg_restore"],
    );
    try {
      for (const line of lines) {
        const command = line.replaceAll(DOCUMENTED_SERVER, server);
        assert.notEqual(command, line, "the documented address is the one replaced");
        execFileSync("bash", ["-c", command], { cwd: work, stdio: ["ignore", "pipe", "pipe"] });
      }
    } finally {
      writing = false;
      await writes;
    }
    const restored = `${server}/pustaka_restored`;
    const r = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, config: { database: { url: restored }, security: { keyFile } } });
    try {
      assert.deepEqual((await r.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: QUESTION, top_k: 4 }, a.key)).json.data, before);
      const content = await fetch(`${r.url}/v1/rag/corpora/${corpusId}/documents/${documentId}/content`, { headers: { authorization: `Bearer ${a.key}` } });
      assert.equal(await content.text(), readFileSync(path.join(EVAL_DOCS, "floods-pahang-2023-briefing.md"), "utf8"), "the originals are in the dump");
      assert.equal((await r.call("GET", "/v1/audit/verify")).json.valid, true);
    } finally {
      await r.close();
    }
  });
});
