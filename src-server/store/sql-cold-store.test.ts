import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { BLOB_PART_BYTES, SqlBlobStore } from "./sql-blob-store.js";
import { SqlColdStore } from "./sql-cold-store.js";
import type { SealedChunk } from "./chunk-store.js";

const id = (prefix: "corp" | "doc", n: number) => `${prefix}_${String(n).padStart(24, "0")}`;
const chunk = (n: number, tombstone: number): SealedChunk => ({
  id: `chk_${n}`,
  corpusId: id("corp", tombstone),
  documentId: id("doc", n % 3),
  index: n,
  start: n * 10,
  end: n * 10 + 9,
  pageStart: n % 2 === 0 ? null : 1,
  pageEnd: null,
  tokenCount: 7,
  content: Buffer.from(`content ${n}`),
  vector: Buffer.alloc(16, n),
});

describeBackends("SqlColdStore and SqlBlobStore", (backend) => {
  it("keeps a tombstone's chunks, manifest and originals, idempotently, and destroys them all", async () => {
    const cold = new SqlColdStore(await backend.open());
    const t = id("corp", 1);
    await cold.putChunks(t, Array.from({ length: 1200 }, (_, i) => chunk(i, 1)));
    await cold.putChunks(t, [{ ...chunk(5, 1), content: Buffer.from("rewritten") }]);
    await cold.putManifest(t, Buffer.from("manifest v1"));
    await cold.putManifest(t, Buffer.from("manifest v2"));
    const big = Buffer.alloc(BLOB_PART_BYTES * 2 + 123, 7);
    assert.equal(await cold.putBlob(t, id("doc", 1), Readable.from([big.subarray(0, 1000), big.subarray(1000)])), big.length);
    assert.deepEqual(await cold.readBlob(t, id("doc", 1)), big);
    assert.equal((await cold.readManifest(t))?.toString(), "manifest v2");
    const all: SealedChunk[] = [];
    for (let after: string | undefined; ; ) {
      const page = await cold.readChunks(t, { ...(after ? { after } : {}), limit: 500 });
      if (page.length === 0) break;
      all.push(...page);
      after = page.at(-1)!.id;
    }
    assert.equal(all.length, 1200, "the same chunk again replaced it");
    assert.equal(all.find((c) => c.id === "chk_5")?.content.toString(), "rewritten");
    assert.deepEqual(await cold.ids(), [t]);
    const stat = await cold.stat(t);
    assert.equal(stat.chunks, 1200);
    assert.equal(stat.blobs, 1);
    assert.ok(stat.bytes > big.length);
    assert.deepEqual(await cold.destroy(t), stat);
    assert.deepEqual(await cold.stat(t), { chunks: 0, blobs: 0, bytes: 0 });
    assert.deepEqual(await cold.ids(), []);
    await cold.compact();
  });

  it("stores originals in parts, whole or absent: a failed upload leaves nothing", async () => {
    const store = await backend.open();
    const blobs = new SqlBlobStore(store);
    const corpus = id("corp", 2);
    const bytes = Buffer.alloc(BLOB_PART_BYTES + 5, 3);
    await blobs.write(corpus, id("doc", 1), Readable.from([bytes]));
    assert.deepEqual(await blobs.read(corpus, id("doc", 1)), bytes);
    const stream = await blobs.openRead(corpus, id("doc", 1));
    const streamed: Buffer[] = [];
    for await (const part of stream!) streamed.push(part as Buffer);
    assert.deepEqual(Buffer.concat(streamed), bytes);
    async function* failing() {
      yield Buffer.alloc(BLOB_PART_BYTES + 10, 1);
      throw new Error("the client went away");
    }
    await assert.rejects(blobs.write(corpus, id("doc", 2), failing()), /went away/);
    assert.equal(await blobs.openRead(corpus, id("doc", 2)), undefined);
    await blobs.write(corpus, id("doc", 3), Readable.from([]));
    assert.deepEqual(await blobs.read(corpus, id("doc", 3)), Buffer.alloc(0), "an empty original exists");
    assert.deepEqual(
      (await blobs.list()).map((b) => b.documentId),
      [id("doc", 1), id("doc", 3)],
    );
    await blobs.deleteCorpus(corpus);
    assert.deepEqual(await blobs.list(), []);
    await assert.rejects(blobs.read(corpus, id("doc", 1)), /no such blob/);
    await assert.rejects(blobs.delete("../etc", "passwd"), /invalid blob id/);
  });
});
