/**
 * Backups the server takes itself (`backup: { dir, everyHours, keep }`), with the real
 * server and the real `pustaka` command: taken on schedule by the same code as the CLI,
 * the newest `keep` kept, each logged and audited (actor `system`); a failing one logged and
 * audited as a failure; a backup folder inside the data folder refused at start. The
 * configuration shown in docs/backup-restore.md is the one used here (its interval shortened).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { pustaka } from "../helpers/pustaka-cli.js";
import { startTestServer } from "../helpers/test-server.js";

/** The `backup` block of the configuration example in docs/backup-restore.md. */
function documentedSchedule(): { dir: string; everyHours: number; keep: number } {
  const doc = readFileSync(path.join(REPO_ROOT, "docs", "backup-restore.md"), "utf8");
  const json = /<!-- config: backup -->\n```json\n([\s\S]*?)\n```/.exec(doc)?.[1];
  assert.ok(json, "docs/backup-restore.md shows the backup configuration");
  return (JSON.parse(json) as { backup: { dir: string; everyHours: number; keep: number } }).backup;
}

function logStream(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (d: Buffer) => (text += d.toString()));
  return { stream, text: () => text };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("scheduled backups", () => {
  let work: string;
  before(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-backup-schedule-"));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("takes backups on schedule, keeps the newest N, and logs and audits each", { timeout: 600_000 }, async () => {
    const documented = documentedSchedule();
    assert.ok(documented.dir && documented.everyHours > 0 && documented.keep >= 1);
    const dir = path.join(work, "backups");
    const dataDir = path.join(work, "data");
    const logs = logStream();
    // The documented settings, every 1.8 seconds instead of hours.
    const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, dataDir, logStream: logs.stream, config: { backup: { ...documented, dir, everyHours: 0.0005, keep: 2 } } });
    try {
      const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "Banjir", embedding_model: "minilm" })).json.id;
      assert.equal((await upload(t, corpus, [evalDoc("banjir-kelantan-2022.md")])).status, 202);
      assert.equal((await waitForStatus(t, corpus)).status, "ready");
      const entries = await until("three scheduled backups", async () => {
        const data = (await t.call("GET", "/v1/audit/events?chain=instance&type=backup.create&order=asc&limit=100")).json.data as any[];
        return data.filter((e) => e.outcome === "success").length >= 3 ? data : undefined;
      });
      for (const e of entries) {
        assert.equal(e.actor, "system");
        assert.equal(e.outcome, "success", JSON.stringify(e.data));
        assert.equal(e.data.trigger, "schedule");
        assert.equal(e.data.dir, dir);
      }
      assert.match(logs.text(), /"msg":"scheduled backups"/);
      assert.match(logs.text(), /"msg":"backup complete"/);
    } finally {
      // Stops the schedule; a backup under way is abandoned and its folder removed.
      await t.close();
    }
    const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
    const names = (db.prepare("SELECT body FROM audit_events WHERE type = 'backup.create' AND outcome = 'success' ORDER BY seq").pluck().all() as string[]).map((body) => JSON.parse(body).name as string);
    db.close();
    const left = readdirSync(dir)
      .filter((n) => !n.startsWith("."))
      .sort();
    assert.deepEqual(left, names.slice(-2), "the two newest remain, the older ones were deleted");
    assert.ok(names.length >= 3);
    const newest = await pustaka(["restore", path.join(dir, names.at(-1)!), "--dry-run", "--kek-file", path.join(dataDir, "keys", "kek.bin")]);
    assert.equal(newest.status, 0, newest.stderr);
    assert.match(newest.stdout, /audit trail: VALID/);
  });

  it("logs and audits a scheduled backup that fails", { timeout: 300_000 }, async () => {
    const notAFolder = path.join(work, "a-file");
    writeFileSync(notAFolder, "not a folder");
    const logs = logStream();
    const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, logStream: logs.stream, config: { backup: { dir: notAFolder, everyHours: 0.0005, keep: 2 } } });
    try {
      const failed = await until("a failed backup in the audit trail", async () => ((await t.call("GET", "/v1/audit/events?chain=instance&type=backup.create")).json.data as any[]).find((e) => e.outcome === "failure"));
      assert.equal(failed.actor, "system");
      assert.equal(failed.data.dir, notAFolder);
      assert.match(failed.data.error, /EEXIST|ENOTDIR|not a directory|file already exists/);
      assert.match(logs.text(), /"msg":"scheduled backup failed"/);
      assert.equal((await t.call("GET", "/healthz")).status, 200, "the server keeps serving");
    } finally {
      await t.close();
    }
    assert.equal(readFileSync(notAFolder, "utf8"), "not a folder");
  });

  it("refuses at start a backup folder inside the data folder", { timeout: 120_000 }, async () => {
    const dataDir = path.join(work, "inside");
    await assert.rejects(
      startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, dataDir, config: { backup: { dir: path.join(dataDir, "backups") } } }),
      /backup\.dir .*inside the data folder .*: put backups elsewhere/,
    );
  });
});
