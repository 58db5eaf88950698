import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { describeExit, isCrash } from "./exit-words.js";
import { superviseServer } from "./serve-supervisor.js";

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/supervisor/crashing-server.mjs", import.meta.url));

describe("serve supervisor", () => {
  it("says what a crash was and what the server was doing, logs it, restarts with backoff, and stops after too many crashes in a row", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-supervisor-"));
    const logFile = path.join(dir, "logs", "server.log");
    let said = "";
    try {
      const code = await superviseServer({ module: FIXTURE, args: ["sigill", logFile], backoffSeconds: [0.01, 0.02], write: (t) => (said += t) });
      assert.equal(code, 1);
      const crashes = said.match(/the server stopped unexpectedly: SIGILL: an instruction this CPU does not have/g) ?? [];
      assert.equal(crashes.length, 3, said);
      assert.match(said, /chat on model 'tiny' for request req_fixture/);
      assert.match(said, /Restarting in 0.01 s \(crash 1 of 2/);
      assert.match(said, /Restarting in 0.02 s \(crash 2 of 2/);
      assert.match(said, /crashed 3 times in a row; not restarting/);
      const lines = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(lines.length, 3);
      assert.equal(lines[0].signal, "SIGILL");
      assert.equal(lines[0].work[0].requestId, "req_fixture");
      assert.equal(lines[2].restarting, false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("does not restart a server that stopped cleanly or failed before it was ready", async () => {
    let said = "";
    assert.equal(await superviseServer({ module: FIXTURE, args: ["clean"], backoffSeconds: [0.01], write: (t) => (said += t) }), 0);
    assert.equal(said, "");
    assert.equal(await superviseServer({ module: FIXTURE, args: ["fail-before-ready"], backoffSeconds: [0.01], write: (t) => (said += t) }), 3);
    assert.equal(said, "", "nothing to explain: the server said why itself");
  });

  it("names signals and shell exit codes in words", () => {
    assert.match(describeExit(null, "SIGKILL"), /out-of-memory killer/);
    assert.match(describeExit(132, null), /SIGILL/);
    assert.equal(describeExit(1, null), "exit code 1");
    assert.equal(isCrash(0, null), false);
    assert.equal(isCrash(null, "SIGTERM"), false);
    assert.equal(isCrash(null, "SIGSEGV"), true);
  });
});
