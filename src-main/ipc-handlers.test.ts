import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { FileDialogKind, ServerState } from "./bridge.js";
import { IPC, INVOKE_CHANNELS } from "./ipc-channels.js";
import { createIpcHandlers, registerIpcHandlers, type IpcDeps, type IpcEventLike } from "./ipc-handlers.js";

const APP = "http://127.0.0.1:7780";
const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-ipc-"));
after(() => rmSync(root, { recursive: true, force: true }));
const dataDir = path.join(root, "data");
const modelsDir = path.join(root, "models");
const outside = path.join(root, "elsewhere");
for (const dir of [dataDir, modelsDir, outside]) mkdirSync(dir);
writeFileSync(path.join(modelsDir, "tiny.gguf"), "");
writeFileSync(path.join(outside, "secret.txt"), "");
symlinkSync(outside, path.join(dataDir, "escape"));

const fromApp: IpcEventLike = { senderFrame: { url: `${APP}/corpora`, parent: null } };
const STATE: ServerState = { state: "ready", restarts: 0 };

function setup(dialogResult: string[] = []) {
  const calls = { dialogs: [] as FileDialogKind[], revealed: [] as string[], restarts: 0 };
  const deps: IpcDeps = {
    appOrigin: () => APP,
    bootstrap: () => ({ baseUrl: APP, credential: "psk-secret", version: "1.2.3" }),
    serverState: () => STATE,
    showOpenDialog: (kind) => (calls.dialogs.push(kind), Promise.resolve(dialogResult)),
    showItemInFolder: (p) => void calls.revealed.push(p),
    restartServer: () => (calls.restarts++, Promise.resolve()),
    revealRoots: () => [dataDir, modelsDir],
  };
  return { handlers: createIpcHandlers(deps), calls };
}

describe("the IPC surface", () => {
  it("is exactly these channels", () => {
    assert.deepEqual(Object.values(IPC).sort(), [
      "pustaka:bootstrap",
      "pustaka:get-server-state",
      "pustaka:menu-command",
      "pustaka:open-file-dialog",
      "pustaka:restart-server",
      "pustaka:reveal-in-folder",
      "pustaka:server-state",
    ]);
    const handled: string[] = [];
    const listened: string[] = [];
    const ipcMain = {
      handle: (channel: string) => void handled.push(channel),
      removeHandler: (channel: string) => void handled.splice(handled.indexOf(channel), 1),
      on: (channel: string) => void listened.push(channel),
      removeListener: (channel: string) => void listened.splice(listened.indexOf(channel), 1),
    };
    const dispose = registerIpcHandlers(ipcMain, setup().handlers);
    assert.deepEqual(handled.sort(), ["pustaka:get-server-state", "pustaka:open-file-dialog", "pustaka:restart-server", "pustaka:reveal-in-folder"]);
    assert.deepEqual(listened, ["pustaka:bootstrap"]);
    assert.deepEqual(Object.keys(setup().handlers.invoke).sort(), [...INVOKE_CHANNELS].sort());
    dispose();
    assert.deepEqual([handled, listened], [[], []]);
  });
});

