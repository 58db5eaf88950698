/**
 * Deletion, tombstones and retention over HTTP on the real server (clock injected):
 * DELETE moves a corpus's (and a document's) ciphertext to the cold store and wipes it
 * from the primary database files; the admin list shows the tombstones and their expiry;
 * the purge does nothing early, and after the retention window destroys the cold rows,
 * files and the wrapped key, so the data can no longer be decrypted. A stop between the
 * copy and the primary deletion loses nothing and is finished at the next start.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import type { Clock } from "../../src-server/domain/clock.js";
import { CorpusKeyring } from "../../src-server/security/corpus-keyring.js";
import { DataKeyGoneError } from "../../src-server/security/data-keyring.js";
import { LocalKeyFileProvider } from "../../src-server/security/local-key-file-provider.js";
import { CorpusStore } from "../../src-server/store/corpus-store.js";
import { openSqlDatabase } from "../../src-server/store/sql-database.js";
import { testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const DAY = 86_400;

class TestClock implements Clock {
  ms = Date.now();
  now(): number {
    return this.ms;
  }
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** Files (under `dir`, optionally outside `except`) whose bytes contain `needle`. */
function filesHolding(dir: string, needle: Buffer, except?: string): string[] {
  return filesUnder(dir).filter((f) => (!except || !f.startsWith(except)) && statSync(f).isFile() && readFileSync(f).includes(needle));
}

/** The sealed chunk rows of a corpus as stored, read beside the running server. */
function sealedChunks(dataDir: string, corpusId: string): { content: Buffer; vector: Buffer }[] {
  const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
  try {
    return db.prepare("SELECT content, vector FROM chunks WHERE corpus_id = ? ORDER BY id").all(corpusId) as { content: Buffer; vector: Buffer }[];
  } finally {
    db.close();
  }
}

function wrappedKeyRow(dataDir: string, corpusId: string): unknown {
  const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
  try {
    return db.prepare("SELECT corpus_id, destroy_after FROM corpus_keys WHERE corpus_id = ?").get(corpusId);
  } finally {
    db.close();
  }
}

const NOTE = (topic: string) => `# ${topic}\n\nThe ${topic} committee met on Tuesday and agreed the budget for the next quarter.\n`;

async function readyCorpus(t: TestServer, retentionDays: number, files: string[]): Promise<{ id: string; documents: string[] }> {
  const id = (await t.call("POST", "/v1/rag/corpora", { name: "to delete", embedding_model: "minilm", retention_days: retentionDays })).json.id as string;
  const res = await upload(
    t,
    id,
    files.map((topic) => ({ name: `${topic}.md`, content: NOTE(topic) })),
  );
  assert.equal(res.status, 202, JSON.stringify(res.json));
  assert.equal((await waitForStatus(t, id)).status, "ready");
  return { id, documents: res.json.documents.map((d: { id: string }) => d.id) };
}

