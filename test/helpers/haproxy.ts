/**
 * HAProxy from Debian in front of replicas on loopback, as the team-server guide
 * (docs/team-server.md) configures it: health checks on `/readyz`, least connections,
 * failed connections retried on another replica, long timeouts for streamed answers. The
 * admin socket tells a test which servers HAProxy sees as up. Missing HAProxy is a loud
 * failure, never a skip: `apt-get install haproxy` (`.ci/run` does).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./llama-server.js";

export interface Haproxy {
  port: number;
  url: string;
  /** Server name -> "UP" | "DOWN" | "MAINT" (and transitions such as "UP 1/2"). */
  states(): Promise<Record<string, string>>;
  /** Resolves when every named server is in `state` (default: all UP). */
  waitFor(state: "UP" | "DOWN", names?: string[], timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function binary(): string {
  for (const candidate of ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]) if (existsSync(candidate)) return candidate;
  try {
    return execFileSync("sh", ["-c", "command -v haproxy"]).toString().trim();
  } catch {
    throw new Error("HAProxy is not installed: run `apt-get install haproxy` (.ci/run installs it)");
  }
}

/** The configuration the guide shows, for these backends (kept in step with docs/team-server.md). */
export function haproxyConfig(options: { port: number; socket: string; backends: { name: string; port: number }[] }): string {
  return `global
  maxconn 4096
  stats socket ${options.socket} mode 600 level admin

defaults
  mode http
  option httplog
  timeout connect 2s
  timeout client 5m
  timeout server 5m
  timeout http-request 30s
  retries 2
  option redispatch
  # A request whose replica refused the connection or died before answering goes to another.
  retry-on conn-failure empty-response

frontend pustaka
  bind 127.0.0.1:${options.port}
  default_backend replicas

backend replicas
  balance leastconn
  option httpchk
  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
  http-check expect status 200
  default-server check inter 500ms fall 2 rise 2
${options.backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port}`).join("\n")}
`;
}

async function adminCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = net.createConnection(socket);
    let out = "";
    client.on("data", (d) => (out += d.toString()));
    client.on("end", () => resolve(out));
    client.on("error", reject);
    client.write(`${command}\n`);
  });
}

/**
 * Starts HAProxy for `backends` (names as in its `backend replicas`). `configFor` gives another
 * configuration than the guide's (deploy/team/haproxy.cfg with loopback addresses); it must
 * listen on `port` and open the admin socket `socket`.
 */
export async function startHaproxy(
  backends: { name: string; port: number }[],
  configFor: (options: { port: number; socket: string; backends: { name: string; port: number }[] }) => string = haproxyConfig,
): Promise<Haproxy> {
  const bin = binary();
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-haproxy-"));
  const port = await freePort();
  const socket = path.join(dir, "admin.sock");
  const config = path.join(dir, "haproxy.cfg");
  writeFileSync(config, configFor({ port, socket, backends }));
  execFileSync(bin, ["-c", "-q", "-f", config]);
  let log = "";
  const child: ChildProcess = spawn(bin, ["-db", "-f", config], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 10_000;
  while (!existsSync(socket)) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${log}`);
    if (Date.now() > deadline) throw new Error(`haproxy did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  const states = async (): Promise<Record<string, string>> => {
    const csv = await adminCommand(socket, "show stat");
    const [header, ...rows] = csv.trim().split("\n");
    const columns = header!.replace(/^# /, "").split(",");
    const [px, sv, status] = [columns.indexOf("pxname"), columns.indexOf("svname"), columns.indexOf("status")];
    const out: Record<string, string> = {};
    for (const row of rows) {
      const cells = row.split(",");
      if (cells[px] === "replicas" && cells[sv] !== "BACKEND") out[cells[sv]!] = cells[status]!;
    }
    return out;
  };

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    states,
    async waitFor(state, names = backends.map((b) => b.name), timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = await states();
        if (names.every((n) => now[n] === state)) return;
        if (Date.now() > until) throw new Error(`haproxy: servers not ${state} in ${timeoutMs} ms: ${JSON.stringify(now)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
