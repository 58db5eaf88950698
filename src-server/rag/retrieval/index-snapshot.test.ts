import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { newId } from "../../ids.js";
import { DataCipher, newDataKey } from "../../security/data-cipher.js";
import { SnapshotFiles } from "../../store/snapshot-files.js";
import { arrow, type Arrow } from "./lance-modules.js";
import { writeFloat16 } from "./float16.js";
import { fingerprintIds, openIndexSnapshot, writeIndexSnapshot, type SnapshotContent } from "./index-snapshot.js";

const DIM = 8;

function rows(start: number, n: number): Arrow.Table {
  const vectors = new Uint16Array(n * DIM);
  writeFloat16(Float32Array.from({ length: n * DIM }, (_, i) => Math.sin(start * DIM + i)), vectors);
  const item = new arrow.Float16();
  return new arrow.Table({
    id: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `chk_${String(start + i).padStart(4, "0")}`), new arrow.Utf8()),
    document_id: arrow.vectorFromArray(Array.from({ length: n }, () => "doc_a"), new arrow.Utf8()),
    terms: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `banjir kelantan t${start + i}`), new arrow.Utf8()),
    language: arrow.vectorFromArray(Array.from({ length: n }, () => "ms"), new arrow.Utf8()),
    vector: arrow.makeVector(arrow.makeData({ type: new arrow.FixedSizeList(DIM, new arrow.Field("item", item, true)), length: n, nullCount: 0, child: arrow.makeData({ type: item, length: vectors.length, nullCount: 0, data: vectors }) })),
  });
}

function content(batches: Arrow.Table[]): SnapshotContent {
  const ids = batches.flatMap((b) => [...b.getChild("id")!] as string[]).sort();
  return {
    fingerprint: fingerprintIds(ids),
    dimensions: DIM,
    rows: ids.length,
    batches: (async function* () {
      for (const b of batches) yield await Promise.resolve(b);
    })(),
    termChunks: () => new Map([["banjir", ids.length], ["kelantan", ids.length]]),
  };
}

