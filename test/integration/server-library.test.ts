/**
 * `src-server` as a library: its public entry does no work at import, composes from a
 * config, listens on demand, and `close()` releases everything it opened.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { createServer, loadConfig, packageLayout } from "../../src-server/index.js";
import { REPO_ROOT, testModel, tinyModel } from "../helpers/models.js";
import { upload } from "../helpers/rag.js";
import { startTestServer } from "../helpers/test-server.js";

describe("the server as a library", () => {
  it("does nothing when imported: no argv parsing, no files read or written", () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), "pustaka-import-"));
    const home = path.join(cwd, "home");
    const script = `await import(${JSON.stringify(path.join(REPO_ROOT, "src-server", "index.ts"))}); console.log("imported");`;
    const tsx = pathToFileURL(path.join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
    const result = spawnSync(process.execPath, ["--import", tsx, "--input-type=module", "-e", script, "serve", "--bogus-flag"], {
      cwd,
      env: { ...process.env, HOME: home, XDG_DATA_HOME: path.join(cwd, "xdg") },
      encoding: "utf8",
    });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), "imported");
    assert.deepEqual(readdirSync(cwd), [], "importing created nothing");
    rmSync(cwd, { recursive: true, force: true });
  });

  it("composes from a config, listens when asked, and closes everything it opened", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-lib-"));
    const layout = packageLayout();
    const config = loadConfig({ env: {}, defaults: { catalogPath: layout.catalogPath }, overrides: { port: 0, dataDir, logLevel: "silent", engine: { threads: 1, gpu: "cpu" }, models: { bindings: { tiny: tinyModel("stories260K") } } } });
    const before = new Set(process.getActiveResourcesInfo());
    const server = await createServer(config, { version: "9.9.9-test", logger: pino({ level: "silent" }) });
    assert.equal(server.url, undefined, "nothing listens until listen()");
    assert.ok(server.generatedAdminKey?.startsWith("psk-"));
    assert.equal((await server.signInLink()), null, "no workbench, no sign-in link");
    const url = await server.listen();
    assert.equal(await server.listen(), url, "listen is idempotent");
    const health = (await (await fetch(`${url}/healthz`)).json()) as { version: string };
    assert.equal(health.version, "9.9.9-test");
    const models = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${server.generatedAdminKey}` } });
    assert.equal(models.status, 200);

    await server.close();
    await server.close();
    await assert.rejects(fetch(`${url}/healthz`), "the port is closed");
    // SQLite removes the WAL only when the last connection closes.
    assert.ok(!existsSync(path.join(dataDir, "pustaka.db-wal")), "the database was closed");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const left = process.getActiveResourcesInfo().filter((r) => !before.has(r) && r !== "TTYWrap");
    assert.deepEqual(left.filter((r) => /TCP|Pipe|FSReqCallback/.test(r)), [], `handles left open: ${left.join(", ")}`);
    await assert.rejects(server.listen(), /closed/);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("sweeps stored files that belong to no document at start, and keeps the others", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-orphans-"));
    let t = await startTestServer({ bindings: { embed: testModel("all-minilm-l6-v2") }, dataDir });
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "c", embedding_model: "embed", chunking: "fixed" })).json.id;
    const uploaded = await upload(t, corpus, [{ name: "a.txt", content: "Once upon a time there was a cat." }]);
    assert.equal(uploaded.status, 202);
    const kept = path.join(dataDir, "blobs", corpus, uploaded.json.documents[0].id);
    assert.ok(existsSync(kept));
    await t.close();
    // What an upload cut off mid-file, or a crash, can leave behind.
    const strayInCorpus = path.join(dataDir, "blobs", corpus, "doc_" + "x".repeat(24));
    const strayCorpus = path.join(dataDir, "blobs", "corp_" + "y".repeat(24));
    writeFileSync(strayInCorpus, "sealed bytes");
    mkdirSync(strayCorpus);
    writeFileSync(path.join(strayCorpus, "doc_" + "z".repeat(24)), "sealed bytes");
    t = await startTestServer({ bindings: { embed: testModel("all-minilm-l6-v2") }, dataDir });
    assert.ok(!existsSync(strayInCorpus), "an original with no document is removed");
    assert.ok(!existsSync(path.join(strayCorpus, "doc_" + "z".repeat(24))), "so is one of a corpus that does not exist");
    assert.ok(existsSync(kept), "a document's original stays");
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
