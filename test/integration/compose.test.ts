/**
 * deploy/team: the compose file for three replicas on Postgres behind HAProxy, checked as far as
 * this machine goes. No container engine runs here, so the images are not built or started;
 * instead:
 * - Docker Compose (Debian's `docker-compose`) validates the file and interpolates it, and
 *   refuses it until the secrets in `.env` are set;
 * - HAProxy checks `deploy/team/haproxy.cfg` (`haproxy -c`), whose load-balancing directives
 *   must be the ones every team-server test runs (test/helpers/haproxy.ts);
 * - the deployment then runs on loopback as compose would run it: the `keygen` service's
 *   command makes the key file, each replica service's command and environment start the
 *   image's entry point (read from the Dockerfile) against a real Postgres, and HAProxy runs
 *   `haproxy.cfg` with only the addresses changed. Requests through it reach every replica.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { haproxyConfig, startHaproxy, type Haproxy } from "../helpers/haproxy.js";
import { freePort } from "../helpers/llama-server.js";
import { testModel } from "../helpers/models.js";
import { startPostgres, type PostgresServer } from "../helpers/postgres.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const DEPLOY = path.join(ROOT, "deploy", "team");
const REPLICAS = ["pustaka-1", "pustaka-2", "pustaka-3"];

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
}

function dockerCompose(): string {
  const found = spawnSync("sh", ["-c", "command -v docker-compose"]);
  if (found.status !== 0) throw new Error("docker-compose is not installed: run `apt-get install docker-compose` (.ci/run does); it validates deploy/team/compose.yaml");
  return found.stdout.toString().trim();
}

/** `docker-compose config` with an env file: the normalized file as JSON, or the refusal. */
function composeConfig(envFile: string): { status: number; stderr: string; config?: { services: Record<string, ComposeService>; volumes: Record<string, unknown> } } {
  const run = spawnSync(dockerCompose(), ["--env-file", envFile, "-f", path.join(DEPLOY, "compose.yaml"), "config"], { cwd: DEPLOY, env: { PATH: process.env.PATH } });
  if (run.status !== 0) return { status: run.status ?? -1, stderr: run.stderr.toString() };
  // Docker Compose 1.x prints YAML only; Python's YAML reader (a dependency of docker-compose) turns it into JSON.
  const json = execFileSync("python3", ["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))"], { input: run.stdout }).toString();
  return { status: 0, stderr: run.stderr.toString(), config: JSON.parse(json) };
}

