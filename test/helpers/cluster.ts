/**
 * A team server on loopback, as docs/team-server.md deploys it: Postgres (Debian's, started
 * here), N replicas of `pustaka serve --database … --replica-id …` as separate processes
 * (each with its own data folder, all with the same key file and admin key), and HAProxy in
 * front checking `/readyz`. Replicas can be killed (`kill -9`), stopped with SIGTERM and
 * started again; Postgres can be restarted under them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { randomBase62 } from "../../src-server/ids.js";
import { startHaproxy, type Haproxy } from "./haproxy.js";
import { freePort } from "./llama-server.js";
import { startPostgres, type PostgresServer } from "./postgres.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
// One process per replica (tsx as a loader, not its CLI, which would put the server in a child
// process that a SIGKILL of the parent leaves running).
const CLI = ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts")];

export interface Replica {
  id: string;
  port: number;
  url: string;
  dataDir: string;
  /** Everything the process wrote (its log lines). */
  output(): string;
  readonly running: boolean;
  /** Sends a signal (SIGKILL: a crash; SIGTERM: a graceful drain) and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  /** Starts the process again (same port, data folder and database). */
  start(): Promise<void>;
}

export interface Cluster {
  /** Through HAProxy. */
  url: string;
  key: string;
  replicas: Replica[];
  postgres: PostgresServer;
  databaseUrl: string;
  haproxy: Haproxy;
  call(method: string, route: string, body?: unknown, options?: { key?: string | null; base?: string }): Promise<{ status: number; headers: Headers; json: any }>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  replicas?: number;
  /** `--model ID=PATH` bindings for every replica. */
  bindings: Record<string, string>;
  /** Extra configuration (the JSON file every replica reads). */
  config?: Record<string, unknown>;
  /** Extra `serve` flags. */
  args?: string[];
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const count = options.replicas ?? 3;
  const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-cluster-"));
  const postgres = await startPostgres();
  const databaseUrl = await postgres.createDatabase();
  const key = `psk-${randomBase62(32)}`;
  // One key-encryption key for all replicas (the guide copies it to each machine, 0600).
  const keyFile = path.join(root, "kek.bin");
  writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  const configFile = path.join(root, "pustaka.json");
  writeFileSync(configFile, JSON.stringify({ ...options.config, security: { keyFile, ...((options.config?.security as object) ?? {}) } }));
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));

  const replicas: Replica[] = ports.map((port, i) => {
    const id = `r${i + 1}`;
    const dataDir = path.join(root, id);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    let child: ChildProcess | null = null;
    let log = "";
    const args = [
      ...CLI,
      "serve",
      "--config",
      configFile,
      "--database",
      databaseUrl,
      "--replica-id",
      id,
      "--port",
      String(port),
      "--data-dir",
      dataDir,
      "--threads",
      "1",
      "--no-starter",
      "--no-supervise",
      "--log-level",
      "info",
      ...Object.entries(options.bindings).flatMap(([model, file]) => ["--model", `${model}=${file}`]),
      ...(options.args ?? []),
    ];
    const replica: Replica = {
      id,
      port,
      url: `http://127.0.0.1:${port}`,
      dataDir,
      output: () => log,
      get running() {
        return child !== null && child.exitCode === null && child.signalCode === null;
      },
      async kill(signal = "SIGKILL") {
        const proc = child;
        if (!proc || proc.exitCode !== null || proc.signalCode !== null) return proc?.exitCode ?? null;
        const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
        proc.kill(signal);
        return exited;
      },
      async start() {
        const proc = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, PUSTAKA_API_KEY: key, PUSTAKA_DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] });
        child = proc;
        proc.stdout?.on("data", (d: Buffer) => (log += d.toString()));
        proc.stderr?.on("data", (d: Buffer) => (log += d.toString()));
        const deadline = Date.now() + 120_000;
        for (;;) {
          if (proc.exitCode !== null) throw new Error(`replica ${id} exited (${proc.exitCode}):\n${log.slice(-4000)}`);
          try {
            const res = await fetch(`${replica.url}/readyz`);
            if (res.status === 200) return;
          } catch {
            // not listening yet
          }
          if (Date.now() > deadline) throw new Error(`replica ${id} not ready in 120 s:\n${log.slice(-4000)}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      },
    };
    return replica;
  });

  let haproxy: Haproxy | undefined;
  const close = async () => {
    await Promise.all(replicas.map((r) => r.kill("SIGKILL")));
    await haproxy?.close();
    await postgres.close();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // The first replica migrates the database and bootstraps the admin key; the others join.
    await replicas[0]!.start();
    await Promise.all(replicas.slice(1).map((r) => r.start()));
    haproxy = await startHaproxy(replicas.map((r) => ({ name: r.id, port: r.port })));
    await haproxy.waitFor("UP");
  } catch (error) {
    await close();
    throw error;
  }
  const url = haproxy.url;
  return {
    url,
    key,
    replicas,
    postgres,
    databaseUrl,
    haproxy,
    async call(method, route, body, callOptions = {}) {
      const headers: Record<string, string> = {};
      const auth = callOptions.key === undefined ? key : callOptions.key;
      if (auth) headers.authorization = `Bearer ${auth}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${callOptions.base ?? url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = text;
      }
      return { status: res.status, headers: res.headers, json };
    },
    close,
  };
}
