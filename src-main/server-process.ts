/**
 * Entry of the server's utility process (`utilityProcess.fork`). Everything it needs,
 * the API key included, arrives in the first message from the main process.
 */
import { runServerProcess, type ParentPortLike } from "./run-server-process.js";

// Electron adds `parentPort` to `process` in a utility process (and only there).
const parentPort = (process as NodeJS.Process & { parentPort?: ParentPortLike }).parentPort;
if (!parentPort) {
  process.stderr.write("server-process.js runs inside Electron's utilityProcess; use `pustaka serve` for a headless server\n");
  process.exit(2);
}
const handle = runServerProcess(parentPort, { exit: (code) => process.exit(code) });
process.once("SIGTERM", () => void handle.stop());
