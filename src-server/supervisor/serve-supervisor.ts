/**
 * `pustaka serve` runs the server in a child process and watches it, as the desktop shell
 * watches its utility process: llama.cpp is native code, and an illegal instruction, an
 * abort or the out-of-memory killer ends a process without a word from JavaScript. The
 * supervisor outlives that, says what happened (the signal in words, and the requests and
 * models the server was working on, which the child reports as it goes), writes it to the
 * server's log, and starts the server again with backoff (1, 2, 4, 8, 16 s); after 5 crashes
 * in a row it stops and says so. SIGINT and SIGTERM are passed on: the child shuts down
 * cleanly and the supervisor exits with it.
 */
import { fork, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { serverProcessEnvironment } from "../process-environment.js";
import { describeExit, isCrash } from "./exit-words.js";
import type { ActiveWork, SupervisorMessage } from "./supervisor-protocol.js";

export interface SupervisorOptions {
  /** The module to fork (the CLI) and its arguments (`serve … --supervised`). */
  module: string;
  args: string[];
  /** Seconds to wait before each restart; its length is the crashes in a row allowed. */
  backoffSeconds?: number[];
  /** A child that served this long is healthy: its crash starts the count again. */
  healthyAfterMs?: number;
  /** Where a person reads (default: stderr). */
  write?: (text: string) => void;
}

const DEFAULT_BACKOFF = [1, 2, 4, 8, 16];

function describeWork(work: ActiveWork[]): string {
  if (work.length === 0) return "no model work was in progress (it died elsewhere)";
  const items = work.slice(0, 8).map((w) => `${w.op} on model '${w.model}'${w.requestId ? ` for request ${w.requestId}` : " (background work)"}, ${Math.round((Date.now() - w.since) / 1000)} s in`);
  return `it was working on: ${items.join("; ")}${work.length > 8 ? `; and ${work.length - 8} more` : ""}`;
}

/** Runs the server child until it stops cleanly, or crashes too often. Resolves with the exit code for this process. */
export function superviseServer(options: SupervisorOptions): Promise<number> {
  const backoff = options.backoffSeconds ?? DEFAULT_BACKOFF;
  const healthyAfterMs = options.healthyAfterMs ?? 60_000;
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  let child: ChildProcess | null = null;
  let stopping: NodeJS.Signals | null = null;
  let crashesInRow = 0;
  let restartTimer: NodeJS.Timeout | null = null;

  return new Promise<number>((resolve) => {
    const forward = (signal: NodeJS.Signals) => {
      if (stopping && child) {
        // A second Ctrl-C: force.
        child.kill("SIGKILL");
        return;
      }
      stopping = signal;
      if (restartTimer) {
        clearTimeout(restartTimer);
        resolve(130);
        return;
      }
      child?.kill(signal);
    };
    const onInt = () => forward("SIGINT");
    const onTerm = () => forward("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    const finish = (code: number) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve(code);
    };

    const start = () => {
      restartTimer = null;
      const startedAt = Date.now();
      let work: ActiveWork[] = [];
      let logFile: string | null = null;
      let ready = false;
      // Its own process group: a Ctrl-C at the terminal reaches the supervisor alone, which passes it on once.
      // glibc reads its tunables at start: the server's environment asks for huge pages (engine/huge-pages.ts).
      const current = fork(options.module, options.args, { stdio: ["inherit", "inherit", "inherit", "ipc"], detached: true, env: serverProcessEnvironment() });
      child = current;
      current.on("message", (message: SupervisorMessage) => {
        if (message?.type === "activity") work = message.work;
        else if (message?.type === "ready") {
          ready = true;
          logFile = message.logFile;
        }
      });
      current.on("error", (error) => write(`pustaka: could not start the server: ${error.message}\n`));
      current.on("exit", (code, signal) => {
        child = null;
        // A server that never became ready and exited by itself said why (a port in use, a
        // missing model): starting it again would only say it again.
        if (stopping || !isCrash(code, signal) || (!ready && !signal)) {
          finish(code ?? (signal ? 1 : 0));
          return;
        }
        crashesInRow = Date.now() - startedAt >= healthyAfterMs ? 1 : crashesInRow + 1;
        const what = describeExit(code, signal);
        const doing = describeWork(work);
        const last = crashesInRow > backoff.length;
        const wait = last ? 0 : backoff[crashesInRow - 1]!;
        write(`\npustaka: the server stopped unexpectedly: ${what}.\n  ${doing}.\n` + (last ? `  It crashed ${crashesInRow} times in a row; not restarting. The server log has the details${logFile ? ` (${logFile})` : ""}.\n` : `  Restarting in ${wait} s (crash ${crashesInRow} of ${backoff.length} in a row allowed).\n`));
        if (logFile) {
          try {
            mkdirSync(path.dirname(logFile), { recursive: true });
            appendFileSync(logFile, `${JSON.stringify({ level: 60, time: Date.now(), pid: current.pid, msg: "server process crashed", exit: what, code, signal, work, crashesInRow, restarting: !last })}\n`);
          } catch {
            // The terminal already has it.
          }
        }
        if (last) {
          finish(1);
          return;
        }
        restartTimer = setTimeout(start, wait * 1000);
      });
    };
    start();
  });
}
