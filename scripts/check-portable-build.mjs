#!/usr/bin/env node
/**
 * Checks that the llama.cpp built at install may ship to other machines (`npm run dist`
 * runs it first; a test runs it in CI): built portable (GGML_NATIVE off) with its self-test
 * passed, every CPU backend variant of the platform present, and — read from the machine
 * code with objdump — no vector instructions beyond the x86-64 baseline outside the CPU
 * variants, which ggml loads only on a CPU that has them (256-bit AVX `%ymm`, AVX-512 `%zmm`,
 * AMX tiles). Prints each binary with the widest registers it uses; exit 1 when anything
 * fails, 0 otherwise.
 *
 *   node scripts/check-portable-build.mjs [--json]
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** The x86-64 variants llama.cpp builds with GGML_CPU_ALL_VARIANTS (ggml/src/CMakeLists.txt). */
const X64_VARIANTS = ["x64", "sse42", "sandybridge", "ivybridge", "piledriver", "haswell", "skylakex", "cannonlake", "cascadelake", "icelake", "cooperlake", "zen4", "alderlake", "sapphirerapids"];

const require = createRequire(import.meta.url);
let packageDir = path.dirname(require.resolve("node-llama-cpp"));
while (!existsSync(path.join(packageDir, "llama", "llama.cpp.info.json"))) packageDir = path.dirname(packageDir);
const buildsDir = path.join(packageDir, "llama", "localBuilds");
const problems = [];
const report = { record: null, folder: null, binaries: [] };

const recordFile = path.join(buildsDir, "pustaka-build.json");
const record = existsSync(recordFile) ? JSON.parse(readFileSync(recordFile, "utf8")) : null;
report.record = record;
if (!record) problems.push(`no llama.cpp build record at ${recordFile}: the install built nothing (PUSTAKA_LLAMA_BUILD=prebuilt, or the build failed); only node-llama-cpp's prebuilt binaries would ship`);
else {
  if (record.mode !== "portable") problems.push(`the build is '${record.mode}', made for this CPU only: rebuild with PUSTAKA_LLAMA_BUILD=portable PUSTAKA_LLAMA_REBUILD=1 npm rebuild node-llama-cpp (or npm install) before packaging`);
  if (!record.selfTest?.passed) problems.push(`the build failed its self-test: ${record.selfTest?.reason ?? "not run"}`);
}

const folder = existsSync(buildsDir) ? readdirSync(buildsDir).find((name) => existsSync(path.join(buildsDir, name, "Release", "_nlcBuildMetadata.json"))) : undefined;
if (folder) {
  report.folder = folder;
  const cache = path.join(buildsDir, folder, "CMakeCache.txt");
  if (existsSync(cache) && /^GGML_NATIVE:BOOL=ON$/m.test(readFileSync(cache, "utf8"))) problems.push("CMakeCache.txt says GGML_NATIVE=ON");
  const release = path.join(buildsDir, folder, "Release");
  const files = readdirSync(release).filter((f) => /\.(so|node|dylib|dll)$/.test(f));
  const variants = files.map((f) => /^libggml-cpu-(.+)\.(?:so|dylib|dll)$/.exec(f)?.[1]).filter(Boolean);
  if (process.arch === "x64") {
    const missing = X64_VARIANTS.filter((v) => !variants.includes(v));
    if (missing.length) problems.push(`CPU variants missing: ${missing.join(", ")}`);
  }
  const objdump = spawnSync("objdump", ["--version"], { stdio: "ignore" }).status === 0;
  if (!objdump && process.arch === "x64") problems.push("objdump (binutils) is needed to read the machine code");
  for (const file of files) {
    const entry = { file, variant: /^libggml-cpu-(.+)\./.exec(file)?.[1] ?? null, ymm: null, zmm: null, amx: null };
    if (objdump && process.arch === "x64") {
      const dump = spawnSync("objdump", ["-d", "--no-show-raw-insn", path.join(release, file)], { encoding: "utf8", maxBuffer: 512 * 1024 * 1024 });
      const text = dump.stdout ?? "";
      entry.ymm = (text.match(/%ymm/g) ?? []).length;
      entry.zmm = (text.match(/%zmm/g) ?? []).length;
      entry.amx = (text.match(/%tmm|\btile(?:zero|loadd|stored|release)\b/g) ?? []).length;
      // Outside a CPU variant (and the baseline x64 variant itself), anything wider than SSE
      // would run on every CPU, whatever it has.
      if ((entry.variant === null || entry.variant === "x64") && entry.ymm + entry.zmm + entry.amx > 0) {
        problems.push(`${file} is not portable: ${entry.ymm} AVX, ${entry.zmm} AVX-512 and ${entry.amx} AMX register uses outside the runtime-dispatched CPU variants`);
      }
    }
    report.binaries.push(entry);
  }
} else if (record) problems.push(`no built llama.cpp under ${buildsDir}`);

report.problems = problems;
if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  if (record) process.stdout.write(`llama.cpp ${record.llamaCpp}, ${record.mode} build, self-test ${record.selfTest?.passed ? `passed (CPU variant here: ${record.selfTest.variant ?? "built in"})` : "NOT passed"}\n`);
  for (const b of report.binaries) process.stdout.write(`  ${b.file.padEnd(34)} ${b.variant ? `variant ${b.variant}`.padEnd(24) : "always loaded".padEnd(24)} ymm ${b.ymm ?? "?"}, zmm ${b.zmm ?? "?"}, amx ${b.amx ?? "?"}\n`);
  for (const p of problems) process.stdout.write(`PROBLEM: ${p}\n`);
  process.stdout.write(problems.length ? "not portable: do not ship this build\n" : "portable: every always-loaded binary is baseline x86-64; wider kernels only in runtime-dispatched variants\n");
}
process.exit(problems.length ? 1 : 0);