function filledEnv(dir: string, values: Record<string, string>): string {
  const file = path.join(dir, "filled.env");
  let text = readFileSync(path.join(DEPLOY, "example.env"), "utf8");
  for (const [name, value] of Object.entries(values)) {
    const line = new RegExp(`^${name}=.*$`, "m");
    assert.match(text, line, `example.env names ${name}`);
    text = text.replace(line, `${name}=${value}`);
  }
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/** The directives of a section (`defaults`, `backend replicas`), minus comments and the lines naming addresses. */
function section(cfg: string, header: string): string[] {
  const lines = cfg.split("\n");
  const start = lines.findIndex((l) => l.trim() === header);
  assert.ok(start >= 0, `no section '${header}'`);
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") continue;
    if (!/^\s/.test(line)) break;
    const t = line.trim().replace(/\s+#.*$/, "");
    if (t.startsWith("#") || t.startsWith("server ") || t.startsWith("bind ")) continue;
    out.push(
      t
        .replace(/ hdr Host \S+/, " hdr Host HOST")
        .replace(/ resolvers docker init-addr \S+/, ""),
    );
  }
  return out;
}

/** The Dockerfile's ENTRYPOINT and ENV, as the image would run the command. */
function imageEntry(): { entrypoint: string[]; env: Record<string, string> } {
  const text = readFileSync(path.join(DEPLOY, "Dockerfile"), "utf8");
  const runtime = text.slice(text.lastIndexOf("\nFROM "));
  const entry = /^ENTRYPOINT (\[.*\])$/m.exec(runtime);
  assert.ok(entry, "the runtime stage has an ENTRYPOINT in exec form");
  const env: Record<string, string> = {};
  for (const m of runtime.matchAll(/^ENV (.+)$/gm)) for (const pair of m[1]!.split(/\s+/)) env[pair.split("=")[0]!] = pair.split("=").slice(1).join("=");
  return { entrypoint: JSON.parse(entry[1]!) as string[], env };
}

describe("deploy/team: three replicas, Postgres and HAProxy in one compose file", () => {
  const work = mkdtempSync(path.join(os.tmpdir(), "pustaka-compose-"));
  const chat = testModel("gemma3-270m");
  const embed = testModel("embed-1024");
  const apiKey = "psk-composeComposeCompose0123456789";
  let services: Record<string, ComposeService>;

  after(() => rmSync(work, { recursive: true, force: true }));

  test("Docker Compose validates the file with .env filled in, and refuses it while a secret is unset", () => {
    const shipped = composeConfig(path.join(DEPLOY, "example.env"));
    assert.notEqual(shipped.status, 0, "example.env as shipped leaves the passwords empty: compose must refuse to start");
    assert.match(shipped.stderr, /set POSTGRES_PASSWORD in \.env|set PUSTAKA_API_KEY in \.env/);

    const env = filledEnv(work, { POSTGRES_PASSWORD: "s3cret-pw", PUSTAKA_API_KEY: apiKey, CHAT_MODEL: path.basename(chat), EMBED_MODEL: path.basename(embed) });
    const result = composeConfig(env);
    assert.equal(result.status, 0, result.stderr);
    services = result.config!.services;
    assert.deepEqual(Object.keys(services).sort(), ["haproxy", "keygen", "postgres", ...REPLICAS].sort());

    const ids = new Set<string>();
    const dataVolumes = new Set<string>();
    for (const name of REPLICAS) {
      const s = services[name]!;
      assert.equal(s.build?.dockerfile, "deploy/team/Dockerfile");
      assert.equal(s.command?.[0], "serve");
      ids.add(s.command[s.command.indexOf("--replica-id") + 1]!);
      assert.equal(s.environment?.PUSTAKA_DATABASE_URL, "postgres://pustaka:s3cret-pw@postgres:5432/pustaka", "every replica on the one Postgres service");
      assert.equal(s.environment?.PUSTAKA_API_KEY, apiKey);
      assert.deepEqual(s.depends_on, { postgres: { condition: "service_healthy" }, keygen: { condition: "service_completed_successfully" } });
      assert.ok(s.volumes?.includes("keys:/var/lib/pustaka-keys:ro"), `${name} reads the shared key file, read-only`);
      const data = s.volumes!.find((v) => v.endsWith(":/var/lib/pustaka:rw"));
      assert.ok(data, `${name} has a data volume`);
      dataVolumes.add(data.split(":")[0]!);
    }
    assert.equal(ids.size, 3, "each replica its own --replica-id");
    // The key file every replica reads is the one keygen writes into the shared volume (a path
    // inside the container, off the volume, would give each replica a key of its own).
    const team = JSON.parse(readFileSync(path.join(DEPLOY, "team.json"), "utf8")) as { security: { keyFile: string } };
    assert.equal(path.dirname(team.security.keyFile), "/var/lib/pustaka-keys");
    assert.ok(services.keygen!.command![0]!.includes(`> ${team.security.keyFile}`), "keygen writes the file team.json names");
    assert.ok(services.keygen!.volumes?.includes("keys:/var/lib/pustaka-keys:rw"));
    assert.equal(dataVolumes.size, 3, "each replica its own data folder");
    assert.equal(services.postgres!.environment?.POSTGRES_PASSWORD, "s3cret-pw");
    assert.deepEqual(services.haproxy!.ports, ["127.0.0.1:7780:7780/tcp"], "published on this machine only unless .env says otherwise");
  });

  test("haproxy.cfg passes `haproxy -c`, balances as the tested configuration does, and names every replica service", () => {
    const cfg = readFileSync(path.join(DEPLOY, "haproxy.cfg"), "utf8");
    const check = spawnSync(existsHaproxy(), ["-c", "-f", path.join(DEPLOY, "haproxy.cfg")]);
    assert.equal(check.status, 0, check.stderr.toString());
    const tested = haproxyConfig({ port: 1, socket: "/x", backends: [] });
    assert.deepEqual(section(cfg, "defaults"), section(tested, "defaults"));
    assert.deepEqual(section(cfg, "backend replicas"), section(tested, "backend replicas"));
    const servers = [...cfg.matchAll(/^\s+server (\S+) (\S+):7780$/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(servers, [["r1", "pustaka-1"], ["r2", "pustaka-2"], ["r3", "pustaka-3"]]);
    for (const [id, service] of servers) assert.ok(services[service!]!.command!.join(" ").includes(`--replica-id ${id}`), `HAProxy's ${id} is ${service}`);
  });

  describe("run on loopback as compose runs it", () => {
    let postgres: PostgresServer;
    let haproxy: Haproxy | undefined;
    const children: ChildProcess[] = [];
    const replicaPorts: Record<string, number> = {};
    const logs: Record<string, string> = {};

    before(async () => {
      postgres = await startPostgres();
    });
    after(async () => {
      for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
      await haproxy?.close();
      await postgres?.close();
    });

    test("keygen makes one key file; three replicas start from the services' commands; HAProxy spreads requests over them", async () => {
      const keys = path.join(work, "keys");
      const models = path.join(work, "models");
      const etc = path.join(work, "etc");
      mkdirSync(keys);
      mkdirSync(models);
      mkdirSync(etc);
      copyFileSync(chat, path.join(models, path.basename(chat)));
      copyFileSync(embed, path.join(models, path.basename(embed)));
      // The container paths, mapped to folders here.
      const mounts: [string, string][] = [
        ["/var/lib/pustaka-keys", keys],
        ["/etc/pustaka", etc],
        ["/models", models],
      ];
      const local = (value: string) => mounts.reduce((v, [from, to]) => v.split(from).join(to), value);
      const teamJson = readFileSync(path.join(DEPLOY, "team.json"), "utf8");
      writeFileSync(path.join(etc, "team.json"), local(teamJson));

      // keygen, twice: the second run keeps the first key.
      const keygen = services.keygen!;
      for (let i = 0; i < 2; i++) execFileSync(keygen.entrypoint![0]!, [...keygen.entrypoint!.slice(1), local(keygen.command![0]!)]);
      const keyFile = path.join(keys, "kek.bin");
      const firstKey = readFileSync(keyFile);
      assert.equal(firstKey.length, 32);
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);

      const image = imageEntry();
      assert.deepEqual(image.entrypoint.slice(0, 3), ["/usr/bin/tini", "--", "node"]);
      const entry = image.entrypoint[3]!.replace(/^\/app\//, `${ROOT}/`);
      const databaseUrl = await postgres.createDatabase();

      const start = async (name: string) => {
        const service = services[name]!;
        const port = await freePort();
        replicaPorts[name] = port;
        const dataDir = path.join(work, name);
        mkdirSync(dataDir);
        const env = {
          PATH: process.env.PATH,
          ...image.env,
          ...service.environment,
          PUSTAKA_DATA_DIR: dataDir,
          // Postgres here is this test's, not the service named `postgres`.
          PUSTAKA_DATABASE_URL: databaseUrl,
          PUSTAKA_THREADS: "1",
        };
        // Each container has its own address and listens on 7780; on one loopback each needs its own port.
        const args = [entry, ...service.command!.map(local), "--host", "127.0.0.1", "--port", String(port), "--no-supervise"];
        const child = spawn(process.execPath, args, { cwd: os.tmpdir(), env, stdio: ["ignore", "pipe", "pipe"] });
        children.push(child);
        logs[name] = "";
        child.stdout?.on("data", (d: Buffer) => (logs[name] += d.toString()));
        child.stderr?.on("data", (d: Buffer) => (logs[name] += d.toString()));
        const deadline = Date.now() + 120_000;
        for (;;) {
          if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${logs[name].slice(-3000)}`);
          const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
          if (ready === 200) return;
          if (Date.now() > deadline) throw new Error(`${name} not ready in 120 s:\n${logs[name].slice(-3000)}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      // Compose starts the three together once Postgres is healthy and keygen has finished.
      await Promise.all(REPLICAS.map(start));

      const cfg = readFileSync(path.join(DEPLOY, "haproxy.cfg"), "utf8");
      haproxy = await startHaproxy(
        REPLICAS.map((name, i) => ({ name: `r${i + 1}`, port: replicaPorts[name]! })),
        ({ port, socket }) =>
          cfg
            .replace(/^global\n/m, `global\n  stats socket ${socket} mode 600 level admin\n`)
            .replace(/^\s+bind :7780$/m, `  bind 127.0.0.1:${port}`)
            .replace(/ (pustaka-\d):7780$/gm, (_, service: string) => ` 127.0.0.1:${replicaPorts[service]}`),
      );
      await haproxy.waitFor("UP");

      const call = async (route: string, body?: unknown) => {
        const res = await fetch(`${haproxy!.url}${route}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, replica: res.headers.get("x-pustaka-replica"), json: (await res.json()) as any };
      };
      const listed = await call("/v1/models");
      assert.equal(listed.status, 200, JSON.stringify(listed.json));
      const ids = listed.json.data.map((m: { id: string }) => m.id);
      assert.ok(ids.includes("svc-merlion-13b") && ids.includes("svc-embed-1024"), `the models .env names: ${ids}`);

      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const e = await call("/v1/embeddings", { model: "svc-embed-1024", input: `Notis warta kerajaan ${i}` });
        assert.equal(e.status, 200, JSON.stringify(e.json));
        assert.equal(e.json.data[0].embedding.length, 1024);
        seen.add(e.replica!);
      }
      const answer = await call("/v1/chat/completions", { model: "svc-merlion-13b", messages: [{ role: "user", content: "Say hello." }], max_tokens: 8, temperature: 0 });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      seen.add(answer.replica!);
      assert.ok(seen.size >= 2, `requests reached several replicas: ${[...seen].join(", ")}`);
      for (const id of seen) assert.match(id, /^r[123]$/);

      // One key for all: every replica opened the key file keygen wrote, and none replaced it.
      assert.deepEqual(readFileSync(keyFile), firstKey);
      const readyz = await fetch(`${haproxy.url}/readyz`);
      assert.equal(readyz.status, 200);
    });
  });
});

function existsHaproxy(): string {
  for (const candidate of ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]) {
    try {
      statSync(candidate);
      return candidate;
    } catch {
      // next
    }
  }
  return "haproxy";
}