describe("deletion, tombstones and retention", () => {
  const clock = new TestClock();
  const bindings = { minilm: testModel("all-minilm-l6-v2") };
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings, clock });
  });
  after(() => t.close());

  it("moves deleted data to cold storage, lists it, purges it only when expired, and shreds the key", async () => {
    const corpus = await readyCorpus(t, 3, ["water", "roads"]);
    const before = sealedChunks(t.dataDir, corpus.id);
    assert.ok(before.length >= 2, "each document has at least one chunk");
    const markers = before.flatMap((c) => [c.content.subarray(0, 40), c.vector.subarray(0, 40)]);
    const cold = path.join(t.dataDir, "cold");

    // A document first: its own tombstone.
    const docDeletedAt = Math.floor(clock.ms / 1000);
    const docDeleted = await t.call("DELETE", `/v1/rag/corpora/${corpus.id}/documents/${corpus.documents[0]}`);
    assert.equal(docDeleted.status, 200, JSON.stringify(docDeleted.json));
    assert.equal(docDeleted.json.object, "rag.document.deleted");
    assert.equal(docDeleted.json.tombstone.kind, "document");
    assert.equal(docDeleted.json.tombstone.documents, 1);
    assert.ok(docDeleted.json.tombstone.chunks >= 1);
    assert.equal(docDeleted.json.tombstone.expires_at, docDeletedAt + 3 * DAY);

    clock.ms += 1000;
    const deletedAt = Math.floor(clock.ms / 1000);
    const res = await t.call("DELETE", `/v1/rag/corpora/${corpus.id}`);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.object, "rag.corpus.deleted");
    assert.equal(res.json.deleted, true);
    assert.equal(res.json.tombstone_expires_at, deletedAt + 3 * DAY);
    const tombstone = res.json.tombstone;
    assert.deepEqual(
      { id: tombstone.id, object: tombstone.object, kind: tombstone.kind, status: tombstone.status, documents: tombstone.documents, deleted_at: tombstone.deleted_at, expires_at: tombstone.expires_at },
      { id: corpus.id, object: "rag.tombstone", kind: "corpus", status: "retained", documents: 1, deleted_at: deletedAt, expires_at: deletedAt + 3 * DAY },
    );
    assert.equal(tombstone.chunks + docDeleted.json.tombstone.chunks, before.length);
    assert.ok(tombstone.bytes > 0);
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpus.id}`)).status, 404);

    // Wiped from primary storage: no chunk ciphertext in pustaka.db or its WAL (the server checkpointed); all of it cold.
    for (const marker of markers) {
      assert.deepEqual(filesHolding(t.dataDir, marker, cold), [], "ciphertext left outside the cold store");
      assert.ok(filesHolding(cold, marker).length >= 1, "the cold store holds each chunk");
    }
    assert.equal(existsSync(path.join(t.dataDir, "blobs", corpus.id)), false);
    assert.equal(filesUnder(path.join(cold, "blobs")).length, 2, "both originals went cold");

    const listed = await t.call("GET", "/v1/admin/tombstones");
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.json.data.map((x: any) => [x.id, x.kind, x.expires_at]),
      [
        [corpus.id, "corpus", deletedAt + 3 * DAY],
        [corpus.documents[0], "document", docDeletedAt + 3 * DAY],
      ],
    );
    const paged = await t.call("GET", "/v1/admin/tombstones?limit=1&order=asc");
    assert.deepEqual([paged.json.data[0].id, paged.json.has_more], [corpus.documents[0], true]);
    assert.equal((await t.call("GET", "/v1/admin/tombstones?limit=0")).status, 400);
    assert.equal((await t.call("GET", "/v1/admin/tombstones?colour=red")).json.error.code, "unknown_parameter");

    clock.ms += 3 * DAY * 1000 - 60_000;
    const early = await t.call("POST", "/v1/admin/tombstones/purge");
    assert.equal(early.status, 200);
    assert.deepEqual([early.json.purged, early.json.keys_destroyed], [[], []], "nothing expires before its window ends");
    assert.ok(filesHolding(cold, markers[0]!).length >= 1);

    clock.ms += 120_000;
    const purged = await t.call("POST", "/v1/admin/tombstones/purge");
    assert.equal(purged.status, 200);
    assert.equal(purged.json.object, "rag.tombstone.purge");
    assert.deepEqual(purged.json.purged.map((x: any) => [x.id, x.status]).sort(), [
      [corpus.id, "purged"],
      [corpus.documents[0], "purged"],
    ].sort());
    assert.deepEqual(purged.json.keys_destroyed, [corpus.id]);
    for (const marker of markers) assert.deepEqual(filesHolding(t.dataDir, marker), [], "no ciphertext of the corpus anywhere in the data folder");
    assert.deepEqual(filesUnder(path.join(cold, "blobs")), []);
    assert.equal(wrappedKeyRow(t.dataDir, corpus.id), undefined, "the wrapped data key is destroyed");
    assert.deepEqual((await t.call("GET", "/v1/admin/tombstones")).json.data, []);
    const audited = (await t.call("GET", "/v1/audit/events?type=tombstone.purge&order=asc")).json.data;
    assert.deepEqual(audited.map((e: any) => [e.data.tombstone_id, e.actor]).sort(), [[corpus.id, "system"], [corpus.documents[0], "system"]].sort());
    assert.equal(audited.find((e: any) => e.data.tombstone_id === corpus.id).data.key_destroyed, true);

    // Nothing can unwrap it any more: the keyring, with the server's own KEK, says so.
    const store = await openSqlDatabase({ kind: "sqlite", dataDir: t.dataDir });
    try {
      const keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(t.dataDir, "keys", "kek.bin")), new CorpusStore(store));
      await assert.rejects(keyring.cipher(corpus.id), (e: unknown) => e instanceof DataKeyGoneError && /is gone .*cannot be decrypted/.test(e.message));
    } finally {
      await store.close();
    }
  });

  it("lets only administrators purge, and keys without a governance scope see no tombstones", async () => {
    const key = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "rag only", scopes: ["rag.read", "rag.write"] })).json.secret as string;
    const listed = await t.call("GET", "/v1/admin/tombstones", undefined, key);
    assert.equal(listed.status, 403);
    assert.equal(listed.json.error.type, "permission_error");
    assert.equal((await t.call("POST", "/v1/admin/tombstones/purge", undefined, key)).status, 403);
  });

  it("finishes a deletion stopped between the copy and the primary deletion at the next start, losing nothing", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-tomb-crash-"));
    let server = await startTestServer({ bindings, clock, dataDir });
    try {
      const corpus = await readyCorpus(server, 30, ["clinics"]);
      const sealed = sealedChunks(dataDir, corpus.id);
      const marker = sealed[0]!.content.subarray(0, 40);
      const record = await server.server.services.corpora.get({ workspaceId: "ws_default", keyId: "key_test", keyName: "test", scopes: new Set(["rag.read"]) }, corpus.id);
      // The first half of a deletion, then the process stops.
      await server.server.services.tombstones.copyCorpus(record);
      assert.equal((await server.call("GET", "/v1/admin/tombstones")).json.data[0].status, "deleting");
      assert.equal((await server.call("GET", `/v1/rag/corpora/${corpus.id}`)).json.chunk_count, sealed.length, "primary still holds everything");
      await server.close();

      server = await startTestServer({ bindings, clock, dataDir });
      assert.equal((await server.call("GET", `/v1/rag/corpora/${corpus.id}`)).status, 404, "the requested deletion was finished at start");
      const listed = (await server.call("GET", "/v1/admin/tombstones")).json.data;
      assert.deepEqual(
        listed.map((x: any) => [x.id, x.status, x.documents, x.chunks]),
        [[corpus.id, "retained", 1, sealed.length]],
      );
      assert.deepEqual(filesHolding(dataDir, marker, path.join(dataDir, "cold")), []);
      assert.ok(filesHolding(path.join(dataDir, "cold"), marker).length >= 1, "the cold store kept the chunk");
      assert.equal(filesUnder(path.join(dataDir, "cold", "blobs", corpus.id)).length, 1, "and the original");
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
