/**
 * What a backup holds when the data changes under it, with a data folder made by the real
 * server: a document deleted between the database snapshot and the copy of its original is
 * left out whole (the snapshot is taken again), an original already missing from the data
 * folder is reported rather than retried for ever, and the cold store keeps exactly the
 * tombstones the snapshot's catalogue records (one it does not know yet is dropped). The
 * restored server lists the tombstone, serves the documents the backup holds, and purges.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { createBackup, restoreBackup, type BackupResult } from "../../src-server/ops/backup.js";
import { LocalKeyFileProvider } from "../../src-server/security/local-key-file-provider.js";
import { testModel } from "../helpers/models.js";
import { EVAL_DOCS, evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const MODELS = { minilm: testModel("all-minilm-l6-v2") };
const DOCS = ["banjir-kelantan-2022.md", "floods-pahang-2023-briefing.md", "lrt-laluan-bayu-q2-2024.md", "employee-leave-policy.md"];

describe("a backup of data that changes under it", () => {
  let work: string;
  let dataDir: string;
  let corpusId: string;
  const ids: Record<string, string> = {};
  let result: BackupResult;
  /** A tombstone id the cold store holds but the catalogue does not (a deletion after the snapshot). */
  const unknownTombstone = "doc_000000000000000000000000";

  before(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-backup-consistency-"));
    dataDir = path.join(work, "data");
    const t: TestServer = await startTestServer({ bindings: MODELS, dataDir });
    try {
      corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Laporan", embedding_model: "minilm" })).json.id;
      const res = await upload(t, corpusId, DOCS.map(evalDoc));
      for (const d of res.json.documents) ids[d.filename] = d.id;
      assert.equal((await waitForStatus(t, corpusId)).status, "ready");
      // A deletion within its retention: a tombstone in the catalogue, its payload in the cold store.
      assert.equal((await t.call("DELETE", `/v1/rag/corpora/${corpusId}/documents/${ids["employee-leave-policy.md"]}`)).status, 200);
    } finally {
      await t.close();
    }
    const cold = new BetterSqlite3(path.join(dataDir, "cold", "tombstones.db"));
    cold.prepare("INSERT INTO cold_manifests (tombstone_id, sealed) VALUES (?, ?)").run(unknownTombstone, Buffer.from("sealed"));
    cold.close();
    mkdirSync(path.join(dataDir, "cold", "blobs", unknownTombstone), { recursive: true });
    writeFileSync(path.join(dataDir, "cold", "blobs", unknownTombstone, unknownTombstone), "sealed original");
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("takes the snapshot again when a document is deleted while its original is copied, and reports an original missing at the source", { timeout: 120_000 }, async () => {
    const provider = new LocalKeyFileProvider(path.join(dataDir, "keys", "kek.bin"));
    const deleted = ids["floods-pahang-2023-briefing.md"]!;
    const lost = ids["lrt-laluan-bayu-q2-2024.md"]!;
    let hooked = false;
    result = await createBackup(
      { dataDir, modelsDir: path.join(dataDir, "models"), bindings: MODELS, security: { provider: "local-file" }, provider },
      {
        dir: path.join(work, "backups"),
        version: "test",
        trigger: "cli",
        // Between the first snapshot and the copy of the originals: one document is deleted
        // (its row, then its original, as a deletion does), one original disappears on its own.
        onProgress: (message) => {
          if (hooked || !message.startsWith("copying") || !message.endsWith("originals")) return;
          hooked = true;
          const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"));
          db.pragma("foreign_keys = ON");
          db.prepare("DELETE FROM documents WHERE id = ?").run(deleted);
          db.close();
          rmSync(path.join(dataDir, "blobs", corpusId, deleted));
          rmSync(path.join(dataDir, "blobs", corpusId, lost));
        },
      },
    );
    await provider.close();
    assert.ok(hooked);
    const { contents } = result.manifest;
    assert.equal(contents.snapshot_attempts, 2, "the snapshot was taken again");
    assert.deepEqual(contents.originals_missing_at_source, [lost]);
    assert.equal(contents.documents, 2, "the deleted document is not in the backup; the one missing its original is");
    const files = result.manifest.files.map((f) => f.path);
    assert.deepEqual(files.filter((f) => f.startsWith("data/blobs/")).sort(), [`data/blobs/${corpusId}/${ids["banjir-kelantan-2022.md"]}`]);
    assert.deepEqual(readdirSync(path.join(result.path, "data", "blobs", corpusId)), [ids["banjir-kelantan-2022.md"]], "no original of a document the backup does not hold");
    const db = new BetterSqlite3(path.join(result.path, "data", "pustaka.db"), { readonly: true });
    assert.deepEqual(db.prepare("SELECT id FROM documents ORDER BY id").pluck().all(), [ids["banjir-kelantan-2022.md"], lost].sort());
    assert.equal(db.prepare("SELECT COUNT(*) FROM chunks WHERE document_id = ?").pluck().get(deleted), 0);
    db.close();
    // The cold store: the catalogued tombstone with its original, not the unknown one.
    const tombstone = ids["employee-leave-policy.md"]!;
    assert.ok(files.includes(`data/cold/blobs/${tombstone}/${tombstone}`));
    assert.ok(!files.some((f) => f.includes(unknownTombstone)));
    const cold = new BetterSqlite3(path.join(result.path, "data", "cold", "tombstones.db"), { readonly: true });
    assert.deepEqual(cold.prepare("SELECT tombstone_id FROM cold_manifests").pluck().all(), [tombstone]);
    assert.ok((cold.prepare("SELECT COUNT(*) FROM cold_chunks WHERE tombstone_id = ?").pluck().get(tombstone) as number) > 0);
    assert.equal(cold.prepare("SELECT COUNT(*) FROM cold_chunks WHERE tombstone_id <> ?").pluck().get(tombstone), 0);
    cold.close();
  });

  it("restores it: the server serves what the backup holds, lists the tombstone and purges it", { timeout: 300_000 }, async () => {
    const target = path.join(work, "restored");
    const restored = await restoreBackup({ backup: result.path, dataDir: target, modelsDir: path.join(target, "models"), security: { provider: "local-file" }, kekFile: path.join(dataDir, "keys", "kek.bin") });
    assert.equal(restored.audit.valid, true);
    const r = await startTestServer({ bindings: MODELS, dataDir: target });
    try {
      const docs = (await r.call("GET", `/v1/rag/corpora/${corpusId}/documents?order=asc`)).json.data.map((d: any) => d.filename).sort();
      assert.deepEqual(docs, ["banjir-kelantan-2022.md", "lrt-laluan-bayu-q2-2024.md"]);
      const content = await fetch(`${r.url}/v1/rag/corpora/${corpusId}/documents/${ids["banjir-kelantan-2022.md"]}/content`, { headers: { authorization: `Bearer ${r.key}` } });
      assert.equal(await content.text(), readFileSync(path.join(EVAL_DOCS, "banjir-kelantan-2022.md"), "utf8"));
      const search = (await r.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "Sungai Kelantan", top_k: 3 })).json.data;
      assert.ok(search.length > 0 && search.every((c: any) => c.filename !== "floods-pahang-2023-briefing.md"));
      const tombstones = (await r.call("GET", "/v1/admin/tombstones")).json.data;
      assert.deepEqual(tombstones.map((t: any) => t.document_id), [ids["employee-leave-policy.md"]]);
    } finally {
      await r.close();
    }
    // A month later the restored server destroys the expired tombstone, its cold payload too.
    const later = Date.now() + 31 * 86_400_000;
    const again = await startTestServer({ bindings: MODELS, dataDir: target, clock: { now: () => later } });
    try {
      const deadline = Date.now() + 60_000;
      while ((await again.call("GET", "/v1/admin/tombstones")).json.data.length > 0) {
        assert.ok(Date.now() < deadline, "the expired tombstone is purged");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.ok(!existsSync(path.join(target, "cold", "blobs", ids["employee-leave-policy.md"]!)));
    } finally {
      await again.close();
    }
  });
});
