/**
 * A real Postgres server for tests: Debian's `postgresql` binaries, a cluster made with
 * initdb in a temporary folder, listening on a free loopback port (and a private socket
 * folder), one fresh database per test. Postgres refuses to run as root, so as root the
 * server runs as the `postgres` user the Debian package creates. Missing binaries are a
 * loud failure, never a skip: `apt-get install postgresql` (`.ci/run` does).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./llama-server.js";

export interface PostgresServer {
  port: number;
  /** A new, empty database on this server; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** `psql` against a database, as the superuser; returns stdout, throws with stderr. */
  psql(url: string, command: string): string;
  /** Stops the server fast (clients see their connections end), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  close(): Promise<void>;
}

function binDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error("Postgres is not installed (no /usr/lib/postgresql/*/bin/postgres): run `apt-get install postgresql` (.ci/run installs it)");
  return path.join(root, versions[0]!, "bin");
}

const asRoot = process.getuid?.() === 0;

/** Runs a Postgres program as the `postgres` user when we are root. */
function command(program: string, args: string[]): [string, string[]] {
  const bin = path.join(binDir(), program);
  if (!asRoot) return [bin, args];
  return ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", bin, ...args]];
}

let counter = 0;

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-pg-"));
  const data = path.join(dir, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const [initdb, initArgs] = command("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"]);
  execFileSync(initdb, initArgs, { stdio: ["ignore", "ignore", "pipe"] });
  const port = await freePort();
  let child: ChildProcess | null = null;
  let log = "";

  const start = async () => {
    // fsync off: these clusters are thrown away; durability is Postgres's own business.
    const [bin, args] = command("postgres", ["-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=64MB"]);
    const proc = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    proc.stdout?.on("data", (d: Buffer) => (log += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (log += d.toString()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`postgres exited (${proc.exitCode}):\n${log}`);
      const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`postgres did not start in 30 s:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async () => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    // SIGINT: fast shutdown (open sessions are ended, nothing committed is lost).
    proc.kill("SIGINT");
    await exited;
  };

  await start();
  const admin = () => new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  return {
    port,
    async createDatabase(name) {
      const db = name ?? `pustaka_${process.pid}_${++counter}`;
      const client = admin();
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${db}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${db}`;
    },
    psql(url, sqlText) {
      return execFileSync("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", url, "-c", sqlText], { stdio: ["ignore", "pipe", "pipe"] }).toString();
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