describe("index snapshots: sealed, bound to their corpus, whole or refused", () => {
  let dir: string;
  let files: SnapshotFiles;
  const corpusId = newId("corp_");
  const cipher = new DataCipher(newDataKey());
  const file = () => path.join(dir, `${corpusId}.snap`);

  async function write(batches: Arrow.Table[], as = corpusId, under = cipher): Promise<void> {
    const writer = await files.create(as);
    await writeIndexSnapshot(writer, under, as, content(batches));
    await writer.commit();
  }

  async function readAll(under = cipher, as = corpusId): Promise<{ tables: Arrow.Table[]; terms: Map<string, number>; fingerprint: string }> {
    const reader = await files.openRead(as);
    assert.ok(reader, "a snapshot exists");
    try {
      const opened = await openIndexSnapshot(reader, under, as);
      const tables: Arrow.Table[] = [];
      for await (const t of opened.batches()) tables.push(t);
      return { tables, terms: opened.termChunks(), fingerprint: opened.fingerprint };
    } finally {
      await reader.close();
    }
  }

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-snapshot-"));
    files = new SnapshotFiles(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads back the rows, vectors bit for bit, and the term statistics; no plaintext on disk", async () => {
    const written = [rows(0, 300), rows(300, 7)];
    await write(written);
    const { tables, terms, fingerprint } = await readAll();
    assert.deepEqual(tables.map((t) => t.numRows), [300, 7]);
    for (const [i, t] of tables.entries()) {
      for (const column of ["id", "document_id", "terms", "language"]) assert.deepEqual([...t.getChild(column)!], [...written[i]!.getChild(column)!]);
      const vectors = (t.getChild("vector")!.data[0]!.children[0]!.values as Uint16Array).subarray(0, t.numRows * DIM);
      assert.deepEqual([...vectors], [...(written[i]!.getChild("vector")!.data[0]!.children[0]!.values as Uint16Array)]);
    }
    assert.deepEqual([...terms], [["banjir", 307], ["kelantan", 307]]);
    assert.equal(fingerprint, content(written).fingerprint);
    const bytes = readFileSync(file());
    for (const plain of ["banjir", "kelantan", "chk_0001", "doc_a"]) assert.equal(bytes.indexOf(plain), -1, `${plain} is not on disk in the clear`);
  });

  it("refuses a snapshot altered, cut short, extended, spliced, under another key or of another corpus", async () => {
    await write([rows(0, 50), rows(50, 50)]);
    const good = readFileSync(file());
    const refused = async (bytes: Buffer, why: string, under = cipher, as = corpusId) => {
      writeFileSync(path.join(dir, `${as}.snap`), bytes);
      await assert.rejects(readAll(under, as), Error, why);
    };
    const flipped = Buffer.from(good);
    flipped[good.length - 100]! ^= 1;
    await refused(flipped, "a flipped bit");
    // The last segment (term statistics) removed: the rows would read, but the end is missing.
    const lastLength = (() => {
      let at = 8;
      let last = 0;
      while (at < good.length) {
        last = at;
        at += 4 + good.readUInt32LE(at);
      }
      return good.length - last;
    })();
    await refused(good.subarray(0, good.length - lastLength), "the last segment dropped");
    await refused(good.subarray(0, good.length - 10), "cut mid-segment");
    await refused(Buffer.concat([good, good.subarray(good.length - lastLength)]), "a segment appended");
    // The first row segment of another snapshot of the same corpus, spliced in.
    await write([rows(0, 50), rows(50, 50)]);
    const other = readFileSync(file());
    const headerEnd = 8 + 4 + good.readUInt32LE(8);
    const segmentEnd = (b: Buffer) => headerEnd + 4 + b.readUInt32LE(headerEnd);
    await refused(Buffer.concat([good.subarray(0, headerEnd), other.subarray(headerEnd, segmentEnd(other)), good.subarray(segmentEnd(good))]), "a segment of another snapshot");
    writeFileSync(file(), good);
    await assert.rejects(readAll(new DataCipher(newDataKey())), Error, "another key");
    const elsewhere = newId("corp_");
    writeFileSync(path.join(dir, `${elsewhere}.snap`), good);
    await assert.rejects(readAll(cipher, elsewhere), Error, "another corpus's snapshot");
    await refused(Buffer.from("not a snapshot at all"), "garbage");
    await refused(Buffer.alloc(0), "empty");
  });

  it("replaces a snapshot whole, and leaves the old one when a write is abandoned", async () => {
    await write([rows(0, 10)]);
    const writer = await files.create(corpusId);
    await writer.write(Buffer.from("half a snapshot"));
    await writer.abort();
    assert.equal((await readAll()).tables[0]!.numRows, 10, "the previous snapshot stays");
    await write([rows(0, 20)]);
    assert.equal((await readAll()).tables[0]!.numRows, 20);
    // A write cut off by a stop leaves a temporary file, which the start-up listing removes.
    const cutOff = await files.create(corpusId);
    await cutOff.write(Buffer.from("cut off"));
    assert.ok(readdirSync(dir).some((n) => n.endsWith(".tmp")));
    assert.ok((await files.list()).includes(corpusId));
    assert.ok(!readdirSync(dir).some((n) => n.endsWith(".tmp")), "leftover temporary files are removed");
    await cutOff.abort();
    await files.delete(corpusId);
    assert.equal(await files.openRead(corpusId), undefined);
    await assert.rejects(files.create("../escape"), /invalid corpus id/);
  });

  it("fingerprints a set of ids by count and content", () => {
    assert.equal(fingerprintIds(["a", "b"]), fingerprintIds(["a", "b"]));
    assert.notEqual(fingerprintIds(["a", "b"]), fingerprintIds(["a", "c"]));
    assert.notEqual(fingerprintIds(["ab"]), fingerprintIds(["a", "b"]));
    assert.match(fingerprintIds([]), /^0:/);
  });
});
