/**
 * The folder backups go to. Each backup is written as `<name>.partial/` and renamed to
 * `<name>/` once complete and durable, so a backup cut short (`kill -9`, a power cut)
 * leaves only a `.partial` folder, which the next backup removes; complete backups are
 * never touched except by retention. One backup writes into a folder at a time (a lock
 * file naming its process; a lock whose process is gone is taken over).
 */
import { hostname } from "node:os";
import { mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { BackupError, MANIFEST_FILE } from "./backup-manifest.js";

const PREFIX = "pustaka-backup-";
/** `pustaka-backup-2026-11-27T10-15-30-123Z`: the UTC time it was started, sortable. */
const NAME = /^pustaka-backup-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z$/;
const LOCK = ".pustaka-backup.lock";

export interface CompleteBackup {
  name: string;
  path: string;
  /** When it was started (ms since the epoch), from its name. */
  startedAt: number;
}

/** The folder name of a backup started at `ms`. */
export function backupName(ms: number): string {
  return PREFIX + new Date(ms).toISOString().replace(/[:.]/g, "-");
}

function startedAtOf(name: string): number | null {
  const m = NAME.exec(name);
  return m ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class BackupFolder {
  constructor(readonly dir: string) {}

  /**
   * Takes the folder's lock (creating the folder, 0700). Refused while another live
   * process on this machine holds it; a lock left by a process that is gone is taken over.
   */
  async lock(): Promise<() => Promise<void>> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, LOCK);
    const me = `${process.pid} ${hostname()}\n`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(file, me, { flag: "wx", mode: 0o600 });
        return async () => {
          if ((await readFile(file, "utf8").catch(() => "")) === me) await rm(file, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const [pid, host] = (await readFile(file, "utf8").catch(() => "")).trim().split(" ");
      const holder = Number(pid);
      if (Number.isInteger(holder) && holder > 0 && host === hostname() && alive(holder)) {
        throw new BackupError(`another backup (process ${holder}) is writing into ${this.dir}; wait for it to finish`, "backup_running");
      }
      if (host && host !== hostname()) {
        throw new BackupError(`${this.dir} is locked by a backup on another machine (${host}); if none is running, remove ${file}`, "backup_running");
      }
      // The holder is gone (killed, or the machine restarted): its lock is stale.
      await rm(file, { force: true });
    }
    throw new BackupError(`cannot take the lock ${file}`, "backup_running");
  }

  /** Removes unfinished backups (`*.partial`) left by interrupted runs; call with the lock held. Returns their names. */
  async cleanPartials(): Promise<string[]> {
    const names: string[] = [];
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const partial = name.startsWith(PREFIX) && name.endsWith(".partial");
      // A backup's folder without its manifest is one whose deletion (retention) was cut short.
      const gutted = startedAtOf(name) !== null && !(await stat(path.join(this.dir, name, MANIFEST_FILE)).catch(() => null));
      if (partial || gutted) names.push(name);
    }
    for (const name of names) await rm(path.join(this.dir, name), { recursive: true, force: true });
    return names;
  }

  /** Complete backups (a folder with a manifest), oldest first. */
  async complete(): Promise<CompleteBackup[]> {
    const out: CompleteBackup[] = [];
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const startedAt = startedAtOf(name);
      if (startedAt === null) continue;
      const full = path.join(this.dir, name);
      const manifest = await stat(path.join(full, MANIFEST_FILE)).catch(() => null);
      if (manifest?.isFile()) out.push({ name, path: full, startedAt });
    }
    return out.sort((a, b) => a.startedAt - b.startedAt);
  }

  /** Deletes the oldest complete backups beyond the newest `keep`; call with the lock held. Returns their names. */
  async prune(keep: number): Promise<string[]> {
    const all = await this.complete();
    const doomed = all.slice(0, Math.max(0, all.length - keep));
    for (const backup of doomed) {
      // The manifest first: a deletion cut short leaves a folder no longer taken for a complete backup.
      await rm(path.join(backup.path, MANIFEST_FILE), { force: true });
      await rm(backup.path, { recursive: true, force: true });
    }
    return doomed.map((b) => b.name);
  }
}
