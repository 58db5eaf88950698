/**
 * The utility process's core in plain Node: a fake parent port, a real server on a temp
 * data dir with the tiny model. Ready → HTTP works with the key from the first message →
 * stop closes the port and exits.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { REPO_ROOT, tinyModel } from "../test/helpers/models.js";
import { choosePort, runServerProcess } from "./run-server-process.js";
import type { ChildMessage, ServerSettings } from "./server-protocol.js";

class FakePort extends EventEmitter {
  readonly posted: ChildMessage[] = [];
  postMessage(message: ChildMessage): void {
    this.posted.push(message);
    this.emit("posted", message);
  }
  send(data: unknown): void {
    this.emit("message", { data });
  }
  /** Resolves with the next posted message of `type`. */
  async next<T extends ChildMessage["type"]>(type: T): Promise<Extract<ChildMessage, { type: T }>> {
    const seen = this.posted.find((m) => m.type === type);
    if (seen) return seen as Extract<ChildMessage, { type: T }>;
    for (;;) {
      const [message] = (await once(this, "posted")) as [ChildMessage];
      if (message.type === type) return message as Extract<ChildMessage, { type: T }>;
    }
  }
}

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function settingsFor(overrides: Partial<ServerSettings> = {}): ServerSettings {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-desktop-server-"));
  dirs.push(dir);
  return {
    dataDir: path.join(dir, "data"),
    modelsDir: path.join(dir, "models"),
    apiKey: `psk-${randomBytes(24).toString("base64url").replace(/[-_]/g, "x")}`,
    logFile: path.join(dir, "logs", "server.log"),
    rendererDir: null,
    catalogPath: path.join(REPO_ROOT, "models", "catalog.json"),
    version: "9.9.9-desktop",
    port: 0,
    config: { engine: { threads: 1, gpu: "cpu" }, chat: { contextSize: 256, sequences: 1 }, models: { bindings: { tiny: tinyModel("stories260K") } } },
    ...overrides,
  };
}

describe("runServerProcess", () => {
  it("starts from the first message, serves HTTP with that key, reports engine changes, and closes on stop", async () => {
    const port = new FakePort();
    const exits: number[] = [];
    runServerProcess(port, { exit: (code) => exits.push(code), statusIntervalMs: 50 });
    const settings = settingsFor();
    port.send({ type: "start", settings });
    const ready = await port.next("ready");
    assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(ready.engine.loadedModels.length, 0);

    const health = (await (await fetch(`${ready.url}/healthz`)).json()) as { version: string };
    assert.equal(health.version, "9.9.9-desktop");
    assert.equal((await fetch(`${ready.url}/v1/models`)).status, 401, "no key, no models");
    const auth = { authorization: `Bearer ${settings.apiKey}`, "content-type": "application/json" };
    const models = (await (await fetch(`${ready.url}/v1/models`, { headers: auth })).json()) as { data: { id: string }[] };
    assert.ok(models.data.some((m) => m.id === "tiny"));

    const chat = await fetch(`${ready.url}/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 4, temperature: 0 }),
    });
    assert.equal(chat.status, 200);
    // The first change may be llama.cpp starting (the GPU decided) before the model is in.
    const withModel = () => port.posted.find((m): m is Extract<ChildMessage, { type: "engine" }> => m.type === "engine" && m.engine.loadedModels.length > 0);
    while (!withModel()) await once(port, "posted");
    const engine = withModel()!;
    assert.notEqual(engine.engine.gpu, null, "once a model ran, the GPU question is decided");
    assert.deepEqual(
      engine.engine.loadedModels.map((m) => m.id),
      ["tiny"],
      "the loaded model is reported",
    );

    port.send({ type: "start", settings: settingsFor() });
    port.send({ type: "stop" });
    await port.next("stopped");
    assert.deepEqual(exits, [0]);
    await assert.rejects(fetch(`${ready.url}/healthz`), "the port is closed");
    assert.equal(port.posted.filter((m) => m.type === "ready").length, 1, "a second start message is ignored");

    const log = readFileSync(settings.logFile, "utf8");
    assert.match(log, /"msg":"listening"/);
    assert.ok(!log.includes(settings.apiKey), "the key never reaches the log");
  });

  it("reuses the preferred port when free and takes another when it is taken", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    assert.equal(await choosePort("127.0.0.1", taken), 0);
    blocker.close();
    await once(blocker, "close");
    assert.equal(await choosePort("127.0.0.1", taken), taken);
    assert.equal(await choosePort("127.0.0.1", 0), 0);
  });

  it("reports a bad configuration as a fatal error and exits with 1", async () => {
    const port = new FakePort();
    const exits: number[] = [];
    runServerProcess(port, { exit: (code) => exits.push(code) });
    const settings = settingsFor({ config: { models: { bindings: { broken: "/nonexistent/model.gguf" } } } });
    port.send({ type: "start", settings });
    const error = await port.next("error");
    assert.equal(error.fatal, true);
    assert.match(error.message, /nonexistent\/model\.gguf/);
    await port.next("stopped");
    assert.deepEqual(exits, [1]);
  });

  it("ignores messages that are not the protocol (settings are validated)", async () => {
    const port = new FakePort();
    const exits: number[] = [];
    runServerProcess(port, { exit: (code) => exits.push(code) });
    port.send({ type: "start", settings: { ...settingsFor(), dataDir: "relative/dir" } });
    port.send({ type: "start", settings: { ...settingsFor(), extra: true } });
    port.send("stop");
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(port.posted, []);
    assert.deepEqual(exits, []);
  });
});
