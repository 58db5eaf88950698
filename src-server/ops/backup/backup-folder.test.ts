import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { BackupFolder, backupName } from "./backup-folder.js";

const root = mkdtempSync(path.join(tmpdir(), "pustaka-backup-folder-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A complete backup folder (its manifest is what makes it complete). */
function complete(dir: string, ms: number): string {
  const name = backupName(ms);
  mkdirSync(path.join(dir, name, "data"), { recursive: true });
  writeFileSync(path.join(dir, name, "manifest.json"), "{}");
  return name;
}

describe("BackupFolder", () => {
  it("names backups by their UTC start, sortable", () => {
    assert.equal(backupName(Date.UTC(2026, 10, 27, 10, 15, 30, 123)), "pustaka-backup-2026-11-27T10-15-30-123Z");
  });

  it("lists complete backups oldest first, and keeps the newest N", async () => {
    const dir = path.join(root, "retention");
    const folder = new BackupFolder(dir);
    const names = [3, 1, 2, 5, 4].map((d) => complete(dir, Date.UTC(2026, 0, d)));
    mkdirSync(path.join(dir, "not-a-backup"));
    assert.deepEqual((await folder.complete()).map((b) => b.name), [...names].sort());
    const pruned = await folder.prune(2);
    assert.deepEqual(pruned, [...names].sort().slice(0, 3));
    assert.deepEqual(readdirSync(dir).sort(), [...[...names].sort().slice(3), "not-a-backup"].sort(), "other folders are never touched");
    assert.deepEqual(await folder.prune(5), []);
  });

  it("removes unfinished backups and folders whose deletion was cut short, never complete ones", async () => {
    const dir = path.join(root, "partials");
    const folder = new BackupFolder(dir);
    const kept = complete(dir, Date.UTC(2026, 0, 1));
    const partial = `${backupName(Date.UTC(2026, 0, 2))}.partial`;
    mkdirSync(path.join(dir, partial, "data"), { recursive: true });
    const gutted = backupName(Date.UTC(2026, 0, 3));
    mkdirSync(path.join(dir, gutted, "data"), { recursive: true });
    assert.deepEqual((await folder.cleanPartials()).sort(), [gutted, partial].sort());
    assert.deepEqual(readdirSync(dir), [kept]);
  });

  it("lets one backup write at a time, and takes over the lock of a process that is gone", async () => {
    const dir = path.join(root, "lock");
    const folder = new BackupFolder(dir);
    const release = await folder.lock();
    await assert.rejects(new BackupFolder(dir).lock(), /another backup \(process \d+\) is writing into/);
    await release();
    // A lock left by a process that was killed.
    const child = spawn(process.execPath, ["-e", ""]);
    const pid = child.pid!;
    await new Promise((resolve) => child.on("exit", resolve));
    writeFileSync(path.join(dir, ".pustaka-backup.lock"), `${pid} ${hostname()}\n`);
    const again = await folder.lock();
    await again();
    assert.deepEqual(readdirSync(dir), [], "the lock is removed when released");
    // Another machine's lock (a shared disk) is not guessed at.
    writeFileSync(path.join(dir, ".pustaka-backup.lock"), "123 elsewhere\n");
    await assert.rejects(folder.lock(), /locked by a backup on another machine \(elsewhere\)/);
  });
});
