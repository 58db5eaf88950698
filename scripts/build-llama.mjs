#!/usr/bin/env node
/**
 * Builds llama.cpp and node-llama-cpp's addon from source at install (`postinstall`, after
 * patch-package), tests the build on this machine, and records both for the engine.
 *
 * Why a build at all: the addon as patched in patches/ reads each sequence's pooled
 * embedding (many inputs share one llama.cpp batch: src-server/engine/embed-batcher.ts),
 * samples greedy decoding in place (sampleGreedyToken) and decodes on a thread of its own;
 * the prebuilt addon has none of these.
 *
 * Portable by default: GGML_NATIVE off, and every x86-64 CPU backend variant that
 * llama.cpp's own releases ship (x64, SSE4.2, Sandy Bridge … Zen 4, Sapphire Rapids with
 * AMX) built as its own library (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS); ggml scores the
 * variants against this CPU's features when it starts and loads the best one. So the build
 * that install makes, and the one `npm run dist` packages, runs on every CPU the prebuilt
 * binaries run on. (A `-march=native` build made on one machine died with SIGILL on another:
 * AMX instructions on an Intel Xeon whose tiles were not usable.)
 *
 * Then the self-test (scripts/llama-self-test.ts): a tiny model decoded and embedded through
 * the engine in a child process, compared with the prebuilt binaries. Only a build that
 * passes serves (`engine.build: auto`); on a crash or a wrong result the prebuilt binaries
 * serve and this prints why. The result is recorded in
 * node_modules/node-llama-cpp/llama/localBuilds/pustaka-build.json.
 *
 * PUSTAKA_LLAMA_BUILD=portable (default) | native (this CPU only: faster to build, never to
 * be shipped) | prebuilt (skip the build). PUSTAKA_LLAMA_REBUILD=1 rebuilds even when a
 * build with the same inputs exists. PUSTAKA_LLAMA_GPU=auto|cuda|vulkan|metal|false picks the
 * compute layer (default auto: node-llama-cpp's detection). The source is the llama.cpp
 * release node-llama-cpp pins, cloned from the git bundle inside the npm package: nothing is
 * downloaded. A failed build or self-test never fails the install.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const log = (message) => console.log(`[build-llama] ${message}`);
const warn = (message) => console.warn(`[build-llama] ${message}`);

let mode = process.env.PUSTAKA_LLAMA_BUILD ?? "portable";
let rebuild = process.env.PUSTAKA_LLAMA_REBUILD === "1";
if (mode === "force") {
  // Earlier name of a forced rebuild.
  mode = "portable";
  rebuild = true;
}
if (!["portable", "native", "prebuilt"].includes(mode)) {
  console.error(`[build-llama] PUSTAKA_LLAMA_BUILD must be portable, native or prebuilt (got '${mode}')`);
  process.exit(1);
}

const require = createRequire(import.meta.url);
/** node-llama-cpp's package folder (its exports map does not include package.json). */
function packageRoot(entry) {
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === "node-llama-cpp") return dir;
  }
  throw new Error(`no node-llama-cpp package above ${entry}`);
}
const packageDir = packageRoot(require.resolve("node-llama-cpp"));
const llamaDir = path.join(packageDir, "llama");
const buildsDir = path.join(llamaDir, "localBuilds");
const recordFile = path.join(buildsDir, "pustaka-build.json");
const { tag } = JSON.parse(readFileSync(path.join(llamaDir, "llama.cpp.info.json"), "utf8"));
const gpu = process.env.PUSTAKA_LLAMA_GPU ?? "auto";

/** Removes every local build and the record: node-llama-cpp then loads its prebuilt binaries. */
function clearLocalBuilds() {
  if (existsSync(buildsDir)) for (const name of readdirSync(buildsDir)) rmSync(path.join(buildsDir, name), { recursive: true, force: true });
}

if (mode === "prebuilt") {
  clearLocalBuilds();
  log("PUSTAKA_LLAMA_BUILD=prebuilt: node-llama-cpp's prebuilt binaries serve (embeddings one input per evaluation)");
  process.exit(0);
}

// GGML_NATIVE must be said either way: node-llama-cpp turns it on for a local build unless told.
const cmakeOptions = mode === "portable" ? { GGML_NATIVE: "OFF", GGML_BACKEND_DL: "ON", GGML_CPU_ALL_VARIANTS: "ON" } : { GGML_NATIVE: "ON" };

// What the build depends on: the package version, the llama.cpp release, the patched addon
// sources, the options and the GPU choice. A build with the same stamp is not redone.
const hash = createHash("sha256");
hash.update(readFileSync(path.join(packageDir, "package.json")));
hash.update(`${tag}\0${gpu}\0${process.arch}\0${process.versions.modules}\0${JSON.stringify(cmakeOptions)}`);
for (const file of ["addon.cpp", "AddonContext.cpp", "AddonContext.h"]) hash.update(readFileSync(path.join(llamaDir, "addon", file)));
const stamp = hash.digest("hex");

