#!/usr/bin/env node
/**
 * Builds llama.cpp and node-llama-cpp's addon from source for this machine, at install
 * (`postinstall`, after patch-package).
 *
 * Why: the addon as patched in patches/ reads each sequence's pooled embedding, which lets
 * many inputs share one llama.cpp batch (src-server/engine/embed-batcher.ts), and samples
 * greedy decoding in place (sampleGreedyToken); the prebuilt addon reads only sequence 0
 * and has no such method (node-llama-cpp then samples every token on a worker thread). A build for this CPU (GGML_NATIVE) is also faster here than
 * the prebuilt CPU variants: all-MiniLM-L6-v2 embeds in 9–10 ms per input batched against
 * 21 ms prebuilt, and 8 concurrent chat streams decode 16% faster (2-core AMD EPYC, AVX2).
 *
 * The source is the llama.cpp release node-llama-cpp pins, cloned from the git bundle that
 * ships inside the npm package: nothing is downloaded. About 5 minutes on 2 cores.
 *
 * PUSTAKA_LLAMA_BUILD=prebuilt skips it (the prebuilt binaries then serve, and embeddings
 * fall back to one input per evaluation); =force rebuilds even when a matching build exists.
 * PUSTAKA_LLAMA_GPU=auto|cuda|vulkan|metal|false picks the compute layer (default auto:
 * node-llama-cpp's detection). A failed build never fails the install: it prints why, and
 * the prebuilt binaries serve. `npm test` checks that the local build is the one loaded.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const mode = process.env.PUSTAKA_LLAMA_BUILD ?? "native";
if (mode === "prebuilt") {
  console.log("[build-llama] PUSTAKA_LLAMA_BUILD=prebuilt: using node-llama-cpp's prebuilt binaries");
  process.exit(0);
}
if (mode !== "native" && mode !== "force") {
  console.error(`[build-llama] PUSTAKA_LLAMA_BUILD must be native, force or prebuilt (got '${mode}')`);
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
const { tag } = JSON.parse(readFileSync(path.join(llamaDir, "llama.cpp.info.json"), "utf8"));
const gpu = process.env.PUSTAKA_LLAMA_GPU ?? "auto";

// What the build depends on: the package version, the llama.cpp release, the patched addon
// sources and the GPU choice. A build with the same stamp is not redone.
const hash = createHash("sha256");
hash.update(readFileSync(path.join(packageDir, "package.json")));
hash.update(`${tag}\0${gpu}\0${process.arch}\0${process.versions.modules}`);
for (const file of ["AddonContext.cpp", "AddonContext.h"]) hash.update(readFileSync(path.join(llamaDir, "addon", file)));
const stamp = hash.digest("hex");
const stampFile = path.join(llamaDir, "localBuilds", ".pustaka-build-stamp");
if (mode === "native" && existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === stamp) {
  console.log(`[build-llama] llama.cpp ${tag} is already built for this machine`);
  process.exit(0);
}

for (const tool of ["cmake", "c++"]) {
  if (spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0) {
    console.warn(`[build-llama] '${tool}' was not found: keeping the prebuilt llama.cpp binaries (embeddings are not batched). Install cmake and a C++ compiler, then run 'npm rebuild' or 'node scripts/build-llama.mjs'.`);
    process.exit(0);
  }
}

console.log(`[build-llama] building llama.cpp ${tag} for this machine (gpu: ${gpu}); about 5 minutes on 2 cores`);
const started = Date.now();
const cli = path.join(packageDir, "dist", "cli", "cli.js");
const result = spawnSync(process.execPath, [cli, "source", "download", "--release", tag, "--gpu", gpu, "--noUsageExample"], {
  stdio: ["ignore", "inherit", "inherit"],
  // Plain progress lines: the build's log is read in CI output, not a terminal.
  env: { ...process.env, CI: process.env.CI ?? "true" },
});
if (result.status !== 0) {
  console.warn(`[build-llama] the llama.cpp build failed (exit ${result.status ?? result.signal}): keeping the prebuilt binaries (embeddings are not batched)`);
  process.exit(0);
}
writeFileSync(stampFile, `${stamp}\n`);
console.log(`[build-llama] done in ${Math.round((Date.now() - started) / 1000)} s`);
