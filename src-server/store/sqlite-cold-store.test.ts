import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { randomBase62 } from "../ids.js";
import type { SealedChunk } from "./chunk-store.js";
import { SqliteColdStore } from "./sqlite-cold-store.js";

const parent = mkdtempSync(path.join(os.tmpdir(), "pustaka-cold-"));
after(() => rmSync(parent, { recursive: true, force: true }));

const id = (prefix: "corp_" | "doc_" | "chk_") => prefix + randomBase62(24);
const mode = (file: string) => statSync(file).mode & 0o777;

function chunk(corpusId: string, documentId: string, index: number): SealedChunk {
  return { id: id("chk_"), corpusId, documentId, index, start: 0, end: 10, pageStart: null, pageEnd: null, tokenCount: 3, content: randomBytes(600), vector: randomBytes(1600) };
}

/** Whether `needle` occurs in any of the files (missing files hold nothing). */
function inFiles(files: string[], needle: Buffer): boolean {
  return files.some((f) => existsSync(f) && readFileSync(f).includes(needle));
}

describe("SqliteColdStore", () => {
  it("keeps its folder 0700 and its files 0600, with secure_delete and full auto-vacuum", async () => {
    const dir = path.join(parent, "modes");
    const cold = new SqliteColdStore(dir);
    const corpusId = id("corp_");
    const documentId = id("doc_");
    await cold.putChunks(corpusId, [chunk(corpusId, documentId, 0)]);
    await cold.putBlob(corpusId, documentId, Readable.from([randomBytes(100)]));
    assert.equal(mode(dir), 0o700);
    for (const f of ["tombstones.db", "tombstones.db-wal"]) assert.equal(mode(path.join(dir, f)), 0o600, f);
    assert.equal(mode(path.join(dir, "blobs", corpusId)), 0o700);
    assert.equal(mode(path.join(dir, "blobs", corpusId, documentId)), 0o600);
    await cold.close();
    const db = new BetterSqlite3(path.join(dir, "tombstones.db"), { readonly: true });
    assert.equal(db.pragma("auto_vacuum", { simple: true }), 1, "FULL: freed pages leave the file at once");
    db.close();
    await cold.close(); // idempotent
  });

  it("overwrites on a second write (a retried copy), reports what it holds and reads it back", async () => {
    const cold = new SqliteColdStore(path.join(parent, "idempotent"));
    const corpusId = id("corp_");
    const documentId = id("doc_");
    const chunks = [chunk(corpusId, documentId, 0), chunk(corpusId, documentId, 1)];
    await cold.putChunks(corpusId, chunks);
    await cold.putChunks(corpusId, chunks);
    await cold.putManifest(corpusId, Buffer.from("first"));
    await cold.putManifest(corpusId, Buffer.from("second"));
    const blob = randomBytes(5000);
    await cold.putBlob(corpusId, documentId, Readable.from([blob]));
    assert.equal(await cold.putBlob(corpusId, documentId, Readable.from([blob])), blob.length);
    const held = await cold.stat(corpusId);
    assert.deepEqual(held, { chunks: 2, blobs: 1, bytes: 2 * (600 + 1600) + "second".length + blob.length });
    assert.deepEqual((await cold.readManifest(corpusId))?.toString(), "second");
    assert.deepEqual(await cold.readBlob(corpusId, documentId), blob);
    const first = await cold.readChunks(corpusId, { limit: 1 });
    const rest = await cold.readChunks(corpusId, { after: first[0]!.id, limit: 10 });
    assert.deepEqual(
      [...first, ...rest].map((c) => c.content),
      [...chunks].sort((a, b) => (a.id < b.id ? -1 : 1)).map((c) => c.content),
    );
    assert.deepEqual(await cold.ids(), [corpusId]);
    await cold.close();
  });

  it("destroys a tombstone's rows and files so its bytes are in no file, and shrinks the database", async () => {
    const dir = path.join(parent, "destroy");
    const cold = new SqliteColdStore(dir);
    const doomed = id("corp_");
    const kept = id("corp_");
    const documentId = id("doc_");
    const doomedChunks = Array.from({ length: 200 }, (_, i) => chunk(doomed, documentId, i));
    await cold.putChunks(doomed, doomedChunks);
    await cold.putChunks(kept, [chunk(kept, documentId, 0)]);
    await cold.putBlob(doomed, documentId, Readable.from([randomBytes(1000)]));
    await cold.compact();
    const files = ["tombstones.db", "tombstones.db-wal"].map((f) => path.join(dir, f));
    const marker = doomedChunks[137]!.vector.subarray(0, 48);
    assert.ok(inFiles(files, marker), "the ciphertext is in the cold files before");
    const sizeBefore = statSync(files[0]!).size;

    const destroyed = await cold.destroy(doomed);
    assert.equal(destroyed.chunks, 200);
    assert.equal(destroyed.blobs, 1);
    await cold.compact();
    assert.equal(inFiles(files, marker), false, "no byte of a destroyed chunk remains in the cold files");
    assert.ok(statSync(files[0]!).size < sizeBefore / 4, "freed pages were given back");
    assert.equal(existsSync(path.join(dir, "blobs", doomed)), false);
    assert.deepEqual(await cold.stat(doomed), { chunks: 0, blobs: 0, bytes: 0 });
    assert.equal((await cold.stat(kept)).chunks, 1, "other tombstones are untouched");
    assert.deepEqual(await cold.destroy(doomed), { chunks: 0, blobs: 0, bytes: 0 }, "destroying again is harmless");
    await cold.close();
  });

  it("refuses ids it did not generate (no path from request input)", async () => {
    const cold = new SqliteColdStore(path.join(parent, "ids"));
    await assert.rejects(cold.putBlob("../../etc", id("doc_"), Readable.from([Buffer.from("x")])), /invalid tombstone or document id/);
    await assert.rejects(() => cold.putManifest("corp_short", Buffer.from("x")), /invalid tombstone or document id/);
    await cold.close();
  });
});
