import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MenuItemConstructorOptions } from "electron";
import { aboutDetail, buildMenuTemplate, type MenuActions } from "./menu-template.js";

function build(platform: NodeJS.Platform, isPackaged: boolean) {
  const calls: string[] = [];
  const actions: MenuActions = {
    openDocuments: () => void calls.push("openDocuments"),
    openSettings: () => void calls.push("openSettings"),
    openLogsFolder: () => void calls.push("openLogsFolder"),
    showAbout: () => void calls.push("showAbout"),
  };
  return { template: buildMenuTemplate({ platform, isPackaged, appName: "Pustaka", actions }), calls };
}

const items = (menu: MenuItemConstructorOptions | undefined) => (menu?.submenu as MenuItemConstructorOptions[]).filter((i) => i.type !== "separator");
const names = (menu: MenuItemConstructorOptions | undefined) => items(menu).map((i) => i.label ?? i.role);
const top = (template: MenuItemConstructorOptions[], name: string) => template.find((m) => (m.label ?? m.role) === name);
const click = (item: MenuItemConstructorOptions | undefined) => (item!.click as () => void)();

describe("application menu", () => {
  it("Linux and Windows: File, Edit, View, Window, Help with the required items", () => {
    for (const platform of ["linux", "win32"] as const) {
      const { template } = build(platform, true);
      assert.deepEqual(template.map((m) => m.label ?? m.role), ["File", "Edit", "View", "Window", "help"]);
      assert.deepEqual(names(top(template, "File")), ["Open documents…", "Settings…", "quit"]);
      assert.deepEqual(names(top(template, "help")), ["Open logs folder", "About Pustaka"]);
      assert.deepEqual(names(top(template, "Edit")), ["undo", "redo", "cut", "copy", "paste", "pasteAndMatchStyle", "delete", "selectAll"]);
    }
  });

  it("View has reload and zoom; DevTools only in development builds", () => {
    const packaged = names(top(build("linux", true).template, "View"));
    assert.deepEqual(packaged, ["reload", "forceReload", "resetZoom", "zoomIn", "zoomOut", "togglefullscreen"]);
    const dev = names(top(build("linux", false).template, "View"));
    assert.ok(dev.includes("toggleDevTools"));
    for (const platform of ["linux", "darwin", "win32"] as const)
      assert.ok(!JSON.stringify(build(platform, true).template).includes("DevTools"), `no DevTools item when packaged on ${platform}`);
  });

  it("macOS: About, Settings… and Quit in the app menu", () => {
    const { template } = build("darwin", true);
    assert.equal(template[0]!.label, "Pustaka");
    assert.deepEqual(names(template[0]), ["About Pustaka", "Settings…", "services", "hide", "hideOthers", "unhide", "quit"]);
    assert.deepEqual(names(top(template, "File")), ["Open documents…", "close"]);
    assert.deepEqual(names(top(template, "help")), ["Open logs folder"]);
  });

  it("the items call their actions, with the usual shortcuts", () => {
    const { template, calls } = build("linux", true);
    const file = items(top(template, "File"));
    assert.equal(file[0]!.accelerator, "CmdOrCtrl+O");
    assert.equal(file[1]!.accelerator, "CmdOrCtrl+,");
    click(file[0]);
    click(file[1]);
    const help = items(top(template, "help"));
    click(help[0]);
    click(help[1]);
    assert.deepEqual(calls, ["openDocuments", "openSettings", "openLogsFolder", "showAbout"]);
  });
});

describe("aboutDetail", () => {
  const versions = { electron: "41.7.1", chrome: "146.0", node: "24.1.0" };
  it("reports the GPU in use, the threads, the loaded models and the API", () => {
    const text = aboutDetail({ engine: { backend: "llama.cpp", gpu: "cuda", threads: 8, loadedModels: [{ id: "sea-lion", kinds: ["chat"], activeLeases: 0 }] }, url: "http://127.0.0.1:7780" }, versions);
    assert.match(text, /llama\.cpp on GPU \(cuda\), 8 threads; loaded: sea-lion/);
    assert.match(text, /API: http:\/\/127\.0\.0\.1:7780\/v1/);
    assert.match(text, /Electron 41\.7\.1 · Chromium 146\.0 · Node\.js 24\.1\.0/);
  });

  it("says CPU when no GPU is used, and when the server is down", () => {
    assert.match(aboutDetail({ engine: { backend: "llama.cpp", gpu: false, threads: 2, loadedModels: [] }, url: null }, versions), /on CPU, 2 threads$/m);
    assert.match(aboutDetail({ engine: { backend: "llama.cpp", gpu: null, threads: 0, loadedModels: [] }, url: null }, versions), /decided when a model first loads\), threads: the physical cores$/m);
    assert.match(aboutDetail({ engine: null, url: null }, {}), /not running/);
  });
});
