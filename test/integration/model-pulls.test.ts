/**
 * Getting models from the workbench: the catalog with what is installed, pulls from a
 * publisher (a local HTTP server stands in for it: this machine reaches none) with
 * progress events, resume, hash check and cancel, and GGUF files on disk bound by path.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startFileServer, type FileServer } from "../helpers/file-server.js";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";
import { collectEvents } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const stories = readFileSync(tinyModel("stories260K"));
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** The shipped catalog plus models served by the local stand-in for their publishers. */
function catalogWith(base: string, stallUrl: string): string {
  const catalog = JSON.parse(readFileSync(path.join(REPO_ROOT, "models", "catalog.json"), "utf8"));
  const local = (id: string, file: string, url: string, sha256: string | null) => ({
    id,
    type: "chat",
    name: id,
    description: "",
    languages: ["en"],
    license: "mit",
    architecture: "llama",
    parameters: "260K",
    quantization: "F32",
    context_length: 128,
    source: { url, filename: file, bytes: null, sha256 },
  });
  catalog.models.push(
    local("stories-local", "stories-local.gguf", `${base}/stories.gguf`, sha(stories)),
    local("stories-corrupt", "stories-corrupt.gguf", `${base}/corrupt.gguf`, sha(stories)),
    local("stories-resume", "stories-resume.gguf", `${base}/stories.gguf`, sha(stories)),
    local("stories-stalled", "stories-stalled.gguf", stallUrl, null),
  );
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-catalog-")), "catalog.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

async function waitForPull(t: TestServer, id: string): Promise<any> {
  for (let i = 0; i < 300; i++) {
    const pull = (await t.call("GET", `/v1/models/pulls/${id}`)).json;
    if (!["queued", "downloading", "verifying", "converting"].includes(pull.status)) return pull;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`pull ${id} did not finish`);
}

describe("model pulls and files", () => {
  let t: TestServer;
  let files: FileServer;
  let stall: http.Server;
  let dataDir: string;
  let catalogPath: string;
  let userKey: string;

  before(async () => {
    const corrupt = Buffer.from(stories);
    corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 0xff;
    files = await startFileServer({ "/stories.gguf": stories, "/corrupt.gguf": corrupt });
    // A publisher that sends the headers and a little, then nothing: only cancelling ends it.
    stall = http.createServer((_req, res) => {
      res.writeHead(200, { "content-length": String(10_000_000) });
      res.write(Buffer.alloc(1000));
    });
    await new Promise<void>((r) => stall.listen(0, "127.0.0.1", r));
    catalogPath = catalogWith(files.url, `http://127.0.0.1:${(stall.address() as AddressInfo).port}/big.gguf`);
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-pulls-"));
    t = await startTestServer({ bindings: {}, dataDir, config: { catalogPath } });
    userKey = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "analyst" })).json.secret;
  });
  after(async () => {
    await t.close();
    await files.close();
    stall.closeAllConnections();
    await new Promise((r) => stall.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("lists the catalog with what is installed, the starter pair and the aliases", async () => {
    const res = await t.call("GET", "/v1/models/catalog");
    assert.equal(res.status, 200);
    const byId = Object.fromEntries(res.json.data.map((m: any) => [m.id, m]));
    assert.deepEqual(byId["bge-m3-q8_0"].aliases, ["svc-embed-1024"]);
    assert.equal(byId["bge-m3-q8_0"].source, "url");
    assert.equal(byId["smollm2-135m-instruct-q4_1"].starter, true);
    assert.equal(byId["multilingual-e5-small-q4_0"].source, "pip");
    assert.ok(res.json.data.every((m: any) => m.installed === false));
  });

  it("pulls from the publisher with progress events, then serves the model at once", async () => {
    const events = collectEvents(`${t.url}/v1/models/pulls/events`, t.key, (e) => e.object === "model.pull.updated" && e.pull.status === "done");
    await new Promise((r) => setTimeout(r, 100));
    const started = await t.call("POST", "/v1/models/pulls", { model: "stories-local" });
    assert.equal(started.status, 202, JSON.stringify(started.json));
    assert.equal(started.json.object, "model.pull");
    assert.deepEqual(started.json.models, ["stories-local"]);
    const seen = await events;
    assert.equal(seen[0].object, "model.pull.snapshot");
    const updates = seen.filter((e) => e.object === "model.pull.updated").map((e) => e.pull);
    assert.ok(updates.some((p) => p.status === "downloading" && p.received_bytes > 0));
    assert.equal(updates.at(-1).received_bytes, stories.length);
    const models = (await t.call("GET", "/v1/models")).json.data.map((m: any) => m.id);
    assert.ok(models.includes("stories-local"), "the pulled model is listed without a restart");
    const chat = await t.call("POST", "/v1/chat/completions", { model: "stories-local", messages: [{ role: "user", content: "Once" }], max_tokens: 4 });
    assert.equal(chat.status, 200, JSON.stringify(chat.json));
    const again = await t.call("POST", "/v1/models/pulls", { model: "stories-local" });
    assert.equal(again.status, 409);
    assert.equal(again.json.error.code, "model_installed");
    assert.equal((await t.call("GET", "/v1/models/catalog")).json.data.find((m: any) => m.id === "stories-local").installed, true);
  });

  it("fails a corrupt download on its hash, and resumes a dropped one", async () => {
    const corrupt = await waitForPull(t, (await t.call("POST", "/v1/models/pulls", { model: "stories-corrupt" })).json.id);
    assert.equal(corrupt.status, "failed");
    assert.equal(corrupt.error.code, "checksum_mismatch");
    assert.ok(!existsSync(path.join(dataDir, "models", "stories-corrupt.gguf")));

    files.dropNextAfter = 200_000;
    files.requests.length = 0;
    const dropped = await waitForPull(t, (await t.call("POST", "/v1/models/pulls", { model: "stories-resume" })).json.id);
    assert.equal(dropped.status, "failed", JSON.stringify(dropped));
    assert.equal(dropped.error.code, "download_failed");
    const resumed = await waitForPull(t, (await t.call("POST", "/v1/models/pulls", { model: "stories-resume" })).json.id);
    assert.equal(resumed.status, "done", JSON.stringify(resumed));
    const resumedFrom = Number(/^bytes=(\d+)-$/.exec(files.requests.at(-1)?.range ?? "")?.[1]);
    assert.ok(resumedFrom > 0 && resumedFrom <= 200_000, `the second pull asked only for the rest (${files.requests.at(-1)?.range})`);
    assert.equal(sha(readFileSync(path.join(dataDir, "models", "stories-resume.gguf"))), sha(stories));
  });

  it("cancels a pull that hangs, and refuses bad requests in the error shape", async () => {
    const started = (await t.call("POST", "/v1/models/pulls", { model: "stories-stalled" })).json;
    await new Promise((r) => setTimeout(r, 300));
    const cancelled = await t.call("DELETE", `/v1/models/pulls/${started.id}`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.json.status, "cancelled");
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/v1/models/pulls", { model: "no-such-model" }, 404, "model_not_found"],
      ["POST", "/v1/models/pulls", { model: "x", starter: true }, 400, "invalid_parameter"],
      ["POST", "/v1/models/pulls", {}, 400, "invalid_parameter"],
      ["GET", "/v1/models/pulls/pull_nope", undefined, 404, "pull_not_found"],
    ];
    for (const [method, route, body, status, code] of cases) {
      const res = await t.call(method, route, body);
      assert.equal(res.status, status, `${route} ${JSON.stringify(body)}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, code);
    }
    const denied = await t.call("POST", "/v1/models/pulls", { model: "stories-local" }, userKey);
    assert.equal(denied.status, 403, "pulling is for the administrator");
    assert.equal((await t.call("GET", "/v1/models/catalog", undefined, userKey)).status, 200, "the catalog is for everyone");
  });

  it("uses a GGUF file already on disk, after a restart too, and says what is wrong with bad paths", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-gguf-"));
    const file = path.join(dir, "My Model.gguf");
    copyFileSync(tinyModel("llama-2-tiny-random"), file);
    const added = await t.call("POST", "/v1/models/files", { path: file, id: "my-model" });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    assert.equal(added.json.id, "my-model");
    assert.equal(added.json.type, "chat");
    writeFileSync(path.join(dir, "notes.txt"), "x");
    writeFileSync(path.join(dir, "junk.gguf"), "not a model");
    const cases: [unknown, number, string][] = [
      [{ path: "relative/model.gguf" }, 400, "invalid_path"],
      [{ path: path.join(dir, "missing.gguf") }, 400, "invalid_model_file"],
      [{ path: path.join(dir, "notes.txt") }, 400, "unsupported_model_file"],
      [{ path: path.join(dir, "junk.gguf") }, 400, "invalid_model_file"],
      [{ path: tinyModel("stories260K"), id: "my-model" }, 400, "model_id_taken"],
      [{ path: file, id: "Bad Id" }, 400, "invalid_parameter"],
    ];
    for (const [body, status, code] of cases) {
      const res = await t.call("POST", "/v1/models/files", body);
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, code, JSON.stringify(body));
    }
    assert.equal((await t.call("POST", "/v1/models/files", { path: file }, userKey)).status, 403);

    await t.close();
    t = await startTestServer({ bindings: {}, dataDir, config: { catalogPath } });
    const models = (await t.call("GET", "/v1/models")).json.data.map((m: any) => m.id);
    assert.ok(models.includes("my-model"), "a registered file is bound again at start");
    rmSync(file);
    await t.close();
    t = await startTestServer({ bindings: {}, dataDir, config: { catalogPath } });
    assert.ok(!(await t.call("GET", "/v1/models")).json.data.some((m: any) => m.id === "my-model"), "a vanished file is skipped, not fatal");
    rmSync(dir, { recursive: true, force: true });
  });
});