describe("sender check", () => {
  const strangers: [string, IpcEventLike][] = [
    ["no frame (navigated away)", { senderFrame: null }],
    ["a sub-frame of the app", { senderFrame: { url: `${APP}/`, parent: {} } }],
    ["another port", { senderFrame: { url: "http://127.0.0.1:7781/", parent: null } }],
    ["another host", { senderFrame: { url: "https://example.org/", parent: null } }],
    ["https on the same host", { senderFrame: { url: "https://127.0.0.1:7780/", parent: null } }],
    ["a file: page", { senderFrame: { url: "file:///tmp/x.html", parent: null } }],
    ["the data: splash", { senderFrame: { url: "data:text/html,hi", parent: null } }],
  ];

  it("every invoke channel refuses anyone but the workbench's top frame", async () => {
    const { handlers, calls } = setup(["/tmp/a.pdf"]);
    const validArgs: Record<string, unknown[]> = {
      [IPC.getServerState]: [],
      [IPC.openFileDialog]: [{ kind: "documents" }],
      [IPC.revealInFolder]: [path.join(modelsDir, "tiny.gguf")],
      [IPC.restartServer]: [],
    };
    for (const channel of INVOKE_CHANNELS) {
      for (const [who, event] of strangers) await assert.rejects(handlers.invoke[channel](event, ...validArgs[channel]!), /not the Pustaka workbench/, `${channel} from ${who}`);
      await assert.doesNotReject(handlers.invoke[channel](fromApp, ...validArgs[channel]!), channel);
    }
    assert.deepEqual(calls, { dialogs: ["documents"], revealed: [path.join(modelsDir, "tiny.gguf")], restarts: 1 });
  });

  it("the bootstrap (credential) goes to the workbench only", () => {
    const { handlers } = setup();
    assert.deepEqual(handlers.bootstrap(fromApp), { baseUrl: APP, credential: "psk-secret", version: "1.2.3" });
    for (const [who, event] of strangers) assert.equal(handlers.bootstrap(event), null, who);
  });

  it("nothing is allowed before the app has an origin", async () => {
    const { handlers } = setup();
    const early = createIpcHandlers({ ...({} as IpcDeps), appOrigin: () => null, serverState: () => STATE });
    await assert.rejects(early.invoke[IPC.getServerState](fromApp), /not the Pustaka workbench/);
    assert.ok(handlers);
  });
});

describe("argument validation", () => {
  it("no-argument channels refuse arguments", async () => {
    const { handlers, calls } = setup();
    await assert.rejects(handlers.invoke[IPC.getServerState](fromApp, "extra"), /invalid arguments/);
    await assert.rejects(handlers.invoke[IPC.restartServer](fromApp, { force: true }), /invalid arguments/);
    assert.equal(calls.restarts, 0);
    assert.deepEqual(await handlers.invoke[IPC.getServerState](fromApp), STATE);
  });

  it("the open dialog takes exactly { kind: 'documents' | 'model' }", async () => {
    const { handlers, calls } = setup();
    for (const args of [[], ["documents"], [{ kind: "exe" }], [{ kind: "model", properties: ["openDirectory"] }], [{ kind: "model" }, "extra"], [null]])
      await assert.rejects(handlers.invoke[IPC.openFileDialog](fromApp, ...args), /invalid arguments/, JSON.stringify(args));
    assert.deepEqual(calls.dialogs, []);
    await handlers.invoke[IPC.openFileDialog](fromApp, { kind: "model" });
    assert.deepEqual(calls.dialogs, ["model"]);
  });

  it("reveals only paths handed out by a dialog or inside the data and models folders", async () => {
    const picked = path.join(outside, "report.pdf");
    const { handlers, calls } = setup([picked]);
    const reveal = (p: unknown) => handlers.invoke[IPC.revealInFolder](fromApp, p);
    await reveal(path.join(modelsDir, "tiny.gguf"));
    await reveal(path.join(dataDir, "blobs", "corp_1", "doc_1"));
    await assert.rejects(reveal(picked), /not given to the workbench/, "not yet handed out");
    await handlers.invoke[IPC.openFileDialog](fromApp, { kind: "documents" });
    await reveal(picked);
    for (const bad of [path.join(outside, "secret.txt"), "/etc/passwd", dataDir, path.join(dataDir, "escape", "secret.txt"), `${dataDir}-sibling/file`])
      await assert.rejects(reveal(bad), /not given to the workbench/, bad);
    for (const bad of ["relative/file.txt", `${dataDir}/../elsewhere/secret.txt`, `${modelsDir}//tiny.gguf`, `${modelsDir}/tiny.gguf\0.txt`, "", 42, ["/etc/passwd"], "x".repeat(5000)])
      await assert.rejects(reveal(bad), /invalid arguments/, String(bad));
    assert.deepEqual(calls.revealed, [path.join(modelsDir, "tiny.gguf"), path.join(dataDir, "blobs", "corp_1", "doc_1"), picked]);
  });
});
