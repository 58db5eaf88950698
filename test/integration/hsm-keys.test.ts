/**
 * Keys end to end with the real server and the real `pustaka` command: a corpus and a
 * conversation whose data keys a SoftHSM2 token wraps (`keys init-hsm`, PIN from a file
 * for the server and from PUSTAKA_HSM_PIN for the CLI), then `keys rotate-kek` with the
 * server stopped (refused while it runs): every wrapped key changes, the data ciphertext
 * does not, and everything reads back after a restart. The same rotation with the local
 * key file, which warns at start that it is for development.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import type { ConfigInput } from "../../src-server/index.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { createSoftHsmToken, type SoftHsmToken } from "../helpers/softhsm.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const CLI = [path.join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(REPO_ROOT, "src-server", "cli.ts")];
const DOC = "# Jadual banjir\n\nSungai Kelantan melimpah pada 12 Disember. Pusat pemindahan dibuka di Kuala Krai.\n";

function pustaka(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, PUSTAKA_API_KEY: "", ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

interface Snapshot {
  keys: { id: string; provider: string; wrapped: Buffer }[];
  chunks: { id: string; content: Buffer; vector: Buffer }[];
  blobs: Map<string, Buffer>;
}

function snapshot(dataDir: string): Snapshot {
  const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
  try {
    const keys = [
      ...(db.prepare("SELECT corpus_id AS id, provider, wrapped_key AS wrapped FROM corpus_keys").all() as Snapshot["keys"]),
      ...(db.prepare("SELECT id, key_provider AS provider, wrapped_key AS wrapped FROM conversations").all() as Snapshot["keys"]),
    ].sort((a, b) => a.id.localeCompare(b.id));
    const chunks = db.prepare("SELECT id, content, vector FROM chunks ORDER BY id").all() as Snapshot["chunks"];
    const blobs = new Map<string, Buffer>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) (e.isDirectory() ? walk : (f: string) => blobs.set(f, readFileSync(f)))(path.join(dir, e.name));
    };
    walk(path.join(dataDir, "blobs"));
    return { keys, chunks, blobs };
  } finally {
    db.close();
  }
}

/** Creates a corpus with one indexed document and a conversation; returns what to read back. */
async function populate(t: TestServer) {
  const corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Banjir", embedding_model: "minilm" })).json.id as string;
  const res = await upload(t, corpusId, [{ name: "banjir.md", content: DOC }]);
  assert.equal(res.status, 202, JSON.stringify(res.json));
  const documentId = res.json.documents[0].id as string;
  assert.equal((await waitForStatus(t, corpusId, 120_000)).status, "ready");
  const conversation = await t.call("POST", "/v1/conversations", { title: "Soalan banjir" });
  assert.equal(conversation.status, 201, JSON.stringify(conversation.json));
  const appended = await t.call("POST", `/v1/conversations/${conversation.json.id}/messages`, { messages: [{ role: "user", content: "Di mana pusat pemindahan?" }] });
  assert.equal(appended.status, 201, JSON.stringify(appended.json));
  return { corpusId, documentId, conversationId: conversation.json.id as string };
}

/** Everything sealed under the data keys reads back: the original, a chunk, the conversation. */
async function assertReadable(t: TestServer, ids: Awaited<ReturnType<typeof populate>>, chunkId: string) {
  const content = await fetch(`${t.url}/v1/rag/corpora/${ids.corpusId}/documents/${ids.documentId}/content`, { headers: { authorization: `Bearer ${t.key}` } });
  assert.equal(content.status, 200);
  assert.equal(await content.text(), DOC, "the original decrypts");
  const passage = await t.call("GET", `/v1/rag/corpora/${ids.corpusId}/chunks/${chunkId}`);
  assert.equal(passage.status, 200, JSON.stringify(passage.json));
  assert.match(JSON.stringify(passage.json), /Kuala Krai/, "the chunk decrypts");
  const conversation = await t.call("GET", `/v1/conversations/${ids.conversationId}`);
  assert.equal(conversation.json.title, "Soalan banjir");
  assert.equal(conversation.json.messages[0].content, "Di mana pusat pemindahan?");
}

