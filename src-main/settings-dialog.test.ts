import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { OpenDialogOptions } from "electron";
import { fileDialogOptions, pickFiles, type DialogLike } from "./file-dialog.js";
import { showSettingsDialog } from "./settings-dialog.js";
import { SettingsStore } from "./settings.js";

const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-settings-dialog-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function setup(response: number, picked: string[] | null, modelsDir: string | null = null) {
  const dir = path.join(root, `case-${++n}`);
  const settings = new SettingsStore(path.join(dir, "settings.json"));
  if (modelsDir) settings.update({ modelsDir });
  const calls = { restarts: 0, opened: [] as string[], buttons: [] as string[], openDialogs: [] as OpenDialogOptions[] };
  const dialog: DialogLike = {
    showMessageBox: (options) => ((calls.buttons = options.buttons ?? []), Promise.resolve({ response })),
    showOpenDialog: (options) => (calls.openDialogs.push(options), Promise.resolve(picked ? { canceled: false, filePaths: picked } : { canceled: true, filePaths: [] })),
  };
  const deps = {
    dialog,
    settings,
    defaultModelsDir: path.join(dir, "data", "models"),
    restartServer: () => (calls.restarts++, Promise.resolve()),
    openFolder: (p: string) => (calls.opened.push(p), Promise.resolve("")),
  };
  return { deps, calls, settings, dir };
}

describe("Settings… (models folder)", () => {
  it("changing the folder saves it and restarts the server", async () => {
    const { deps, calls, settings } = setup(0, ["/srv/models"]);
    assert.equal(await showSettingsDialog(deps), "changed");
    assert.equal(settings.get().modelsDir, "/srv/models");
    assert.equal(calls.restarts, 1);
    assert.deepEqual(calls.openDialogs[0]!.properties, ["openDirectory", "createDirectory"]);
  });

  it("cancelling the folder picker, or picking the same folder, changes nothing", async () => {
    for (const picked of [null, ["/srv/models"]]) {
      const { deps, calls, settings } = setup(0, picked, "/srv/models");
      assert.equal(await showSettingsDialog(deps), "unchanged");
      assert.equal(settings.get().modelsDir, "/srv/models");
      assert.equal(calls.restarts, 0);
    }
  });

  it("offers the default folder only when another one is chosen, and going back restarts", async () => {
    const plain = setup(2, null);
    await showSettingsDialog(plain.deps);
    assert.ok(!plain.calls.buttons.includes("Use the default folder"));
    const custom = setup(3, null, "/srv/models");
    assert.equal(await showSettingsDialog(custom.deps), "reset");
    assert.ok(custom.calls.buttons.includes("Use the default folder"));
    assert.equal(custom.settings.get().modelsDir, null);
    assert.equal(custom.calls.restarts, 1);
  });

  it("opens the models folder, creating it first", async () => {
    const { deps, calls, dir } = setup(1, null);
    assert.equal(await showSettingsDialog(deps), "opened");
    assert.deepEqual(calls.opened, [path.join(dir, "data", "models")]);
    assert.ok(existsSync(path.join(dir, "data", "models")));
    assert.equal(calls.restarts, 0);
  });
});

describe("file dialogs", () => {
  it("documents: several files of the formats the server indexes; models: one .gguf", () => {
    const docs = fileDialogOptions("documents");
    assert.deepEqual(docs.properties, ["openFile", "multiSelections"]);
    assert.ok(["pdf", "docx", "md", "txt", "html"].every((e) => docs.filters![0]!.extensions.includes(e)));
    const model = fileDialogOptions("model");
    assert.deepEqual(model.properties, ["openFile"]);
    assert.deepEqual(model.filters, [{ name: "GGUF models", extensions: ["gguf"] }]);
  });

  it("a cancelled dialog gives no paths", async () => {
    const dialog = (canceled: boolean): DialogLike => ({
      showMessageBox: () => Promise.resolve({ response: 0 }),
      showOpenDialog: () => Promise.resolve({ canceled, filePaths: canceled ? [] : ["/m/a.gguf"] }),
    });
    assert.deepEqual(await pickFiles(dialog(true), "model"), []);
    assert.deepEqual(await pickFiles(dialog(false), "model"), ["/m/a.gguf"]);
  });
});
