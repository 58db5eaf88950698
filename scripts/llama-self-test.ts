/**
 * Tests a llama.cpp build on this machine before it serves anyone (run by
 * scripts/build-llama.mjs after building; `npm run llama:self-test` any time).
 *
 *   node --import tsx scripts/llama-self-test.ts [--record FILE] [--model FILE] [--json]
 *
 * Runs src-server/engine/llama-self-test.ts twice, each in a child process so that a crash
 * (an illegal instruction, an abort) is observed rather than suffered: once on the build the
 * record describes, once on node-llama-cpp's prebuilt binaries as the reference. Exit 0 when
 * the build is right, 1 when it crashed or computed something else (the reason on stdout).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { llamaBuildRecordPath, readLlamaBuildRecord } from "../src-server/engine/llama-binary.js";
import { judgeSelfTest, runLlamaSelfTest, type SelfTestRun } from "../src-server/engine/llama-self-test.js";
import { describeExit } from "../src-server/supervisor/exit-words.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const model = arg("--model") ?? path.join(root, "resources", "self-test", "stories260K-mean.gguf");
const recordFile = arg("--record") ?? llamaBuildRecordPath();
const MARK = "SELFTEST_RESULT ";

const child = arg("--child") as "local" | "prebuilt" | undefined;
if (child) {
  // One run, in this (child) process.
  const record = child === "local" ? readLlamaBuildRecord(recordFile) : null;
  if (child === "local" && !record) {
    process.stderr.write(`no llama.cpp build record at ${recordFile}\n`);
    process.exit(2);
  }
  const run = await runLlamaSelfTest(model, child, record);
  process.stdout.write(`${MARK}${JSON.stringify(run)}\n`);
  process.exit(0);
}

interface Outcome {
  run: SelfTestRun | null;
  failure: string | null;
}

function runChild(which: "local" | "prebuilt"): Outcome {
  const result = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--child", which, "--record", recordFile, "--model", model], {
    cwd: root,
    encoding: "utf8",
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = result.stdout?.split("\n").find((l) => l.startsWith(MARK));
  if (result.error) return { run: null, failure: `the self-test could not run: ${result.error.message}` };
  if (result.status === 0 && line) return { run: JSON.parse(line.slice(MARK.length)) as SelfTestRun, failure: null };
  const tail = (result.stderr ?? "").trim().split("\n").slice(-3).join(" | ");
  return { run: null, failure: `llama.cpp ${result.signal || result.status !== 0 ? "died" : "gave no result"} (${describeExit(result.status, result.signal)})${tail ? `: ${tail}` : ""}` };
}

const local = runChild("local");
const reference = local.run ? runChild("prebuilt") : { run: null, failure: null };
const reason =
  local.failure ??
  (local.run!.build !== "local" ? "node-llama-cpp did not load the build (it fell back to its prebuilt binaries; run with PUSTAKA_TEST_LOG=debug for its words)" : judgeSelfTest(local.run!, reference.run));
const verdict = {
  passed: reason === null,
  reason,
  variant: local.run?.variant ?? null,
  build: local.run?.build ?? null,
  batchedEmbeddings: local.run?.batchedEmbeddings ?? null,
  text: local.run?.text ?? null,
  reference: reference.run ? { variant: reference.run.variant, same: reference.run.text === local.run?.text } : { unavailable: reference.failure ?? "not run" },
  ms: local.run?.ms ?? null,
};
if (args.includes("--json")) process.stdout.write(`${JSON.stringify(verdict)}\n`);
else {
  process.stdout.write(verdict.passed ? `self-test passed: ${verdict.build} build, CPU variant ${verdict.variant ?? "built in"}, batched embeddings ${verdict.batchedEmbeddings ? "yes" : "no"}, "${verdict.text?.slice(0, 50)}…" (${verdict.ms} ms)\n` : `self-test FAILED: ${reason}\n`);
  if (!reference.run) process.stdout.write(`  (no reference run on the prebuilt binaries: ${reference.failure ?? "skipped"})\n`);
}
process.exit(verdict.passed ? 0 : 1);
