/**
 * Backup and restore when the KEK is in an HSM (PKCS#11, SoftHSM2), with the real server
 * and the real `pustaka` command: the KEK never leaves the token, so the backup names the
 * token and key instead; a restore without that token, with the wrong PIN or with another
 * token is refused with what it needs, leaving nothing behind; with the token and its PIN
 * the restored server reads the corpus.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { ConfigInput } from "../../src-server/index.js";
import { assertDocumentedCommandsRun } from "../helpers/doc-commands.js";
import { testModel } from "../helpers/models.js";
import { cliRuns, pustaka } from "../helpers/pustaka-cli.js";
import { EVAL_DOCS, evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { createSoftHsmToken, type SoftHsmToken } from "../helpers/softhsm.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const MODELS = { minilm: testModel("all-minilm-l6-v2") };
const QUESTION = "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan?";

describe("backup and restore with the KEK in an HSM (PKCS#11, SoftHSM2)", () => {
  let token: SoftHsmToken;
  let work: string;
  let hsmConfig: string;
  let serverConfig: ConfigInput;
  let a: TestServer;
  let corpusId: string;
  let documentId: string;
  let backup: string;
  let searched: unknown;
  const targets = () => path.join(work, "targets");

  before(async () => {
    token = createSoftHsmToken();
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-backup-hsm-"));
    mkdirSync(targets());
    const pinFile = path.join(work, "hsm.pin");
    writeFileSync(pinFile, `${token.pin}\n`, { mode: 0o600 });
    const pkcs11 = { module: token.module, tokenLabel: token.tokenLabel, keyLabel: "pustaka-kek" };
    // The CLI's configuration names no PIN file: its PIN comes from PUSTAKA_HSM_PIN.
    hsmConfig = path.join(work, "hsm.json");
    writeFileSync(hsmConfig, JSON.stringify({ security: { provider: "pkcs11", pkcs11 } }));
    serverConfig = { security: { provider: "pkcs11", pkcs11: { ...pkcs11, pinFile } } };
    const init = await pustaka(["keys", "init-hsm", "--config", hsmConfig, "--data-dir", path.join(work, "init")], { PUSTAKA_HSM_PIN: token.pin });
    assert.equal(init.status, 0, init.stderr);
    a = await startTestServer({ bindings: MODELS, config: serverConfig });
    corpusId = (await a.call("POST", "/v1/rag/corpora", { name: "Banjir", embedding_model: "minilm" })).json.id;
    const res = await upload(a, corpusId, [evalDoc("banjir-kelantan-2022.md"), evalDoc("floods-pahang-2023-briefing.md")]);
    documentId = res.json.documents[0].id;
    assert.equal((await waitForStatus(a, corpusId)).status, "ready");
    searched = (await a.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: QUESTION, top_k: 4 })).json.data;
  });
  after(async () => {
    await a?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("backs up without the KEK, naming the token and key a restore needs; --include-kek is refused", { timeout: 300_000 }, async () => {
    const dir = path.join(work, "backups");
    const noPin = await pustaka(["backup", dir, "--data-dir", a.dataDir, "--config", hsmConfig]);
    assert.equal(noPin.status, 2);
    assert.match(noPin.stderr, /no HSM PIN: set the environment variable PUSTAKA_HSM_PIN/);
    const withKek = await pustaka(["backup", dir, "--data-dir", a.dataDir, "--config", hsmConfig, "--include-kek"], { PUSTAKA_HSM_PIN: token.pin });
    assert.equal(withKek.status, 2);
    assert.match(withKek.stderr, /--include-kek: this instance's KEK is in an HSM .* and never leaves it; a restore needs the same token and its PIN/);
    const run = await pustaka(["backup", dir, "--data-dir", a.dataDir, "--config", hsmConfig], { PUSTAKA_HSM_PIN: token.pin });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`KEK: in the HSM token '${token.tokenLabel}' \\(pkcs11:${token.tokenLabel}/pustaka-kek:v1\\.[^)]+\\); a restore needs that token \\(or its backup\\) and its PIN`));
    const [name] = readdirSync(dir).filter((n) => n.startsWith("pustaka-backup-"));
    backup = path.join(dir, name!);
    const manifest = JSON.parse(readFileSync(path.join(backup, "manifest.json"), "utf8"));
    assert.equal(manifest.key_provider.kind, "pkcs11");
    assert.equal(manifest.key_provider.token_label, token.tokenLabel);
    assert.equal(manifest.key_provider.key_label, "pustaka-kek");
    assert.match(manifest.key_provider.kek_id, new RegExp(`^pkcs11:${token.tokenLabel}/pustaka-kek:v1\\.`));
    assert.ok(!manifest.files.some((f: any) => f.role === "kek"));
  });

  it("refuses a restore without the token, with a wrong PIN or with another token, saying what it needs and leaving nothing", { timeout: 300_000 }, async () => {
    const target = path.join(targets(), "restored");
    const refused = async (args: string[], env: Record<string, string>, message: RegExp) => {
      const run = await pustaka(["restore", backup, "--data-dir", target, ...args], env);
      assert.equal(run.status, 2, `${run.stdout}${run.stderr}`);
      assert.match(run.stderr, message);
      assert.deepEqual(readdirSync(targets()), [], "nothing left behind");
    };
    await refused([], {}, new RegExp(`wrapped by the KEK 'pustaka-kek' \\(pkcs11:[^)]+\\) in the PKCS#11 token '${token.tokenLabel}', and a KEK in an HSM never leaves it: restore with a configuration \\(--config\\) naming that token`));
    await refused(["--config", hsmConfig], { PUSTAKA_HSM_PIN: "not-the-pin" }, /cannot open the HSM: wrong PIN/);
    await refused(["--config", hsmConfig], {}, /cannot open the HSM: no HSM PIN: set the environment variable PUSTAKA_HSM_PIN/);
    const other = createSoftHsmToken();
    const otherConfig = path.join(work, "other-hsm.json");
    writeFileSync(otherConfig, JSON.stringify({ security: { provider: "pkcs11", pkcs11: { module: other.module, tokenLabel: other.tokenLabel, keyLabel: "pustaka-kek" } } }));
    const init = await pustaka(["keys", "init-hsm", "--config", otherConfig, "--data-dir", path.join(work, "other")], { PUSTAKA_HSM_PIN: other.pin });
    assert.equal(init.status, 0, init.stderr);
    await refused(["--config", otherConfig], { PUSTAKA_HSM_PIN: other.pin }, /the token '.*' as configured does not hold the KEK this backup's keys are wrapped with \(pkcs11:/);
  });

  it("restores with the same token and PIN; the restored server reads and searches the corpus", { timeout: 300_000 }, async () => {
    const target = path.join(targets(), "restored");
    const run = await pustaka(["restore", backup, "--data-dir", target, "--config", hsmConfig], { PUSTAKA_HSM_PIN: token.pin });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`KEK from the HSM token '${token.tokenLabel}'`));
    assert.match(run.stdout, /audit trail: VALID/);
    assert.ok(!existsSync(path.join(target, "keys", "kek.bin")), "no key file appears beside an HSM's data");
    const r = await startTestServer({ bindings: MODELS, config: serverConfig, dataDir: target });
    try {
      const content = await fetch(`${r.url}/v1/rag/corpora/${corpusId}/documents/${documentId}/content`, { headers: { authorization: `Bearer ${a.key}` } });
      assert.equal(content.status, 200);
      assert.equal(await content.text(), readFileSync(path.join(EVAL_DOCS, "banjir-kelantan-2022.md"), "utf8"));
      assert.deepEqual((await r.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: QUESTION, top_k: 4 }, a.key)).json.data, searched);
      assert.equal((await r.call("GET", "/v1/audit/verify")).json.valid, true);
    } finally {
      await r.close();
    }
  });

  it("has run the HSM restore command docs/backup-restore.md shows", () => {
    assertDocumentedCommandsRun("docs/backup-restore.md", "backup-hsm", cliRuns);
  });
});
