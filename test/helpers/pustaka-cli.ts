/**
 * The real `pustaka` command through tsx, as a user runs it, for tests that drive the CLI
 * against a server running in the test process. Every invocation is recorded, so a test
 * can check that each command a document shows was run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "./models.js";

/** One process (tsx's loader inside it, not tsx's launcher beside it), so a signal reaches the command itself. */
export const CLI = ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts")];

export interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Argument lists of every `pustaka` run started through this module. */
export const cliRuns: string[][] = [];

/** Starts `pustaka args…`; `onStderr` sees the error stream as it comes (to act mid-run). */
export function startPustaka(args: string[], env: Record<string, string> = {}, onStderr?: (text: string, child: ChildProcess) => void): { child: ChildProcess; done: Promise<CliRun> } {
  cliRuns.push(args);
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, PUSTAKA_API_KEY: "", PUSTAKA_DATA_DIR: "", ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    onStderr?.(stderr, child);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
  const done = new Promise<CliRun>((resolve) =>
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    }),
  );
  return { child, done };
}

/** Runs `pustaka args…` to the end. */
export function pustaka(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return startPustaka(args, env).done;
}
