/**
 * Contract tests with the Python clients people use (official openai and anthropic,
 * LangChain with its standard suites, LlamaIndex): the server with real small models, and
 * pytest running test/clients/ against it from the client venv that
 * `npm run clients:setup` (scripts/clients/prepare.sh) makes from pinned, hashed wheels.
 * A missing or stale venv is a loud failure, never a skip.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const VENV = process.env.PUSTAKA_CLIENTS_VENV ?? path.join(os.homedir(), ".cache", "pustaka", "clients-venv");
const REQUIREMENTS = path.join(REPO_ROOT, "scripts", "clients", "requirements.txt");
/** The whole pytest run; LangChain's standard suite alone is a few minutes on 2 cores. */
const PYTEST_TIMEOUT_MS = 40 * 60_000;

/** The venv's python, or a failure saying how to make it. */
function clientPython(): string {
  const python = path.join(VENV, "bin", "python");
  if (!existsSync(python)) throw new Error(`no Python client venv at ${VENV}: run \`npm run clients:setup\` first`);
  const stamp = path.join(VENV, "pustaka-clients.sha256");
  const wanted = createHash("sha256").update(readFileSync(REQUIREMENTS)).digest("hex");
  const have = existsSync(stamp) ? readFileSync(stamp, "utf8").trim() : "";
  if (have !== wanted) throw new Error(`the Python client venv at ${VENV} does not match scripts/clients/requirements.txt: run \`npm run clients:setup\``);
  return python;
}

/** Runs pytest to completion with its output streamed through; resolves to its exit code. */
function pytest(python: string, env: Record<string, string>): Promise<number | null> {
  const child = spawn(python, ["-m", "pytest", "test/clients", "-q", "-p", "no:cacheprovider"], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), PYTEST_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? null : code);
    });
  });
}

describe("Python clients (openai, anthropic, LangChain, LlamaIndex) against the server", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), embed: testModel("all-minilm-l6-v2") },
      config: { chat: { contextSize: 2048, sequences: 2 } },
    });
  });
  after(() => t?.close());

  it("passes test/clients with pytest", { timeout: PYTEST_TIMEOUT_MS + 60_000 }, async () => {
    const python = clientPython();
    const code = await pytest(python, {
      PUSTAKA_URL: t.url,
      PUSTAKA_KEY: t.key,
      PUSTAKA_CHAT_MODEL: "chat",
      PUSTAKA_EMBED_MODEL: "embed",
      // No bytecode beside the tests, and no LangSmith tracing (it would call out).
      PYTHONDONTWRITEBYTECODE: "1",
      LANGSMITH_TRACING: "false",
      LANGCHAIN_TRACING_V2: "false",
    });
    assert.equal(code, 0, code === null ? `pytest was stopped after ${PYTEST_TIMEOUT_MS / 60_000} minutes` : `pytest exited with ${code} (its report is above)`);
  });
});
