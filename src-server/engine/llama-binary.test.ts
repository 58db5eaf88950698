import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { loadedCpuVariant, planLlamaBinary, readLlamaBuildRecord, type LlamaBuildRecord } from "./llama-binary.js";
import { judgeSelfTest, type SelfTestRun } from "./llama-self-test.js";

const record = (passed: boolean, gpu: string | false = false): LlamaBuildRecord => ({
  version: 1,
  mode: "portable",
  cmakeOptions: { GGML_NATIVE: "OFF", GGML_BACKEND_DL: "ON", GGML_CPU_ALL_VARIANTS: "ON" },
  gpu,
  llamaCpp: "v0.5.0",
  builtAt: "2026-11-26T00:00:00Z",
  selfTest: { passed, reason: passed ? null : "llama.cpp died (SIGILL)", variant: passed ? "zen4" : null, at: "2026-11-26T00:00:00Z" },
});

describe("which llama.cpp the engine loads", () => {
  it("loads the install's build only when its self-test passed, with its CMake options (node-llama-cpp finds the folder by them)", () => {
    const ok = planLlamaBinary("auto", record(true), "auto");
    assert.equal(ok.expected, "localBuild");
    assert.deepEqual(ok.options.cmakeOptions, record(true).cmakeOptions);
    assert.equal(ok.options.gpu, false, "a CPU build is loaded as one");
    assert.match(ok.reason, /portable; self-test passed on the zen4 CPU variant/);

    const failed = planLlamaBinary("auto", record(false), "auto");
    assert.equal(failed.expected, "prebuilt");
    assert.deepEqual(failed.options.cmakeOptions, {});
    assert.match(failed.reason, /failed its self-test: llama\.cpp died \(SIGILL\)/);

    assert.equal(planLlamaBinary("local", record(false), "auto").expected, "localBuild", "forced by the configuration");
    assert.equal(planLlamaBinary("prebuilt", record(true), "auto").expected, "prebuilt");
    assert.match(planLlamaBinary("auto", null, "auto").reason, /no llama\.cpp was built at install/);
    assert.equal(planLlamaBinary("auto", record(true, "cuda"), "cpu").expected, "prebuilt", "a GPU build when the GPU is forbidden");
  });

  it("reads a record, and none from a missing or foreign file", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-record-"));
    try {
      const file = path.join(dir, "pustaka-build.json");
      assert.equal(readLlamaBuildRecord(file), null);
      writeFileSync(file, "{not json");
      assert.equal(readLlamaBuildRecord(file), null);
      writeFileSync(file, JSON.stringify({ version: 2 }));
      assert.equal(readLlamaBuildRecord(file), null);
      writeFileSync(file, JSON.stringify(record(true)));
      assert.equal(readLlamaBuildRecord(file)?.selfTest.variant, "zen4");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the CPU variant from the memory map", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-maps-"));
    try {
      const maps = path.join(dir, "maps");
      writeFileSync(maps, "7f00-7f01 r-xp 00000000 08:01 1 /x/Release/libggml-base.so\n7f02-7f03 r-xp 00000000 08:01 2 /x/Release/libggml-cpu-sapphirerapids.so\n");
      assert.equal(loadedCpuVariant(maps), "sapphirerapids");
      writeFileSync(maps, "7f00-7f01 r-xp 00000000 08:01 1 /x/libggml-base.so\n");
      assert.equal(loadedCpuVariant(maps), null);
      assert.equal(loadedCpuVariant(path.join(dir, "missing")), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the self-test's verdict", () => {
  const good: SelfTestRun = {
    build: "local",
    variant: "zen4",
    text: ", there was a little girl",
    pairTexts: [", there was a little girl", ", there was a little girl"],
    completionTokens: 24,
    together: [[1, 0], [0, 1]],
    alone: [[1, 0], [0, 1]],
    batchedEmbeddings: true,
    ms: 100,
  };
  it("passes a run that agrees with itself and with the reference", () => {
    assert.equal(judgeSelfTest(good, { ...good, build: "prebuilt", batchedEmbeddings: false }), null);
    assert.equal(judgeSelfTest(good, null), null);
  });
  it("names what is wrong", () => {
    assert.match(judgeSelfTest({ ...good, completionTokens: 0, text: "" }, null)!, /generated 0 tokens/);
    assert.match(judgeSelfTest({ ...good, pairTexts: [good.text, "other"] }, null)!, /two sequences/);
    assert.match(judgeSelfTest({ ...good, together: [[0, 1], [1, 0]] }, null)!, /together gave other vectors/);
    assert.match(judgeSelfTest({ ...good, together: [[NaN, 0], [0, 1]] }, null)!, /not finite/);
    assert.match(judgeSelfTest({ ...good, batchedEmbeddings: false }, null)!, /does not batch embeddings/);
    assert.match(judgeSelfTest(good, { ...good, text: ", there was a big dog" })!, /where the prebuilt binaries generate/);
    assert.match(judgeSelfTest(good, { ...good, alone: [[0.6, 0.8], [0, 1]] })!, /differ from the prebuilt/);
  });
});
