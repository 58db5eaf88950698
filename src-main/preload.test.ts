/**
 * The bundled preload, run in a VM context with a fake `electron`: one self-contained
 * CommonJS file, the bridge exposed only to the workbench, and nothing of IPC leaking
 * to the page.
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { before, describe, it } from "node:test";
import vm from "node:vm";
import { build } from "esbuild";
import { preloadBuildOptions } from "../scripts/build-preload.js";
import type { PustakaBridge, ServerState } from "./bridge.js";
import { IPC, type BootstrapInfo } from "./ipc-channels.js";

let bundle = "";
before(async () => {
  const result = await build({ ...preloadBuildOptions("/virtual/preload.cjs"), write: false });
  bundle = result.outputFiles[0]!.text;
});

class FakeIpcRenderer extends EventEmitter {
  invoked: [string, unknown[]][] = [];
  constructor(
    private readonly info: BootstrapInfo | null,
    private readonly state: ServerState = { state: "starting", restarts: 0 },
  ) {
    super();
  }
  sendSync(channel: string): unknown {
    assert.equal(channel, IPC.bootstrap);
    return this.info;
  }
  invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    this.invoked.push([channel, args]);
    if (channel === IPC.getServerState) return Promise.resolve(this.state);
    if (channel === IPC.openFileDialog) return Promise.resolve(["/home/u/a.pdf"]);
    return Promise.resolve("main's return value");
  }
}

function runPreload(info: BootstrapInfo | null, state?: ServerState) {
  const ipcRenderer = new FakeIpcRenderer(info, state);
  const exposed = new Map<string, unknown>();
  const required: string[] = [];
  const fakeRequire = (name: string) => {
    required.push(name);
    if (name !== "electron") throw new Error(`a sandboxed preload cannot require ${name}`);
    return { ipcRenderer, contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) } };
  };
  vm.runInNewContext(bundle, { require: fakeRequire, module: { exports: {} }, exports: {} });
  return { ipcRenderer, exposed, required, bridge: exposed.get("pustaka") as PustakaBridge | undefined };
}

const INFO: BootstrapInfo = { baseUrl: "http://127.0.0.1:7780", credential: "psk-abc", version: "0.1.0" };
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the preload bundle", () => {
  it("is one CommonJS file that requires nothing but electron", () => {
    const { required } = runPreload(INFO);
    assert.deepEqual(required, ["electron"]);
    assert.ok(!/\bimport\s/.test(bundle) && !bundle.includes("import("), "no ESM left");
  });

  it("exposes exactly the bridge, as window.pustaka, with the bootstrap values", () => {
    const { exposed, bridge } = runPreload(INFO);
    assert.deepEqual([...exposed.keys()], ["pustaka"]);
    assert.deepEqual(Object.keys(bridge!).sort(), ["baseUrl", "credential", "onMenuCommand", "onServerState", "openFileDialog", "restartServer", "revealInFolder", "version"]);
    assert.deepEqual([bridge!.baseUrl, bridge!.credential, bridge!.version], [INFO.baseUrl, INFO.credential, INFO.version]);
  });

  it("exposes nothing on a page the main process does not vouch for", () => {
    const { exposed } = runPreload(null);
    assert.equal(exposed.size, 0);
  });

  it("maps each call to its channel, copying only the fields it needs, and returns no main-process values it should not", async () => {
    const { bridge, ipcRenderer } = runPreload(INFO);
    assert.deepEqual(await bridge!.openFileDialog({ kind: "documents", evil: "x" } as never), ["/home/u/a.pdf"]);
    assert.equal(await bridge!.revealInFolder("/data/x"), undefined);
    assert.equal(await bridge!.restartServer(), undefined);
    // The VM's objects have the VM's prototypes: compare their JSON.
    assert.deepEqual(JSON.parse(JSON.stringify(ipcRenderer.invoked)), [
      [IPC.openFileDialog, [{ kind: "documents" }]],
      [IPC.revealInFolder, ["/data/x"]],
      [IPC.restartServer, []],
    ]);
  });

  it("onServerState delivers the current state, then changes, payload only, until unsubscribed", async () => {
    const { bridge, ipcRenderer } = runPreload(INFO, { state: "starting", restarts: 0 });
    const seen: unknown[][] = [];
    const unsubscribe = bridge!.onServerState((...args: unknown[]) => seen.push(args));
    await tick();
    ipcRenderer.emit(IPC.serverState, { sender: "the IPC event must not reach the page" }, { state: "ready", restarts: 0 });
    unsubscribe();
    ipcRenderer.emit(IPC.serverState, {}, { state: "crashed", restarts: 1 });
    assert.deepEqual(seen, [[{ state: "starting", restarts: 0 }], [{ state: "ready", restarts: 0 }]]);
    assert.equal(ipcRenderer.listenerCount(IPC.serverState), 0);
  });

  it("a change that arrives before the initial answer wins over the stale answer", async () => {
    const { bridge, ipcRenderer } = runPreload(INFO, { state: "starting", restarts: 0 });
    const seen: ServerState[] = [];
    bridge!.onServerState((s) => seen.push(s));
    ipcRenderer.emit(IPC.serverState, {}, { state: "ready", restarts: 0 });
    await tick();
    assert.deepEqual(seen, [{ state: "ready", restarts: 0 }]);
  });

  it("onMenuCommand passes the command only, until unsubscribed", () => {
    const { bridge, ipcRenderer } = runPreload(INFO);
    const seen: unknown[][] = [];
    const unsubscribe = bridge!.onMenuCommand((...args: unknown[]) => seen.push(args));
    ipcRenderer.emit(IPC.menuCommand, { sender: {} }, "open-documents");
    unsubscribe();
    ipcRenderer.emit(IPC.menuCommand, {}, "open-documents");
    assert.deepEqual(seen, [["open-documents"]]);
  });
});