const previous = (() => {
  try {
    return JSON.parse(readFileSync(recordFile, "utf8"));
  } catch {
    return null;
  }
})();
if (!rebuild && previous?.stamp === stamp) {
  log(`llama.cpp ${tag} is already built (${previous.mode}); self-test ${previous.selfTest.passed ? `passed (CPU variant ${previous.selfTest.variant ?? "built in"})` : `FAILED: ${previous.selfTest.reason}`}`);
  process.exit(0);
}

for (const tool of ["cmake", "c++"]) {
  if (spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0) {
    clearLocalBuilds();
    warn(`'${tool}' was not found: node-llama-cpp's prebuilt binaries serve (embeddings are not batched). Install cmake and a C++ compiler, then run 'npm rebuild' or 'node scripts/build-llama.mjs'.`);
    process.exit(0);
  }
}

// Older installs left builds under other names (the native build had no options): only this one may remain.
clearLocalBuilds();
log(`building llama.cpp ${tag} (${mode}${mode === "portable" ? ": every CPU variant, chosen at run time" : ": this CPU only"}; gpu: ${gpu}); about ${mode === "portable" ? 12 : 5} minutes on 2 cores`);
const started = Date.now();
const cli = path.join(packageDir, "dist", "cli", "cli.js");
const optionEnv = Object.fromEntries(Object.entries(cmakeOptions).map(([k, v]) => [`NODE_LLAMA_CPP_CMAKE_OPTION_${k}`, v]));
const result = spawnSync(process.execPath, [cli, "source", "download", "--release", tag, "--gpu", gpu, "--noUsageExample"], {
  stdio: ["ignore", "inherit", "inherit"],
  // Plain progress lines: the build's log is read in CI output, not a terminal.
  env: { ...process.env, ...optionEnv, CI: process.env.CI ?? "true" },
});
if (result.status !== 0) {
  clearLocalBuilds();
  warn(`the llama.cpp build failed (exit ${result.status ?? result.signal}): node-llama-cpp's prebuilt binaries serve (embeddings are not batched)`);
  process.exit(0);
}
const built = readdirSync(buildsDir, { withFileTypes: true }).find((d) => d.isDirectory() && existsSync(path.join(buildsDir, d.name, "Release", "_nlcBuildMetadata.json")));
const metadata = built ? JSON.parse(readFileSync(path.join(buildsDir, built.name, "Release", "_nlcBuildMetadata.json"), "utf8")) : null;
log(`built in ${Math.round((Date.now() - started) / 1000)} s${built ? ` (${built.name})` : ""}`);

const record = {
  version: 1,
  stamp,
  mode,
  cmakeOptions,
  gpu: metadata?.buildOptions?.gpu ?? false,
  llamaCpp: tag,
  builtAt: new Date().toISOString(),
  selfTest: { passed: false, reason: "not run yet", variant: null, at: new Date().toISOString() },
};
mkdirSync(buildsDir, { recursive: true });
writeFileSync(recordFile, `${JSON.stringify(record, null, 2)}\n`);

log("self-test: a tiny model decoded and embedded on this build in a child process, against the prebuilt binaries");
const test = spawnSync(process.execPath, ["--import", "tsx", path.join(root, "scripts", "llama-self-test.ts"), "--record", recordFile, "--json"], { cwd: root, encoding: "utf8", timeout: 600_000 });
const line = (test.stdout ?? "").trim().split("\n").pop() ?? "";
let verdict;
try {
  verdict = JSON.parse(line);
} catch {
  verdict = { passed: false, reason: `the self-test did not report (exit ${test.status ?? test.signal}): ${(test.stderr ?? "").trim().split("\n").slice(-3).join(" | ")}`, variant: null };
}
record.selfTest = { passed: verdict.passed === true, reason: verdict.reason ?? null, variant: verdict.variant ?? null, at: new Date().toISOString() };
writeFileSync(recordFile, `${JSON.stringify(record, null, 2)}\n`);
if (record.selfTest.passed) {
  log(`self-test passed on the ${record.selfTest.variant ?? "built-in"} CPU variant: this build serves (batched embeddings ${verdict.batchedEmbeddings ? "on" : "off"})`);
} else {
  warn(`self-test FAILED: ${record.selfTest.reason}`);
  warn("node-llama-cpp's prebuilt binaries serve instead (embeddings one input per evaluation). The build is kept for diagnosis; `npm run llama:self-test` runs the test again.");
}
