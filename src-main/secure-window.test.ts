import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import type { BrowserWindowConstructorOptions } from "electron";
import { silentLog } from "./log.js";
import { createWindow, hardenedWebPreferences, windowOptions } from "./secure-window.js";
import type { Clock } from "./clock.js";

const PRELOAD = "/opt/Pustaka/resources/app.asar/dist/src-main/preload.cjs";
const clock: Clock = { now: () => 0, setTimeout: () => 0, clearTimeout: () => {} };

describe("window options", () => {
  const options = windowOptions({ preload: PRELOAD, state: { x: 10, y: 20, width: 1200, height: 800, maximized: false }, devTools: false });
  const prefs = options.webPreferences!;

  it("isolates the page: context isolation, sandbox, no Node anywhere, web security on", () => {
    assert.equal(prefs.contextIsolation, true);
    assert.equal(prefs.sandbox, true);
    assert.equal(prefs.nodeIntegration, false);
    assert.equal(prefs.nodeIntegrationInWorker, false);
    assert.equal(prefs.nodeIntegrationInSubFrames, false);
    assert.equal(prefs.webSecurity, true);
    assert.equal(prefs.allowRunningInsecureContent, false);
    assert.equal(prefs.webviewTag, false);
    assert.equal(prefs.navigateOnDragDrop, false);
    assert.equal(prefs.experimentalFeatures, false);
  });

  it("loads the bundled preload and honours the devTools switch", () => {
    assert.equal(prefs.preload, PRELOAD);
    assert.equal(prefs.devTools, false);
    assert.equal(windowOptions({ preload: PRELOAD, state: { width: 900, height: 600, maximized: false }, devTools: true }).webPreferences!.devTools, true);
  });

  it("refuses a relative or non-bundled preload", () => {
    assert.throws(() => windowOptions({ preload: "dist/src-main/preload.cjs", state: { width: 900, height: 600, maximized: false }, devTools: false }), /absolute/);
    assert.throws(() => windowOptions({ preload: "/app/src-main/preload.ts", state: { width: 900, height: 600, maximized: false }, devTools: false }), /\.cjs/);
  });

  it("uses the restored bounds, a minimum size, and stays hidden until painted", () => {
    assert.deepEqual([options.x, options.y, options.width, options.height], [10, 20, 1200, 800]);
    assert.equal(options.show, false);
    assert.ok(options.minWidth! >= 800 && options.minHeight! >= 560);
    const centred = windowOptions({ preload: PRELOAD, state: { width: 900, height: 600, maximized: false }, devTools: false });
    assert.ok(!("x" in centred) && !("y" in centred), "no position: the system centres it");
  });

  it("pop-ups get the same protections, without the preload", () => {
    const popup = hardenedWebPreferences();
    assert.equal(popup.preload, undefined);
    assert.deepEqual({ ...prefs, preload: undefined, devTools: undefined }, { ...popup, preload: undefined, devTools: undefined });
  });
});

describe("createWindow", () => {
  class FakeWindow extends EventEmitter {
    loaded: string[] = [];
    maximized = false;
    shown = false;
    constructor(readonly options: BrowserWindowConstructorOptions) {
      super();
    }
    maximize = () => void (this.maximized = true);
    show = () => void (this.shown = true);
    isMaximized = () => this.maximized;
    getNormalBounds = () => ({ x: 0, y: 0, width: 1000, height: 700 });
    loadURL = (url: string) => (this.loaded.push(url), url.includes("fail") ? Promise.reject(new Error("ERR_ABORTED")) : Promise.resolve());
  }

  it("creates the window with the secure options, restores maximized, shows when ready, loads the first page", async () => {
    const saved: unknown[] = [];
    const win = createWindow({
      create: (options) => new FakeWindow(options),
      spec: { preload: PRELOAD, state: { width: 1000, height: 700, maximized: true }, devTools: false },
      initialUrl: "data:text/html,starting",
      saveState: (s) => saved.push(s),
      clock,
      log: silentLog,
    });
    assert.equal(win.options.webPreferences!.sandbox, true);
    assert.equal(win.maximized, true);
    assert.equal(win.shown, false);
    win.emit("ready-to-show");
    assert.equal(win.shown, true);
    assert.deepEqual(win.loaded, ["data:text/html,starting"]);
    win.emit("close");
    assert.equal(saved.length, 1, "the state is tracked");
  });

  it("a failed first load is logged, not an unhandled rejection", async () => {
    const warnings: string[] = [];
    createWindow({
      create: (options) => new FakeWindow(options),
      spec: { preload: PRELOAD, state: { width: 1000, height: 700, maximized: false }, devTools: false },
      initialUrl: "http://127.0.0.1:1/fail",
      saveState: () => {},
      clock,
      log: { ...silentLog, warn: (m) => void warnings.push(m) },
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings.length, 1);
  });
});
