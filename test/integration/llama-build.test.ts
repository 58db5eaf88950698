/**
 * The llama.cpp this install serves, on whatever CPU runs the tests: portable (checked in the
 * machine code), tested at install, and actually generating and embedding through the
 * server — so a build that dies on this CPU fails CI here, not a user.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadedCpuVariant, readLlamaBuildRecord } from "../../src-server/engine/llama-binary.js";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

/** The install skipped the build on purpose (`PUSTAKA_LLAMA_BUILD=prebuilt`): the prebuilt binaries serve. */
const PREBUILT_ONLY = process.env.PUSTAKA_LLAMA_BUILD === "prebuilt";
const SELF_TEST_MODEL = path.join(REPO_ROOT, "resources", "self-test", "stories260K-mean.gguf");

describe("the llama.cpp build", () => {
  it(PREBUILT_ONLY ? "is node-llama-cpp's prebuilt one (PUSTAKA_LLAMA_BUILD=prebuilt)" : "is portable: every always-loaded binary baseline x86-64, wider kernels only in CPU variants, self-test passed", () => {
    const record = readLlamaBuildRecord();
    if (PREBUILT_ONLY) {
      assert.equal(record, null);
      return;
    }
    assert.ok(record, "scripts/build-llama.mjs recorded no build: see the install's output");
    assert.equal(record.mode, "portable");
    assert.equal(record.selfTest.passed, true, `the install's self-test failed: ${record.selfTest.reason}`);
    const check = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "check-portable-build.mjs"), "--json"], { encoding: "utf8" });
    const report = JSON.parse(check.stdout) as { problems: string[]; binaries: { file: string; variant: string | null; zmm: number; amx: number }[] };
    assert.deepEqual(report.problems, []);
    assert.equal(check.status, 0);
    if (process.arch === "x64") {
      // The check reads real code: the AVX-512 and AMX variants have it, the baseline has none.
      assert.ok(report.binaries.find((b) => b.variant === "sapphirerapids")!.amx > 0);
      assert.ok(report.binaries.find((b) => b.variant === "skylakex")!.zmm > 0);
    }
  });

  it("passes its self-test now, on this CPU, in a child process against the prebuilt binaries", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "scripts", "llama-self-test.ts"), "--json"], { cwd: REPO_ROOT, encoding: "utf8", timeout: 300_000 });
    const verdict = JSON.parse(run.stdout.trim().split("\n").pop()!) as { passed: boolean; reason: string | null; build: string; variant: string | null; batchedEmbeddings: boolean; reference: { same?: boolean } };
    if (PREBUILT_ONLY) {
      // No local build to test: the script says so and fails.
      assert.equal(verdict.passed, false);
      return;
    }
    assert.equal(verdict.passed, true, verdict.reason ?? "");
    assert.equal(verdict.build, "local");
    assert.equal(verdict.batchedEmbeddings, true);
    assert.equal(verdict.reference.same, true, "the same greedy text as the prebuilt binaries");
    if (process.platform === "linux") assert.ok(verdict.variant, "a CPU variant was loaded");
  });

  describe("through the server as it ships", () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({ bindings: { chat: tinyModel("stories260K"), embed: SELF_TEST_MODEL } });
    });
    after(() => t.close());

    it("generates tokens and embeds inputs on the build it loaded, and says which", async () => {
      const chat = await t.call("POST", "/v1/completions", { model: "chat", prompt: "Once upon a time", max_tokens: 16, temperature: 0 });
      assert.equal(chat.status, 200, JSON.stringify(chat.json));
      assert.equal(chat.json.usage.completion_tokens, 16);
      assert.match(chat.json.choices[0].text, /\w+/);

      const inputs = ["Once upon a time there was a little girl.", "The dog ran to the park.", "Selamat pagi, apa khabar?"];
      const together = await t.call("POST", "/v1/embeddings", { model: "embed", input: inputs });
      assert.equal(together.status, 200, JSON.stringify(together.json));
      for (const [i, input] of inputs.entries()) {
        const alone = await t.call("POST", "/v1/embeddings", { model: "embed", input });
        const a = together.json.data[i].embedding as number[];
        const b = alone.json.data[0].embedding as number[];
        const cos = a.reduce((sum, x, k) => sum + x * b[k]!, 0);
        assert.ok(cos > 0.9999, `input ${i}: ${cos}`);
      }

      const health = await t.call("GET", "/healthz", undefined, null);
      const build = health.json.engine.build as { type: string; variant: string | null; reason: string };
      assert.equal(build.type, PREBUILT_ONLY ? "prebuilt" : "local");
      assert.match(build.reason, PREBUILT_ONLY ? /no llama\.cpp was built at install/ : /built at install \(portable; self-test passed/);
      // The variant ggml loaded into this very process.
      if (process.platform === "linux") assert.equal(build.variant, loadedCpuVariant());
    });
  });
});
