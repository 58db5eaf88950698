import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { DEFAULT_SETTINGS, SettingsStore } from "./settings.js";

const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-settings-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const file = () => path.join(root, `case-${++n}`, "settings.json");

describe("SettingsStore", () => {
  it("starts from the defaults when there is no file", () => {
    assert.deepEqual(new SettingsStore(file()).get(), DEFAULT_SETTINGS);
  });

  it("persists a change: a new store reads it back", () => {
    const f = file();
    new SettingsStore(f).update({ modelsDir: "/srv/models", serverPort: 7781 });
    assert.deepEqual(new SettingsStore(f).get(), { modelsDir: "/srv/models", serverPort: 7781 });
    assert.deepEqual(JSON.parse(readFileSync(f, "utf8")), { modelsDir: "/srv/models", serverPort: 7781 });
  });

  it("refuses invalid values and keeps the previous settings", () => {
    const f = file();
    const store = new SettingsStore(f);
    store.update({ modelsDir: "/srv/models" });
    assert.throws(() => store.update({ modelsDir: "relative/models" }), /absolute path/);
    assert.throws(() => store.update({ serverPort: 80 }));
    assert.deepEqual(new SettingsStore(f).get(), { modelsDir: "/srv/models", serverPort: null });
  });

  it("loads leniently: a corrupt file gives the defaults, a bad field only that field's default", () => {
    const warnings: string[] = [];
    const log = { info() {}, error() {}, warn: (m: string) => void warnings.push(m) };
    const corrupt = file();
    new SettingsStore(corrupt).update({ serverPort: 9000 });
    writeFileSync(corrupt, "{ not json");
    assert.deepEqual(new SettingsStore(corrupt, log).get(), DEFAULT_SETTINGS);
    assert.equal(warnings.length, 1);

    const partly = file();
    new SettingsStore(partly).update({ serverPort: 9000 });
    writeFileSync(partly, JSON.stringify({ modelsDir: "../escape", serverPort: 9000, future: true }));
    assert.deepEqual(new SettingsStore(partly).get(), { modelsDir: null, serverPort: 9000 });
  });
});
