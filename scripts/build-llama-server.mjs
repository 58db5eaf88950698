#!/usr/bin/env node
/**
 * Builds llama.cpp's own `llama-server` for the tests and benchmarks that need a real
 * upstream inference server (remote models: src-server/engine/remote/), and prints the
 * binary's path on its last line.
 *
 * The source is the llama.cpp that node-llama-cpp ships (and `npm install` already unpacked
 * for Pustaka's own build, scripts/build-llama.mjs): no download, and the peer is the same
 * llama.cpp release as the engine it is compared with. Only the `llama-server` target is
 * compiled (ggml, libllama, common, mtmd and the server: about 8 minutes on 2 cores); the CPU
 * backends are the portable variants the install already built (libggml-cpu-*.so, one per
 * x86-64 level, the best loaded at run time), copied beside the binary, so both servers run
 * the same kernels on whatever CPU this is. When the install made no portable build
 * (PUSTAKA_LLAMA_BUILD=prebuilt or native), the variants are built here as well.
 *
 * Cached in $PUSTAKA_CACHE_DIR (default ~/.cache/pustaka)/llama-server/<key>, the key being
 * the llama.cpp release and these options: a second run on the same machine is instant.
 *
 * Usage: node scripts/build-llama-server.mjs [--quiet]
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const quiet = process.argv.includes("--quiet");
const log = (message) => {
  if (!quiet) console.error(`[build-llama-server] ${message}`);
};
const fail = (message) => {
  console.error(`[build-llama-server] ${message}`);
  process.exit(1);
};

const llamaDir = path.join(root, "node_modules", "node-llama-cpp", "llama");
const source = path.join(llamaDir, "llama.cpp");
if (!existsSync(path.join(source, "tools", "server", "CMakeLists.txt"))) {
  fail(`llama.cpp's source is not unpacked at ${source}: run \`npm install\` first (it builds llama.cpp from it)`);
}
const release = readJson(path.join(llamaDir, "binariesGithubRelease.json"))?.release ?? "unknown";
// With the install's variants at hand, one generic CPU backend is compiled (ggml depends on
// it) and set aside; without them every variant is compiled here.
const installed = installedVariants();
const options = {
  CMAKE_BUILD_TYPE: "Release",
  BUILD_SHARED_LIBS: "ON",
  GGML_NATIVE: "OFF",
  GGML_BACKEND_DL: "ON",
  GGML_CPU_ALL_VARIANTS: installed ? "OFF" : "ON",
  LLAMA_BUILD_SERVER: "ON",
  LLAMA_BUILD_TOOLS: "ON",
  LLAMA_BUILD_TESTS: "OFF",
  LLAMA_BUILD_EXAMPLES: "OFF",
  LLAMA_BUILD_UI: "OFF",
  LLAMA_CURL: "OFF",
  LLAMA_OPENSSL: "OFF",
  // Libraries found beside the binary wherever the cache is, under the plain names the
  // install's CPU variants link against (libggml-base.so): one copy of each loaded.
  CMAKE_BUILD_RPATH_USE_ORIGIN: "ON",
  CMAKE_PLATFORM_NO_VERSIONED_SONAME: "ON",
};
const key = createHash("sha256").update(JSON.stringify({ release, options, version: 1 })).digest("hex").slice(0, 16);
const cacheRoot = process.env.PUSTAKA_CACHE_DIR ?? path.join(os.homedir(), ".cache", "pustaka");
const target = path.join(cacheRoot, "llama-server", `${release}-${key}`);
const binary = path.join(target, "llama-server");

if (works(binary)) {
  log(`cached: ${binary}`);
  console.log(binary);
  process.exit(0);
}

const cmake = spawnSync("cmake", ["--version"], { encoding: "utf8" });
if (cmake.status !== 0) fail("cmake is not installed (Debian: apt-get install cmake g++)");
const generator = spawnSync("ninja", ["--version"], { encoding: "utf8" }).status === 0 ? ["-G", "Ninja"] : [];
const build = path.join(cacheRoot, "llama-server", `.build-${key}`);
mkdirSync(build, { recursive: true });
const started = Date.now();
log(`building llama-server from llama.cpp ${release} (node-llama-cpp's source) into ${target}`);
run("cmake", ["-S", source, "-B", build, ...generator, ...Object.entries(options).map(([name, value]) => `-D${name}=${value}`)]);
const jobs = String(Math.max(1, os.availableParallelism()));
run("cmake", ["--build", build, "--target", "llama-server", "-j", jobs]);

// The CPU backends: the install's portable variants when it made them from this release
// (ggml loads the best libggml-cpu-*.so for the CPU; the generic one is left out), else the
// variants just built.
const bin = path.join(build, "bin");
if (installed) {
  log(`CPU backends: the ${installed.length} variants of the install's portable build`);
  rmSync(path.join(bin, "libggml-cpu.so"), { force: true });
  for (const file of installed) copyFileSync(file, path.join(bin, path.basename(file)));
}

// Only what the server loads goes into the cache: the binary and its shared libraries.
const staging = `${target}.partial`;
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });
for (const name of readdirSync(bin)) {
  if (name === "llama-server" || name.endsWith(".so")) copyFileSync(path.join(bin, name), path.join(staging, name));
}
spawnSync("chmod", ["+x", path.join(staging, "llama-server")]);
rmSync(target, { recursive: true, force: true });
renameSync(staging, target);
writeFileSync(path.join(target, "build.json"), `${JSON.stringify({ release, options, builtAt: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`);
rmSync(build, { recursive: true, force: true });
if (!works(binary)) fail(`the llama-server just built does not start: ${binary}`);
log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
console.log(binary);

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

function works(file) {
  if (!existsSync(file)) return false;
  const result = spawnSync(file, ["--version"], { encoding: "utf8", timeout: 30_000 });
  return result.status === 0 && /version/.test(`${result.stdout}${result.stderr}`);
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: ["ignore", quiet ? "ignore" : process.stderr, process.stderr] });
  if (result.status !== 0) fail(`${command} ${args.slice(0, 3).join(" ")} … failed (exit ${result.status ?? result.signal})`);
}

/** The install's portable CPU backend variants (libggml-cpu-*.so), when its build is of this release. */
function installedVariants() {
  const record = readJson(path.join(llamaDir, "localBuilds", "pustaka-build.json"));
  if (record?.mode !== "portable" || record.llamaCpp !== release) return null;
  for (const entry of readdirSync(path.join(llamaDir, "localBuilds"), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(llamaDir, "localBuilds", entry.name, "Release");
    if (!existsSync(dir)) continue;
    const files = readdirSync(dir).filter((name) => /^libggml-cpu-.+\.so$/.test(name));
    if (files.length > 1) return files.map((name) => path.join(dir, name));
  }
  return null;
}
