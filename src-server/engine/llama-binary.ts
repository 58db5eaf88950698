/**
 * Which llama.cpp binary the engine loads, and why.
 *
 * `scripts/build-llama.mjs` builds llama.cpp at install (portable: every x86-64 CPU backend
 * variant, picked at run time) and records the build and its self-test in
 * `pustaka-build.json` beside node-llama-cpp's local builds. The engine loads that build
 * only when its self-test passed on this machine; otherwise node-llama-cpp's prebuilt
 * binaries serve (correct everywhere, but one embedding input per evaluation).
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** What scripts/build-llama.mjs writes after building and testing llama.cpp. */
export interface LlamaBuildRecord {
  version: 1;
  /** `portable`: all CPU variants, dispatched at run time; `native`: this CPU only (never shipped). */
  mode: "portable" | "native";
  /** The CMake options of the build: node-llama-cpp finds the build's folder by them. */
  cmakeOptions: Record<string, string>;
  /** The compute layer it was built for (`false`: CPU only). */
  gpu: string | false;
  /** llama.cpp release (node-llama-cpp's tag). */
  llamaCpp: string;
  builtAt: string;
  selfTest: {
    passed: boolean;
    /** Why it failed, in words; null when it passed. */
    reason: string | null;
    /** The CPU backend variant the self-test loaded (`zen4`, `haswell`, …). */
    variant: string | null;
    at: string;
  };
}

/** `auto`: the install's build when its self-test passed, else the prebuilt binaries. */
export type LlamaBuildChoice = "auto" | "local" | "prebuilt";

export interface LlamaBinaryPlan {
  /** Options for node-llama-cpp's `getLlama` (never builds at run time). */
  options: { gpu: false | "auto"; build: "never"; cmakeOptions: Record<string, string> };
  /** The build type node-llama-cpp should report when the plan holds. */
  expected: "localBuild" | "prebuilt";
  /** Why, in words for the log. */
  reason: string;
}

/** node-llama-cpp's package folder (its exports map does not expose package.json). */
function nodeLlamaCppRoot(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("node-llama-cpp");
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "node-llama-cpp") return dir;
  }
  throw new Error(`no node-llama-cpp package above ${entry}`);
}

/** Where scripts/build-llama.mjs records the build. */
export function llamaBuildRecordPath(): string {
  return path.join(nodeLlamaCppRoot(), "llama", "localBuilds", "pustaka-build.json");
}

/** The install's build record, or null when there is none (or it cannot be read). */
export function readLlamaBuildRecord(file: string = llamaBuildRecordPath()): LlamaBuildRecord | null {
  try {
    const record = JSON.parse(readFileSync(file, "utf8")) as LlamaBuildRecord;
    return record.version === 1 && typeof record.cmakeOptions === "object" && record.selfTest ? record : null;
  } catch {
    return null;
  }
}

/** Chooses the binary for `choice`, given the install's record and whether a GPU may be used. */
export function planLlamaBinary(choice: LlamaBuildChoice, record: LlamaBuildRecord | null, gpu: "auto" | "cpu"): LlamaBinaryPlan {
  const prebuilt = (reason: string): LlamaBinaryPlan => ({ options: { gpu: gpu === "cpu" ? false : "auto", build: "never", cmakeOptions: {} }, expected: "prebuilt", reason });
  if (choice === "prebuilt") return prebuilt("the configuration asks for node-llama-cpp's prebuilt binaries (engine.build: prebuilt)");
  if (!record) return prebuilt("no llama.cpp was built at install (see scripts/build-llama.mjs)");
  if (record.gpu !== false && gpu === "cpu") return prebuilt(`the install's build is for ${record.gpu} and the configuration forbids a GPU`);
  if (choice === "auto" && !record.selfTest.passed) return prebuilt(`the install's build failed its self-test: ${record.selfTest.reason ?? "no reason recorded"}`);
  const tested = record.selfTest.passed ? `self-test passed${record.selfTest.variant ? ` on the ${record.selfTest.variant} CPU variant` : ""}` : "self-test not passed, loaded on request (engine.build: local)";
  return {
    options: { gpu: record.gpu === false ? false : "auto", build: "never", cmakeOptions: record.cmakeOptions },
    expected: "localBuild",
    reason: `llama.cpp ${record.llamaCpp} built at install (${record.mode}; ${tested})`,
  };
}

/**
 * The CPU backend variant this process has loaded (`libggml-cpu-<variant>.so`), read from
 * the memory map on Linux; null elsewhere or when none is loaded yet, or for a build with
 * the CPU backend linked in (`native`).
 */
export function loadedCpuVariant(mapsFile = "/proc/self/maps"): string | null {
  let maps: string;
  try {
    maps = readFileSync(mapsFile, "utf8");
  } catch {
    return null;
  }
  const match = /libggml-cpu-([A-Za-z0-9_.]+?)\.(?:so|dylib|dll)\b/.exec(maps);
  return match?.[1] ?? null;
}

/**
 * `getLlama` options for the llama.cpp the engine would load here (`engine.build: auto`):
 * for code that drives node-llama-cpp directly (tests, the in-process benchmark reference),
 * so that it measures and checks the same build the server serves.
 */
export function installedLlamaOptions(gpu: "auto" | "cpu" = "cpu"): LlamaBinaryPlan["options"] {
  return planLlamaBinary("auto", readLlamaBuildRecord(), gpu).options;
}
