/** Shared pieces of the benchmarks: processes, SSE streaming client, statistics. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { loadConfig, packageLayout, startServer, type ConfigInput, type ServerOptions } from "../src-server/index.js";

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export const median = (values: number[]) => percentile(values, 50);

/** Resident memory of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/**
 * The CPU by name and the instruction-set extensions that decide llama.cpp's kernels (from
 * /proc/cpuinfo), for the report: ratios are only comparable on the same kind of CPU.
 */
export function cpuDescription(): { model: string; flags: string[] } {
  let info = "";
  try {
    info = readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    return { model: os.cpus()[0]?.model ?? "unknown", flags: [] };
  }
  const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? os.cpus()[0]?.model ?? "unknown";
  const present = new Set((/^flags\s*:\s*(.+)$/m.exec(info)?.[1] ?? "").split(/\s+/));
  const relevant = ["sse4_2", "avx", "f16c", "fma", "avx2", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512vbmi", "amx_tile", "amx_int8", "amx_bf16"];
  return { model, flags: relevant.filter((f) => present.has(f)) };
}

/** The llama.cpp CPU backend variant (libggml-cpu-<variant>.so) a process has loaded, from its memory map. */
export function loadedCpuVariant(pid: number): string | null {
  try {
    return /libggml-cpu-([A-Za-z0-9_.]+?)\.so\b/.exec(readFileSync(`/proc/${pid}/maps`, "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** A process's anonymous memory in transparent huge pages, in MB (null when unreadable). */
export function anonHugePagesMb(pid: number): number | null {
  try {
    const kb = Number(/^AnonHugePages:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

/** The processes `pid` started (Linux), from /proc. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    out.push(...readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Spawns a process and resolves once `ready` matches its combined output. */
export async function spawnUntil(command: string, args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<Spawned & { match: RegExpExecArray }> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${ready} from ${command}:\n${output.slice(-2000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}:\n${output.slice(-2000)}`));
    });
  });
  child.removeAllListeners("exit");
  return {
    child,
    match,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}

export interface StreamResult {
  ttftMs: number;
  decodeMs: number;
  tokens: number;
  text: string;
}

/**
 * Sends a streamed chat completion and times it. Events are parsed only once complete
 * (split on the blank line that ends an SSE event, across reads). Tokens are the
 * server's usage count when it sends one, else the number of content deltas.
 */
export async function streamChat(url: string, key: string, body: Record<string, unknown>): Promise<StreamResult> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffer = "";
  let first = 0;
  let last = 0;
  let deltas = 0;
  let usageTokens: number | null = null;
  let text = "";
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").find((l) => l.startsWith("data: "))?.slice(6);
      if (!data || data === "[DONE]") continue;
      const parsed = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; usage?: { completion_tokens: number } | null };
      const content = parsed.choices?.[0]?.delta?.content;
      if (content) {
        const now = performance.now();
        if (!first) first = now;
        last = now;
        deltas++;
        text += content;
      }
      if (parsed.usage) usageTokens = parsed.usage.completion_tokens;
    }
  }
  return { ttftMs: first - started, decodeMs: last - first, tokens: usageTokens ?? deltas, text };
}

/** Decode rate excluding the first token (which carries prompt processing). */
export const decodeRate = (r: { decodeMs: number; tokens: number }) => (r.tokens > 1 ? ((r.tokens - 1) / r.decodeMs) * 1000 : NaN);

/** A long-lived reference worker (bench/inprocess.ts) spoken to in JSON lines. */
export async function startReference(root: string, options: Record<string, unknown>) {
  const { spawn } = await import("node:child_process");
  const { createInterface } = await import("node:readline");
  const child = spawn(process.execPath, ["--import", "tsx", `${root}/bench/inprocess.ts`, JSON.stringify(options)], { cwd: root, stdio: ["pipe", "pipe", "ignore"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const result: IteratorResult<string> = await lines.next();
    if (result.done) throw new Error("reference worker exited");
    return JSON.parse(result.value) as Record<string, unknown>;
  };
  await next(); // ready
  return {
    pid: child.pid!,
    async request<T>(message: Record<string, unknown>): Promise<T> {
      child.stdin.write(`${JSON.stringify(message)}\n`);
      return (await next()) as T;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.stdin.end();
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}

/**
 * A Pustaka server in this process on a fresh data folder: CPU only, `threads` threads, models
 * never unloaded, quiet, no rate limit unless `overrides` sets one (sections given replace the
 * defaults whole). `stop` closes it and removes the folder.
 */
export async function startInProcessServer(label: string, key: string, threads: number, overrides: ConfigInput, options: Partial<ServerOptions> = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `pustaka-${label}-`));
  const layout = packageLayout();
  const config = loadConfig({
    env: {},
    defaults: { catalogPath: layout.catalogPath },
    overrides: { port: 0, dataDir, apiKey: key, logLevel: "silent", engine: { threads, gpu: "cpu", idleUnloadSeconds: 0 }, rateLimits: { defaultTier: "unlimited" }, ...overrides },
  });
  const server = await startServer(config, { version: layout.version, logger: pino({ level: "silent" }), ...options });
  return {
    server,
    url: server.url,
    dataDir,
    async stop() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