/** Rotation via the CLI with the server stopped: wrapped keys change, ciphertext does not, data reads back. */
async function rotateAndCheck(options: { dataDir: string; config: ConfigInput; cliArgs: string[]; env?: Record<string, string>; ids: Awaited<ReturnType<typeof populate>>; newProvider: RegExp }) {
  const before = snapshot(options.dataDir);
  assert.ok(before.chunks.length > 0 && before.blobs.size > 0);
  const rotated = await pustaka(["keys", "rotate-kek", "--data-dir", options.dataDir, ...options.cliArgs], options.env);
  assert.equal(rotated.status, 0, rotated.stderr);
  assert.match(rotated.stdout, /rewrapped 1 corpus, 1 conversation, 0 stored-response, 0 remote-model and 0 signing keys/);
  const after = snapshot(options.dataDir);
  assert.equal(after.keys.length, before.keys.length);
  after.keys.forEach((key, i) => {
    assert.match(key.provider, options.newProvider);
    assert.notEqual(key.provider, before.keys[i]!.provider, `${key.id} records the new KEK`);
    assert.notDeepEqual(key.wrapped, before.keys[i]!.wrapped, `${key.id} rewrapped`);
  });
  assert.match(rotated.stdout, new RegExp(`old KEK ${before.keys[0]!.provider.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
  assert.deepEqual(after.chunks, before.chunks, "chunk ciphertext and encrypted vectors untouched");
  assert.deepEqual(after.blobs, before.blobs, "stored originals untouched");

  const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, dataDir: options.dataDir, config: options.config });
  try {
    await assertReadable(t, options.ids, before.chunks[0]!.id);
    // The rotation is in the instance's audit chain, by the local operator, with both KEKs named.
    const [entry] = (await t.call("GET", "/v1/audit/events?chain=instance&type=kek.rotate")).json.data;
    assert.equal(entry.actor, "cli");
    assert.equal(entry.outcome, "success");
    assert.equal(entry.data.old_provider, before.keys[0]!.provider);
    assert.deepEqual(entry.data.rewrapped, { corpora: 1, conversations: 1, responses: 0, remoteModels: 0, signingKeys: 0 });
    assert.equal((await t.call("GET", "/v1/audit/verify")).json.valid, true);
    const security = (await t.call("GET", "/v1/admin/security")).json;
    assert.equal(security.key_provider.id, after.keys[0]!.provider, "the Security page names the KEK in use");
    assert.equal(security.key_provider.hardware_backed, security.key_provider.kind === "pkcs11");
  } finally {
    await t.close();
  }
}

describe("keys in an HSM (PKCS#11, SoftHSM2)", () => {
  let token: SoftHsmToken;
  let dir: string;
  let configFile: string;
  let serverConfig: ConfigInput;
  before(() => {
    token = createSoftHsmToken();
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-hsm-it-"));
    const pinFile = path.join(dir, "hsm.pin");
    writeFileSync(pinFile, `${token.pin}\n`, { mode: 0o600 });
    const pkcs11 = { module: token.module, tokenLabel: token.tokenLabel, keyLabel: "pustaka-kek" };
    // The CLI's configuration names no PIN file: its PIN comes from PUSTAKA_HSM_PIN.
    configFile = path.join(dir, "config.json");
    writeFileSync(configFile, JSON.stringify({ security: { provider: "pkcs11", pkcs11 } }));
    serverConfig = { security: { provider: "pkcs11", pkcs11: { ...pkcs11, pinFile } } };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses to start without the KEK, which `keys init-hsm` creates once", async () => {
    await assert.rejects(startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, config: serverConfig }), /no key labelled 'pustaka-kek'.*pustaka keys init-hsm/);
    const noPin = await pustaka(["keys", "init-hsm", "--config", configFile, "--data-dir", path.join(dir, "x")]);
    assert.equal(noPin.status, 2);
    assert.match(noPin.stderr, /no HSM PIN: set the environment variable PUSTAKA_HSM_PIN/);
    const created = await pustaka(["keys", "init-hsm", "--config", configFile, "--data-dir", path.join(dir, "x")], { PUSTAKA_HSM_PIN: token.pin });
    assert.equal(created.status, 0, created.stderr);
    assert.match(created.stdout, new RegExp(`^created: pkcs11:${token.tokenLabel}/pustaka-kek:v1\\.`));
    const wrongPin = await pustaka(["keys", "init-hsm", "--config", configFile, "--data-dir", path.join(dir, "x")], { PUSTAKA_HSM_PIN: "not-the-pin" });
    assert.equal(wrongPin.status, 2);
    assert.match(wrongPin.stderr, /^pustaka: wrong PIN for token/);
  });

  it("serves corpora and conversations under HSM-wrapped keys, and rotates the KEK with the server stopped", async () => {
    const dataDir = path.join(dir, "data");
    const logs = new PassThrough();
    let log = "";
    logs.on("data", (d: Buffer) => (log += d.toString()));
    const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, dataDir, config: serverConfig, logStream: logs });
    let ids: Awaited<ReturnType<typeof populate>>;
    try {
      ids = await populate(t);
      const { keys, chunks } = snapshot(dataDir);
      assert.equal(keys.length, 2);
      for (const key of keys) assert.match(key.provider, new RegExp(`^pkcs11:${token.tokenLabel}/pustaka-kek:v1\\.`));
      await assertReadable(t, ids, chunks[0]!.id);
      assert.doesNotMatch(log, /local file/, "no key-file warning with an HSM");
      assert.ok(!log.includes(token.pin), "the PIN is never logged");
      const refused = await pustaka(["keys", "rotate-kek", "--config", configFile, "--data-dir", dataDir], { PUSTAKA_HSM_PIN: token.pin });
      assert.equal(refused.status, 2, "refused while the server runs");
      assert.match(refused.stderr, /server \(pid \d+\) is using .*stop it/);
    } finally {
      await t.close();
    }
    await rotateAndCheck({ dataDir, config: serverConfig, cliArgs: ["--config", configFile], env: { PUSTAKA_HSM_PIN: token.pin }, ids, newProvider: new RegExp(`^pkcs11:${token.tokenLabel}/pustaka-kek:v2\\.`) });
  });
});

describe("keys in the local key file", () => {
  it("warns at start, and rotates to a new key file without touching data", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-kekfile-it-"));
    const logs = new PassThrough();
    let log = "";
    logs.on("data", (d: Buffer) => (log += d.toString()));
    const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, dataDir, logStream: logs });
    let ids: Awaited<ReturnType<typeof populate>>;
    try {
      assert.match(log, /"level":40.*key-encryption key is in a local file.*development.*security\.provider 'pkcs11'/);
      ids = await populate(t);
    } finally {
      await t.close();
    }
    const oldKey = readFileSync(path.join(dataDir, "keys", "kek.bin"));
    try {
      await rotateAndCheck({ dataDir, config: {}, cliArgs: [], ids, newProvider: /^local-file:[0-9a-f]{16}$/ });
      assert.notDeepEqual(readFileSync(path.join(dataDir, "keys", "kek.bin")), oldKey);
      const keyFiles = readdirSync(path.join(dataDir, "keys"));
      assert.ok(keyFiles.includes("kek.bin"));
      assert.deepEqual(
        keyFiles.filter((f) => f.startsWith("kek.bin.")),
        [],
        "no retired key file left",
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
