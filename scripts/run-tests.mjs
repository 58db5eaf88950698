#!/usr/bin/env node
// Runs the test files with Node's own test runner (TypeScript through tsx).
// Usage: node scripts/run-tests.mjs [unit|integration|all] [extra node --test flags]
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const suite = process.argv[2] ?? "all";
const extra = process.argv.slice(3);

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) find(full, out);
    else if (name.endsWith(".test.ts")) out.push(path.relative(root, full));
  }
  return out;
}

// src-renderer has its own runner (Vitest with jsdom): `npm run test:renderer`.
const unit = ["src-server", "src-main"].flatMap((d) => { try { return find(path.join(root, d)); } catch { return []; } });
const integration = find(path.join(root, "test"));
const files = suite === "unit" ? unit : suite === "integration" ? integration : [...unit, ...integration];
if (files.length === 0) {
  console.error(`no test files for suite '${suite}'`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...extra, ...files.sort()], {
  cwd: root,
  stdio: "inherit",
});
process.exit(result.status ?? 1);
