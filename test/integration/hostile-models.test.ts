/**
 * Model files as an attacker (or a bad disk) would offer them to `POST /v1/models/files`:
 * headers whose counts would hang or abort a trusting reader, files that are not whole
 * models, paths that are links, pipes or folders. Each is refused at once, in one shape
 * that tells nothing about the machine's files; a file that breaks after registration is
 * dropped, not served as a 500; and host paths are shown to administrators only.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { GGUF_TYPE, header, kvArrayHead, u32 } from "../helpers/gguf-builder.js";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const bindings = { stories: tinyModel("stories260K") };

describe("hostile model files", () => {
  let t: TestServer;
  let dataDir: string;
  let dir: string;
  let userKey: string;
  const restart = async () => {
    await t.close();
    t = await startTestServer({ bindings, dataDir });
  };
  const modelIds = async (): Promise<string[]> => (await t.call("GET", "/v1/models")).json.data.map((m: any) => m.id);
  const register = (body: Record<string, unknown>) => t.call("POST", "/v1/models/files", body);
  const assertUnusable = (res: { status: number; json: any }, what: string) => {
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.json)}`);
    assert.equal(res.json.error.type, "invalid_request_error", what);
    assert.equal(res.json.error.code, "invalid_model_file", what);
    assert.equal(res.json.error.param, "path", what);
  };

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-hostile-models-"));
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-hostile-files-"));
    t = await startTestServer({ bindings, dataDir });
    userKey = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "analyst" })).json.secret;
  });
  after(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a header claiming a 2^40-element array at once, and keeps serving", async () => {
    const file = path.join(dir, "bomb.gguf");
    writeFileSync(file, Buffer.concat([header(3, 0, 1), kvArrayHead("a", GGUF_TYPE.uint8, 2n ** 40n)]));
    const started = Date.now();
    assertUnusable(await register({ path: file }), "2^40-element array");
    assert.ok(Date.now() - started < 10_000, `refusing took ${Date.now() - started} ms`);
    assert.equal((await t.call("GET", "/healthz", undefined, null)).status, 200, "the server lives on");
    const chat = await t.call("POST", "/v1/chat/completions", { model: "stories", messages: [{ role: "user", content: "Once" }], max_tokens: 2 });
    assert.equal(chat.status, 200, JSON.stringify(chat.json));
  });

  it("refuses files that are not whole models, and keeps none of them across a restart", async () => {
    const truncated = readFileSync(tinyModel("stories260K"));
    const files: Record<string, Buffer> = {
      "bare-header.gguf": Buffer.concat([Buffer.from("GGUF"), u32(3)]),
      "version-99.gguf": header(99, 0, 0),
      "empty-model.gguf": header(3, 0, 0),
      "truncated.gguf": truncated.subarray(0, truncated.length - 4096),
    };
    for (const [name, bytes] of Object.entries(files)) {
      writeFileSync(path.join(dir, name), bytes);
      assertUnusable(await register({ path: path.join(dir, name), id: name.replace(".gguf", "") }), name);
    }
    await restart();
    const ids = await modelIds();
    for (const name of Object.keys(files)) assert.ok(!ids.includes(name.replace(".gguf", "")), `${name} is not served after a restart`);
  });

  it("answers the same for every path it cannot use, follows no link and echoes no byte", async () => {
    const secret = path.join(dir, "shadow");
    writeFileSync(secret, "root:$6$secrethash:19000:0:99999:7:::\n");
    writeFileSync(path.join(dir, "junk.gguf"), "root:$6$secrethash:19000:0:99999:7:::\n");
    symlinkSync(secret, path.join(dir, "secret-link.gguf"));
    symlinkSync(tinyModel("llama-2-tiny-random"), path.join(dir, "model-link.gguf"));
    symlinkSync(path.join(dir, "nowhere.gguf"), path.join(dir, "dangling-link.gguf"));
    mkdirSync(path.join(dir, "folder.gguf"));
    execFileSync("mkfifo", [path.join(dir, "pipe.gguf")]);
    const cases = ["missing.gguf", "junk.gguf", "secret-link.gguf", "model-link.gguf", "dangling-link.gguf", "folder.gguf", "pipe.gguf"];
    const messages = new Set<string>();
    for (const name of cases) {
      const res = await register({ path: path.join(dir, name) });
      assertUnusable(res, name);
      messages.add(res.json.error.message);
      assert.doesNotMatch(res.json.error.message, /root|secret|\$6\$|GGUF" but got|no file at|exist|not found|ENOENT|ELOOP/i, name);
      assert.ok(!res.json.error.message.includes(dir), `${name}: the message does not repeat the path`);
    }
    assert.equal(messages.size, 1, `one message for every case: ${[...messages].join(" | ")}`);
    const ids = await modelIds();
    assert.ok(!ids.some((id) => id.includes("link")), "no link was registered");
  });

  it("drops a registered file that broke while the server was down: 404 on use, not a 500", async () => {
    const file = path.join(dir, "fragile.gguf");
    copyFileSync(tinyModel("stories260K"), file);
    const added = await register({ path: file, id: "fragile" });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    await t.close();
    writeFileSync(file, Buffer.concat([Buffer.from("GGUF"), u32(3)]));
    t = await startTestServer({ bindings, dataDir });
    assert.ok(!(await modelIds()).includes("fragile"), "the broken file is not listed");
    const chat = await t.call("POST", "/v1/chat/completions", { model: "fragile", messages: [{ role: "user", content: "Once" }], max_tokens: 2 });
    assert.equal(chat.status, 404, JSON.stringify(chat.json));
    assert.equal(chat.json.error.code, "model_not_found");
  });

  it("shows where model files lie to administrators only", async () => {
    const file = path.join(dir, "placed.gguf");
    copyFileSync(tinyModel("llama-2-tiny-random"), file);
    assert.equal((await register({ path: file, id: "placed" })).status, 201);
    const asUser = (await t.call("GET", "/v1/models", undefined, userKey)).json.data as any[];
    assert.ok(asUser.length >= 2);
    for (const model of asUser) {
      assert.ok(!model.backing.file.includes("/") && !model.backing.file.includes("\\"), `${model.id}: ${model.backing.file}`);
    }
    assert.equal(asUser.find((m) => m.id === "placed").backing.file, "placed.gguf");
    assert.equal(asUser.find((m) => m.id === "stories").backing.file, "stories260K.gguf");
    const one = await t.call("GET", "/v1/models/placed", undefined, userKey);
    assert.equal(one.status, 200);
    assert.equal(one.json.backing.file, "placed.gguf");
    const asAdmin = (await t.call("GET", "/v1/models")).json.data as any[];
    assert.equal(asAdmin.find((m) => m.id === "placed").backing.file, file);
    assert.equal((await t.call("GET", "/v1/models/stories")).json.backing.file, tinyModel("stories260K"));
  });
});
