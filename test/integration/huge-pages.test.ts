/**
 * Model weights in transparent huge pages, as `pustaka serve` runs: the supervisor starts the
 * server with glibc's `glibc.malloc.hugetlb=1` tunable, and the engine reads a model that fits
 * into memory instead of mapping its file, so that the weights decode reads every token sit in
 * 2 MB pages (src-server/engine/huge-pages.ts). With `PUSTAKA_HUGE_PAGES=off` the file is
 * mapped as before. Both answer greedy requests with the same tokens.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { hugePagePlan, probeHugePages } from "../../src-server/engine/huge-pages.js";
import { freePort } from "../helpers/llama-server.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { supervisedServer } from "../helpers/processes.js";

const CLI = [path.join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(REPO_ROOT, "src-server", "cli.ts")];
const KEY = "psk-huge-pages-test-0123456789ab";
const MODEL = testModel("gemma3-270m");

const kb = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);

interface Observed {
  reply: string;
  environment: string;
  anonHugeBytes: number;
  mapsModelFile: boolean;
  loaded: Record<string, unknown>;
  memoryLine: Record<string, unknown>;
}

/** Starts `pustaka serve` on Gemma 3 270M, asks one greedy question, and looks at the server process. */
async function serveAndAsk(env: NodeJS.ProcessEnv): Promise<Observed> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-hugepages-"));
  const port = await freePort();
  const cli = spawn(process.execPath, [...CLI, "serve", "--port", String(port), "--threads", "1", "--log-level", "info", "--data-dir", dataDir, "--no-starter", "--model", `gemma=${MODEL}`], {
    env: { ...process.env, PUSTAKA_API_KEY: KEY, ...env },
  });
  let stdout = "";
  cli.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  cli.stderr.on("data", (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<void>((resolve) => cli.on("exit", () => resolve()));
  try {
    for (let i = 0; !stdout.includes("listening on"); i++) {
      if (i > 600) throw new Error(`the server did not start:\n${stdout}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gemma", messages: [{ role: "user", content: "Name three rivers in Malaysia." }], max_tokens: 32, temperature: 0 }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const reply = ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const server = supervisedServer(cli.pid!);
    assert.ok(server, "the supervised server process");
    const log = readFileSync(path.join(dataDir, "logs", "server.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    return {
      reply,
      environment: readFileSync(`/proc/${server}/environ`, "utf8"),
      anonHugeBytes: kb(readFileSync(`/proc/${server}/smaps_rollup`, "utf8"), "AnonHugePages") * 1024,
      mapsModelFile: readFileSync(`/proc/${server}/maps`, "utf8").includes(MODEL),
      loaded: log.find((l) => l.msg === "model loaded")!,
      memoryLine: log.find((l) => l.msg === "model memory")!,
    };
  } finally {
    cli.kill("SIGTERM");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe("model weights in huge pages (pustaka serve, Linux)", () => {
  const modelBytes = statSync(MODEL).size;
  let withPages: Observed | undefined;

  it("starts the server with glibc's huge-page tunable and reads the weights into huge pages", async () => {
    withPages = await serveAndAsk({});
    assert.match(withPages.environment, /GLIBC_TUNABLES=[^\0]*glibc\.malloc\.hugetlb=1/);
    // What this machine allows decides, and the log says which and why.
    const plan = hugePagePlan("auto", probeHugePages({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" }));
    assert.equal(withPages.memoryLine.hugePages, plan.enabled, String(withPages.memoryLine.why));
    if (plan.enabled) {
      assert.equal(withPages.loaded.weights, "in memory");
      assert.equal(withPages.mapsModelFile, false, "the model file is not mapped");
      // Most of the 235 MB of weights are in 2 MB pages (the log counts them as well).
      assert.ok(withPages.anonHugeBytes >= modelBytes * 0.8, `${withPages.anonHugeBytes} bytes in huge pages for a ${modelBytes}-byte model`);
      assert.ok(Number(withPages.loaded.hugePageMb) * 2 ** 20 >= modelBytes * 0.8, JSON.stringify(withPages.loaded));
    } else {
      assert.equal(withPages.loaded.weights, "mapped");
      assert.equal(withPages.mapsModelFile, true);
    }
  });

  it("maps the model file when PUSTAKA_HUGE_PAGES=off, and answers with the same tokens", async () => {
    const mapped = await serveAndAsk({ PUSTAKA_HUGE_PAGES: "off" });
    assert.doesNotMatch(mapped.environment, /glibc\.malloc\.hugetlb/);
    assert.equal(mapped.memoryLine.hugePages, false);
    assert.match(String(mapped.memoryLine.why), /engine\.hugePages is off/);
    assert.equal(mapped.loaded.weights, "mapped");
    assert.equal(mapped.mapsModelFile, true, "the model file is mapped");
    assert.ok(mapped.anonHugeBytes < modelBytes * 0.5, `${mapped.anonHugeBytes} bytes in huge pages with huge pages off`);
    assert.ok(withPages, "the first test ran");
    assert.ok(mapped.reply.length > 0);
    assert.equal(mapped.reply, withPages.reply, "the same weights give the same greedy reply wherever they sit");
  });
});
