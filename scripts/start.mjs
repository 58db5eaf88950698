#!/usr/bin/env node
// `npm start`: builds what is missing or older than its sources, then runs `pustaka serve`
// (the API and the workbench) with any extra arguments: `npm start -- --port 8080`.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const outputs = ["dist/src-server/cli.js", "dist/renderer/index.html", "dist/src-main/preload.cjs"].map((f) => path.join(root, f));
const sources = ["src-server", "src-renderer", "src-main", "models"].map((d) => path.join(root, d));

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

const built = outputs.every(existsSync) ? Math.min(...outputs.map((f) => statSync(f).mtimeMs)) : 0;
if (built < Math.max(...sources.filter(existsSync).map(newest))) {
  process.stderr.write("Building Pustaka (server, workbench)…\n");
  const build = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const serve = spawnSync(process.execPath, [path.join(root, "dist/src-server/cli.js"), "serve", ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(serve.status ?? 1);
