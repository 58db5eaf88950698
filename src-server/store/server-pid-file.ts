/**
 * `<data-dir>/server.pid`: which process serves a data directory, so offline commands
 * that must not race a running server (`pustaka keys rotate-kek`) can refuse. Advisory:
 * the server writes it when it starts and removes it when it closes; a file naming a
 * process that no longer exists (a crash) is ignored.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const NAME = "server.pid";

/** Records this process as the data directory's server; returns the function that removes the record. */
export function markServerRunning(dataDir: string): () => void {
  if (dataDir === ":memory:") return () => undefined;
  const file = path.join(dataDir, NAME);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    // Only our own record: another server may have started on the folder since.
    if (readPid(file) === process.pid) rmSync(file, { force: true });
  };
}

/** The pid of a live process serving `dataDir`, or null. */
export function runningServerPid(dataDir: string): number | null {
  const pid = readPid(path.join(dataDir, NAME));
  if (pid === null) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: alive, but someone else's.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : null;
  }
}

function readPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
