/**
 * llama.cpp's own `llama-server`, started on loopback as the upstream of remote models: the
 * binary `scripts/build-llama-server.mjs` builds from the llama.cpp source the install
 * unpacked (part of `npm test`, cached). Faults are real: the process is killed (SIGKILL),
 * or frozen (SIGSTOP) to make it hang, and thawed again.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { REPO_ROOT } from "./models.js";

let binary: string | undefined;

/** The llama-server binary (built on first use when `npm test` has not built it yet). */
export function llamaServerBinary(): string {
  if (binary) return binary;
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "build-llama-server.mjs"), "--quiet"], { encoding: "utf8", timeout: 3600_000 });
  const last = result.stdout.trim().split("\n").pop();
  if (result.status !== 0 || !last) throw new Error(`llama-server could not be built: ${result.stderr || result.stdout}`);
  binary = last;
  return binary;
}

export interface LlamaServerOptions {
  model: string;
  /** The name it answers to in /v1/models (--alias). */
  alias?: string;
  /** `chat` (default; --jinja for tools), `embedding` (--embeddings, mean pooling) or `rerank` (--reranking). */
  kind?: "chat" | "embedding" | "rerank";
  /** Slots (parallel sequences); default 4. */
  parallel?: number;
  /** Total context (split across slots); default 2048 per slot. */
  contextSize?: number;
  /** Threads; default 1 (the machine has 2 cores, and the test and Pustaka share them). */
  threads?: number;
  /** Required API key (--api-key). */
  apiKey?: string;
  /** Pin the process to these CPUs (taskset), for the replica benchmark. */
  cpus?: string;
  extraArgs?: string[];
}

export interface LlamaServer {
  /** Base URL of the OpenAI API (`http://127.0.0.1:PORT/v1`). */
  url: string;
  port: number;
  process: ChildProcess;
  /** What it printed (for failures). */
  log(): string;
  /** SIGKILL, no goodbye: connections drop mid-answer. */
  kill(): Promise<void>;
  /** SIGSTOP: the port accepts connections, nothing answers (a hung server). */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  thaw(): void;
  /** Starts the same server again on the same port (after `kill`). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startLlamaServer(options: LlamaServerOptions): Promise<LlamaServer> {
  const port = await freePort();
  const kind = options.kind ?? "chat";
  const parallel = options.parallel ?? 4;
  const args = [
    "--host", "127.0.0.1",
    "--port", String(port),
    "-m", options.model,
    "-t", String(options.threads ?? 1),
    "-tb", String(options.threads ?? 1),
    "-np", String(parallel),
    "-c", String(options.contextSize ?? 2048 * parallel),
    "--no-webui",
    ...(options.alias ? ["--alias", options.alias] : []),
    ...(kind === "chat" ? ["--jinja"] : kind === "embedding" ? ["--embeddings", "--pooling", "mean", "-ub", "2048", "-b", "2048"] : ["--reranking", "-ub", "2048", "-b", "2048"]),
    ...(options.apiKey ? ["--api-key", options.apiKey] : []),
    ...(options.extraArgs ?? []),
  ];
  let output = "";
  let child: ChildProcess;
  const launch = async (): Promise<void> => {
    const command = options.cpus ? "taskset" : llamaServerBinary();
    const argv = options.cpus ? ["-c", options.cpus, llamaServerBinary(), ...args] : args;
    child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"] });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-20_000);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`llama-server exited (${child.exitCode ?? child.signalCode}):\n${output}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
        if (response.ok) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`llama-server did not become healthy in 120 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  await launch();
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const waitExit = () => (exited() ? Promise.resolve() : new Promise<void>((resolve) => child.once("exit", () => resolve())));
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    get process() {
      return child;
    },
    log: () => output,
    async kill() {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await waitExit();
    },
    freeze() {
      child.kill("SIGSTOP");
    },
    thaw() {
      child.kill("SIGCONT");
    },
    async restart() {
      if (!exited()) {
        child.kill("SIGKILL");
        await waitExit();
      }
      await launch();
    },
    async stop() {
      if (exited()) return;
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await waitExit();
      clearTimeout(timer);
    },
  };
}
