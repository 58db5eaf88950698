/**
 * Model weights in transparent huge pages (Linux).
 *
 * Decoding one token reads every weight once, hundreds of megabytes to gigabytes, on one or
 * two cores: with 4 KB pages the CPU spends a good share of that walking page tables
 * (measured here with llama.cpp's own llama-bench, one thread, AMD EPYC: Gemma 3 270M
 * 51.5 → 64.8 tokens/s, SmolLM2-135M 93.3 → 100.5, Qwen2.5 1.5B 22.2 → 24.4). llama.cpp maps
 * the GGUF file by default, and a file's page-cache pages are 4 KB; read into memory instead,
 * the weights live in malloc'd buffers, which glibc backs with transparent huge pages when its
 * `glibc.malloc.hugetlb=1` tunable is set. glibc reads tunables once, at process start: the
 * processes that start a server (the `pustaka serve` supervisor, the desktop app) put it in
 * the server's environment (`hugePageEnvironment`), and the engine reads a model into memory
 * only when that took effect here (`hugePagePlan`) and the model fits in memory with room to
 * spare; otherwise it maps the file as before.
 */
import { readFileSync } from "node:fs";
import os from "node:os";

export type HugePagesSetting = "auto" | "off";

const TUNABLE = "glibc.malloc.hugetlb";

/** The glibc tunable asking malloc to advise transparent huge pages for what it maps (glibc ≥ 2.35). */
function tunableValue(env: NodeJS.ProcessEnv): string | undefined {
  for (const part of (env.GLIBC_TUNABLES ?? "").split(":")) {
    const [name, value] = part.split("=");
    if (name === TUNABLE) return value;
  }
  return undefined;
}

/**
 * What to add to a server process's environment so that its weights can be in huge pages:
 * `GLIBC_TUNABLES` with `glibc.malloc.hugetlb=1` added to whatever tunables are already set;
 * nothing off Linux, or when the environment sets the tunable already (its value is kept), or
 * when `PUSTAKA_HUGE_PAGES=off`.
 */
export function hugePageEnvironment(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Record<string, string> {
  if (platform !== "linux" || env.PUSTAKA_HUGE_PAGES === "off" || tunableValue(env) !== undefined) return {};
  const existing = env.GLIBC_TUNABLES?.trim();
  return { GLIBC_TUNABLES: existing ? `${existing}:${TUNABLE}=1` : `${TUNABLE}=1` };
}

export interface HugePagePlan {
  /** Whether models are read into huge-page-backed memory (else the file is mapped). */
  enabled: boolean;
  /** Why, in words, for the log. */
  reason: string;
}

export interface HugePageProbe {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  /** The contents of /sys/kernel/mm/transparent_hugepage/enabled, or null when unreadable. */
  thpEnabled: string | null;
  /** glibc's version at run time ("2.36"), or null (not glibc). */
  glibcVersion: string | null;
}

/** What this process can do; `env` is its environment at start (config.ts reads it). */
export function probeHugePages(env: NodeJS.ProcessEnv): HugePageProbe {
  let thpEnabled: string | null = null;
  try {
    thpEnabled = readFileSync("/sys/kernel/mm/transparent_hugepage/enabled", "utf8");
  } catch {
    thpEnabled = null;
  }
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return { platform: process.platform, env, thpEnabled, glibcVersion: header?.glibcVersionRuntime ?? null };
}

/** Whether this process can put malloc'd weights in transparent huge pages. */
export function hugePagePlan(setting: HugePagesSetting, probe: HugePageProbe): HugePagePlan {
  if (setting === "off") return { enabled: false, reason: "engine.hugePages is off: model files are mapped" };
  if (probe.platform !== "linux") return { enabled: false, reason: "transparent huge pages are a Linux feature: model files are mapped" };
  const mode = /\[(\w+)\]/.exec(probe.thpEnabled ?? "")?.[1];
  if (mode !== "always" && mode !== "madvise") return { enabled: false, reason: `transparent huge pages are ${mode ?? "unavailable"} on this system: model files are mapped` };
  const [major, minor] = (probe.glibcVersion ?? "").split(".").map(Number);
  if (!(major! > 2 || (major === 2 && minor! >= 35))) return { enabled: false, reason: `glibc ${probe.glibcVersion ?? "(not found)"} cannot advise huge pages (2.35 or later can): model files are mapped` };
  const value = tunableValue(probe.env);
  if (value !== "1" && value !== "2") {
    return { enabled: false, reason: "the server was not started with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (pustaka serve and the desktop app set it): model files are mapped" };
  }
  return { enabled: true, reason: `models are read into memory backed by transparent huge pages (${TUNABLE}=${value}, THP ${mode})` };
}

/** MemAvailable from /proc/meminfo in bytes, else the free memory Node sees. */
function availableMemory(): number {
  try {
    const kb = Number(/^MemAvailable:\s+(\d+)\s+kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1]);
    if (Number.isFinite(kb) && kb > 0) return kb * 1024;
  } catch {
    // not Linux: fall through
  }
  return os.freemem();
}

/**
 * Whether a model of `bytes` is read into memory: only with room to spare (at most half of
 * what is available now), since memory it holds cannot be given back to the page cache the
 * way a mapped file's pages can.
 */
export function readIntoMemory(plan: HugePagePlan, bytes: number, available = availableMemory()): boolean {
  return plan.enabled && bytes <= available / 2;
}

/** This process's anonymous memory in transparent huge pages, in bytes (null off Linux). */
export function anonHugePageBytes(smaps = "/proc/self/smaps_rollup"): number | null {
  try {
    const kb = Number(/^AnonHugePages:\s+(\d+)\s+kB/m.exec(readFileSync(smaps, "utf8"))?.[1]);
    return Number.isFinite(kb) ? kb * 1024 : null;
  } catch {
    return null;
  }
}
