/**
 * `pustaka serve` when llama.cpp dies under it: the server process is killed with SIGILL (as
 * an illegal instruction in a CPU kernel kills it) in the middle of a streamed chat. The
 * supervisor must say what happened in words — the signal, the request and the model — write
 * it to the server log, and bring the server back on the same port.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { freePort } from "../helpers/llama-server.js";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";
import { supervisedServer } from "../helpers/processes.js";

const CLI = [path.join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(REPO_ROOT, "src-server", "cli.ts")];

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("pustaka serve, supervised", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-crash-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("reports a SIGILL in the middle of a chat with its request and model, logs it, and serves again on the same port", async () => {
    const port = await freePort();
    const key = "psk-crash-test-0123456789abcdef";
    const cli = spawn(process.execPath, [...CLI, "serve", "--port", String(port), "--threads", "1", "--log-level", "info", "--data-dir", dataDir, "--no-starter", "--model", `tiny=${tinyModel("stories260K")}`], {
      env: { ...process.env, PUSTAKA_API_KEY: key },
    });
    let stdout = "";
    let stderr = "";
    cli.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    cli.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => cli.on("exit", (code) => resolve(code)));
    let passed = false;
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitFor("the server", () => (stdout.includes("listening on") ? true : undefined));
      const first = await waitFor("the server child", () => supervisedServer(cli.pid!));

      // A long streamed chat: the child is generating when it dies.
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 1500, stream: true, temperature: 1, seed: 1 }),
      });
      assert.equal(response.status, 200, response.status === 200 ? "" : await response.text());
      const requestId = response.headers.get("x-request-id")!;
      const reader = response.body!.getReader();
      await reader.read();
      process.kill(first, "SIGILL");
      await reader.read().then(
        async function drain(chunk): Promise<void> {
          if (!chunk.done) return reader.read().then(drain);
        },
        () => undefined,
      );

      await waitFor("the crash report", () => (/Restarting in 1 s/.test(stderr) ? true : undefined));
      assert.match(stderr, /the server stopped unexpectedly: SIGILL: an instruction this CPU does not have/);
      assert.match(stderr, new RegExp(`chat on model 'tiny' for request ${requestId}`));

      // Back on the same port, a new process, and the crash is in the server log.
      const second = await waitFor("the restarted child", () => {
        const pid = supervisedServer(cli.pid!);
        return pid !== undefined && pid !== first ? pid : undefined;
      });
      assert.notEqual(second, first);
      const health = await waitFor("the restarted server", async () => {
        try {
          const res = await fetch(`${url}/healthz`);
          return res.ok ? ((await res.json()) as { status: string }) : undefined;
        } catch {
          return undefined;
        }
      });
      assert.equal(health.status, "ok");
      const log = readFileSync(path.join(dataDir, "logs", "server.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      const crash = log.find((l) => l.msg === "server process crashed");
      assert.ok(crash, "the crash is in the server log");
      assert.equal(crash.signal, "SIGILL");
      assert.deepEqual((crash.work as { requestId: string }[]).map((w) => w.requestId), [requestId]);
      // The server's own lines are there too, as JSON.
      assert.ok(log.some((l) => l.msg === "llama.cpp ready"));
      passed = true;
    } finally {
      cli.kill("SIGTERM");
      const code = await exited;
      // After a failure above, that failure is the report (a stop during the restart wait exits 130).
      if (passed) assert.equal(code, 0, `a clean stop after SIGTERM: ${stderr.slice(-500)}`);
    }
  });
});
