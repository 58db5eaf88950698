import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { GGUF_TYPE, header, kvArrayHead, kvString, kvU32, soundGguf, str, tensorInfo, u32, u64 } from "../../test/helpers/gguf-builder.js";
import { tinyModel } from "../../test/helpers/models.js";
import { GGUF_LIMITS, InvalidGgufError, ggufParts, validateGgufFile, validateGgufModel } from "./validate-gguf-file.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-gguf-check-"));
let n = 0;
const write = (bytes: Buffer | string, name = `f${n++}.gguf`): string => {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
};

/** Asserts `file` is refused quickly with a message matching `pattern`. */
async function refused(file: string, pattern: RegExp, options?: { noFollow?: boolean }): Promise<InvalidGgufError> {
  const started = Date.now();
  const error = await validateGgufModel(file, options).then(
    () => assert.fail(`${path.basename(file)} was accepted`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof InvalidGgufError, `${String(error)}`);
  assert.match(error.message, pattern);
  assert.ok(Date.now() - started < 2000, `refusing took ${Date.now() - started} ms`);
  return error;
}

describe("validateGgufFile", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("accepts real models and a small sound file, with what it learned", async () => {
    for (const name of ["stories260K", "llama-2-tiny-random"] as const) {
      const [facts] = await validateGgufModel(tinyModel(name));
      assert.equal(facts!.architecture, "llama");
      assert.equal(facts!.version, 3);
      assert.ok(facts!.tensorCount > 0);
    }
    const [facts] = await validateGgufModel(write(soundGguf()));
    assert.deepEqual(facts, { version: 3, keyCount: 2, tensorCount: 2, architecture: "llama", dataOffset: facts!.dataOffset });
    assert.equal(facts.dataOffset % 32, 0);
  });

  it("refuses counts the file cannot hold at once, before looping or allocating", async () => {
    // 49 bytes whose one key claims 2^40 one-byte elements: node-llama-cpp spins, then aborts the process.
    const hugeArray = write(Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.uint8, 2n ** 40n)]));
    await refused(hugeArray, /array length of metadata entry 0 claims 1099511627776, more than the limit/);
    const manyInFile = write(Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.uint32, 1000), Buffer.alloc(40)]));
    await refused(manyInFile, /claims 1000 \(at least 4000 bytes\), but only 40 bytes are left/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.string, 2n ** 20n)])), /array length of metadata entry 0 claims 1048576 \(at least 8388608 bytes\)/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.string, 1), u64(2n ** 40n)])), /item 0 of the array of metadata entry 0 claims a string longer than the limit/);
    await refused(write(Buffer.concat([header(3, 2n ** 40n, 0), Buffer.alloc(64)])), /tensor count claims 1099511627776, more than the limit of 262144/);
    await refused(write(Buffer.concat([header(3, 1000, 0), Buffer.alloc(64)])), /tensor count claims 1000 \(at least 24000 bytes\)/);
    await refused(write(Buffer.concat([header(3, 0, 2n ** 62n)])), /key count claims 4611686018427387904/);
    await refused(write(Buffer.concat([header(3, 0, 1), u64(2n ** 40n), Buffer.alloc(16)])), /length of the key of metadata entry 0 claims 1099511627776/);
    await refused(write(Buffer.concat([header(3, 0, 1), str("general.architecture"), u32(GGUF_TYPE.string), u64(2n ** 33n)])), /claims 8589934592, more than the limit of 16777216/);
    const arrays = Buffer.concat([header(3, 0, 2), kvArrayHead("a", GGUF_TYPE.uint8, GGUF_LIMITS.arrayElements), Buffer.alloc(GGUF_LIMITS.arrayElements), kvArrayHead("b", GGUF_TYPE.uint8, 1), Buffer.alloc(1)]);
    await refused(write(arrays), /the arrays hold more than 16777216 elements together/);
  });

  it("refuses what llama.cpp refuses: truncation, versions, types, names, shapes, offsets", async () => {
    await refused(write(Buffer.concat([Buffer.from("GGUF"), u32(3)])), /the file ends inside the tensor count/);
    await refused(write(Buffer.concat([header(99, 0, 0)])), /unsupported GGUF version 99/);
    await refused(write(Buffer.concat([header(1, 0, 0)])), /GGUF version 1 is no longer supported/);
    await refused(write(""), /not a GGUF file/);
    await refused(write(Buffer.concat([header(3, 0, 1), str("a"), u32(13), u32(0)])), /metadata entry 0 has an invalid type 13/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.array, 1), u32(0), u64(0)])), /array with an invalid item type 9/);
    await refused(write(Buffer.concat([header(3, 0, 2), kvU32("a", 1), kvU32("a", 2)])), /metadata entry 1 repeats an earlier key/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvU32("", 1)])), /metadata entry 0 has an empty key/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvU32("general.alignment", 24)])), /alignment 24 is not a power of 2/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvString("general.alignment", "32")])), /general.alignment must be a uint32/);
    const withTensor = (t: Buffer) => write(Buffer.concat([header(3, 1, 1), kvString("general.architecture", "llama"), t, Buffer.alloc(256)]));
    await refused(withTensor(tensorInfo("x".repeat(64), [8], 0, 0)), /the name of tensor 0 claims 64, more than the limit of 63/);
    await refused(withTensor(Buffer.concat([str("t"), u32(1000)])), /tensor 0 claims 1000 dimensions \(at most 4\)/);
    await refused(withTensor(tensorInfo("t", [2n ** 63n], 0, 0)), /tensor 0 has a negative dimension/);
    await refused(withTensor(tensorInfo("t", [2n ** 40n, 2n ** 40n], 0, 0)), /tensor 0 has too many elements/);
    await refused(withTensor(tensorInfo("t", [8], 4, 0)), /tensor 0 has an invalid ggml type 4/);
    await refused(withTensor(tensorInfo("t", [8], 43, 0)), /tensor 0 has an invalid ggml type 43/);
    await refused(withTensor(tensorInfo("t", [8], 2, 0)), /tensor 0 has rows that are not whole blocks/);
    await refused(write(Buffer.concat([header(3, 2, 0), tensorInfo("t", [1], 0, 0), tensorInfo("t", [1], 0, 32)])), /tensor 1 repeats an earlier tensor's name/);
    await refused(write(soundGguf({ secondOffset: 64 })), /tensor 1 is at data offset 64, expected 32/);
    await refused(write(soundGguf({ truncate: 1 })), /the data of tensor 1 lies beyond the end of the file/);
  });

  it("requires a model: an architecture and at least one tensor", async () => {
    await refused(write(header(3, 0, 0)), /no general.architecture/);
    await refused(write(Buffer.concat([header(3, 0, 1), kvString("general.architecture", "llama")])), /no tensors/);
  });

  it("never quotes the file's bytes in its errors", async () => {
    const secret = write("root:$6$hash:19000:0:99999:7:::\n");
    const error = await refused(secret, /^not a GGUF file \(no GGUF magic\)$/);
    assert.doesNotMatch(error.message, /root/);
    const named = write(Buffer.concat([header(3, 0, 2), kvU32("tokenizer.secret-key", 1), kvU32("tokenizer.secret-key", 1)]));
    assert.doesNotMatch((await refused(named, /repeats an earlier key/)).message, /secret/);
  });

  it("refuses what is not a regular file, and links when told not to follow them, without waiting", async () => {
    await refused(path.join(dir, "missing.gguf"), /cannot open the file \(ENOENT\)/);
    const folder = path.join(dir, "folder.gguf");
    mkdirSync(folder);
    await refused(folder, /not a regular file/);
    const fifo = path.join(dir, "pipe.gguf");
    execFileSync("mkfifo", [fifo]);
    await refused(fifo, /not a regular file/);
    const link = path.join(dir, "link.gguf");
    symlinkSync(tinyModel("stories260K"), link);
    await refused(link, /cannot open the file \(ELOOP\)/, { noFollow: true });
    assert.equal((await validateGgufFile(link)).architecture, "llama", "links are followed unless told otherwise (configured bindings)");
  });

  it("checks every part of a split model", async () => {
    assert.deepEqual(ggufParts("/m/x-00002-of-00003.gguf"), ["/m/x-00001-of-00003.gguf", "/m/x-00002-of-00003.gguf", "/m/x-00003-of-00003.gguf"]);
    assert.deepEqual(ggufParts("/m/x.gguf"), ["/m/x.gguf"]);
    write(soundGguf(), "split-00001-of-00002.gguf");
    const second = write(Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.uint8, 2n ** 40n)]), "split-00002-of-00002.gguf");
    await refused(path.join(dir, "split-00001-of-00002.gguf"), /^part 2 of 2: the array length/);
    writeFileSync(second, Buffer.concat([header(3, 0, 1), kvU32("split.no", 1)]));
    assert.equal((await validateGgufModel(path.join(dir, "split-00001-of-00002.gguf"))).length, 2);
  });
});
