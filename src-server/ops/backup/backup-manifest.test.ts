import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { newDataKey } from "../../security/data-cipher.js";
import { LocalKeyFileProvider } from "../../security/local-key-file-provider.js";
import { BACKUP_FORMAT, checkManifestMac, manifestMac, readManifest, type BackupManifest } from "./backup-manifest.js";
import { localKekId, openSecret, sealSecret } from "./backup-keys.js";

const root = mkdtempSync(path.join(tmpdir(), "pustaka-backup-manifest-"));
after(() => rmSync(root, { recursive: true, force: true }));

function sample(key: Buffer): BackupManifest {
  const unsigned: Omit<BackupManifest, "mac"> = {
    format: BACKUP_FORMAT,
    id: "bkp_000000000000000000000001",
    name: "pustaka-backup-2026-01-01T00-00-00-000Z",
    created_at: "2026-01-01T00:00:01.000Z",
    pustaka_version: "0.1.0",
    schema_version: 21,
    source: { host: "h", data_dir: "/d", trigger: "cli" },
    key_provider: { kind: "local-file", kek_id: "local-file:0123456789abcdef", kek_included: false },
    backup_key: "AAAA",
    contents: { workspaces: 1, corpora: 1, documents: 2, documents_pending: 0, chunks: 9, audit_entries: 4, tombstones: 0, originals_missing_at_source: [], snapshot_attempts: 1 },
    left_out: [],
    models: { included: false, files: [], corpus_models: [] },
    files: [{ path: "data/pustaka.db", bytes: 4096, sha256: "a".repeat(64), role: "data" }],
  };
  return { ...unsigned, mac: manifestMac(unsigned, key) };
}

function write(name: string, text: string): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "manifest.json"), text);
  return dir;
}

describe("backup manifest", () => {
  it("verifies under the backup key only, and notices any change", () => {
    const key = newDataKey();
    const manifest = sample(key);
    checkManifestMac(manifest, key);
    assert.throws(() => checkManifestMac(manifest, newDataKey()), /manifest was altered/);
    assert.throws(() => checkManifestMac({ ...manifest, contents: { ...manifest.contents, documents: 3 } }, key), /manifest was altered/);
    assert.throws(() => checkManifestMac({ ...manifest, files: [] }, key), /manifest was altered/);
  });

  it("reads a valid manifest and names each way one can be wrong", async () => {
    const key = newDataKey();
    const manifest = sample(key);
    assert.deepEqual(await readManifest(write("good", JSON.stringify(manifest))), manifest);
    await assert.rejects(readManifest(path.join(root, "absent")), /is not a Pustaka backup: it has no manifest\.json/);
    await assert.rejects(readManifest(write("cut", JSON.stringify(manifest).slice(0, 100))), /truncated or damaged \(not valid JSON/);
    await assert.rejects(readManifest(write("other", JSON.stringify({ ...manifest, format: "tarball/9" }))), /format is 'tarball\/9', which this version of Pustaka does not read/);
    await assert.rejects(readManifest(write("empty", "{}")), /not a valid Pustaka backup manifest/);
    await assert.rejects(readManifest(write("x.partial", JSON.stringify(manifest))), /unfinished backup/);
    for (const bad of ["data/../../etc/passwd", "/etc/passwd", "data\\..\\x", "elsewhere/file", "data", "data/./x", "data//x"]) {
      const files = [{ path: bad, bytes: 1, sha256: "b".repeat(64), role: "data" }];
      await assert.rejects(readManifest(write("paths", JSON.stringify({ ...manifest, files }))), /files\.0\.path/, bad);
    }
    await assert.rejects(readManifest(write("extra", JSON.stringify({ ...manifest, surprise: 1 }))), /not a valid Pustaka backup manifest/);
  });

  it("seals secrets to the backup and their name", () => {
    const key = newDataKey();
    const sealed = sealSecret(key, "bkp_a", "audit-signing.pem", Buffer.from("secret"));
    assert.equal(openSecret(key, "bkp_a", "audit-signing.pem", sealed).toString(), "secret");
    assert.throws(() => openSecret(key, "bkp_a", "oauth-signing.json", sealed), /does not open under the backup's key/);
    assert.throws(() => openSecret(key, "bkp_b", "audit-signing.pem", sealed), /does not open/);
    assert.throws(() => openSecret(newDataKey(), "bkp_a", "audit-signing.pem", sealed), /does not open/);
  });

  it("names a local KEK as the local provider does", () => {
    const file = path.join(root, "kek.bin");
    writeFileSync(file, Buffer.alloc(32, 7));
    assert.equal(localKekId(Buffer.alloc(32, 7)), new LocalKeyFileProvider(file).id);
    assert.notEqual(localKekId(Buffer.alloc(32, 7)), localKekId(Buffer.alloc(32, 8)));
  });
});
