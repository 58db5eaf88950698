#!/usr/bin/env node
/**
 * `pustaka`: the command line's entry. `pustaka serve` runs the server in a child process
 * under a supervisor (src-server/supervisor/) that reports and restarts it when native code
 * kills it; the supervisor loads nothing else, so it costs a bare Node process. Everything
 * else, and the supervised child itself, runs cli-program.ts.
 */
import { superviseServer } from "./supervisor/serve-supervisor.js";

const args = process.argv.slice(2);
const supervise = args[0] === "serve" && !args.some((a) => a === "--supervised" || a === "--no-supervise" || a === "--help" || a === "-h");
if (supervise) {
  // A server that cannot start (a bad option or configuration, a port in use) says why and is not restarted.
  process.exitCode = await superviseServer({ module: process.argv[1]!, args: [...args, "--supervised"] });
} else {
  const { runCli } = await import("./cli-program.js");
  await runCli(process.argv);
}
