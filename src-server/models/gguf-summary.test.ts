import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { GGUF_TYPE, header, kvArrayHead, soundGguf, u32 } from "../../test/helpers/gguf-builder.js";
import { tinyModel } from "../../test/helpers/models.js";
import { readGgufSummaries, readGgufSummary } from "./gguf-summary.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-gguf-summary-"));
const write = (name: string, bytes: Buffer): string => {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
};

describe("readGgufSummary on hostile and broken files", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a header claiming a 2^40-element array at once, in a process that lives on", async () => {
    // A fatal V8 error in the reader's worker would end the whole process: read in a child.
    const hostile = write("hostile.gguf", Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.uint8, 2n ** 40n)]));
    const script = path.join(dir, "read.mts");
    const summaryModule = path.join(path.dirname(fileURLToPath(import.meta.url)), "gguf-summary.ts");
    writeFileSync(script, `import { readGgufSummaries } from ${JSON.stringify(summaryModule)};\nconsole.log(JSON.stringify(await readGgufSummaries(process.argv.slice(2))));\n`);
    const started = Date.now();
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script, hostile, tinyModel("stories260K")], { timeout: 60_000 });
    const [bad, good] = JSON.parse(stdout) as { ok: boolean; error?: string; summary?: { architecture: string } }[];
    assert.equal(bad!.ok, false);
    assert.match(bad!.error!, /array length of metadata entry 0 claims 1099511627776, more than the limit/);
    assert.equal(good!.ok, true, "the next file in the same worker is still read");
    assert.equal(good!.summary!.architecture, "llama");
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
  });

  it("refuses a bare 8-byte header and an unknown version that node-llama-cpp reads as empty models", async () => {
    await assert.rejects(readGgufSummary(write("bare.gguf", Buffer.concat([Buffer.from("GGUF"), u32(3)]))), /the file ends inside the tensor count/);
    await assert.rejects(readGgufSummary(write("v99.gguf", header(99, 0, 0))), /unsupported GGUF version 99/);
    const [result] = await readGgufSummaries([write("v99b.gguf", header(99, 0, 0))]);
    assert.deepEqual(result, { ok: false, error: "unsupported GGUF version 99" });
  });

  it("still summarises sound files", async () => {
    const summary = await readGgufSummary(write("sound.gguf", soundGguf()));
    assert.equal(summary.architecture, "llama");
    assert.equal(summary.parameters, 12);
    assert.equal((await readGgufSummary(tinyModel("llama-2-tiny-random"))).type, "chat");
  });
});
