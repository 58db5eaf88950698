// Stands in for Electron's utility process: gives the module `process.parentPort` over
// Node's IPC channel, then loads it. Usage: fork(utility-shim.mjs, [modulePath]).
import { pathToFileURL } from "node:url";

process.parentPort = {
  on: (event, listener) => event === "message" && process.on("message", (data) => listener({ data, ports: [] })),
  postMessage: (message) => process.send(message),
};
await import(pathToFileURL(process.argv[2]).href);
