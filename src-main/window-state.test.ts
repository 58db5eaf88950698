import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { Clock } from "./clock.js";
import { clampToDisplays, DEFAULT_WINDOW_STATE, loadWindowState, saveWindowState, trackWindowState, type Rect, type WindowState } from "./window-state.js";

const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-window-"));
after(() => rmSync(root, { recursive: true, force: true }));

const PRIMARY: Rect = { x: 0, y: 0, width: 1920, height: 1040 };
const RIGHT: Rect = { x: 1920, y: 0, width: 2560, height: 1400 };

describe("window state persistence", () => {
  it("round-trips through the file", () => {
    const file = path.join(root, "a.json");
    const state: WindowState = { x: 100, y: 80, width: 1400, height: 900, maximized: true };
    saveWindowState(file, state);
    assert.deepEqual(loadWindowState(file), state);
  });

  it("falls back to the default for a missing, corrupt or invalid file", () => {
    assert.deepEqual(loadWindowState(path.join(root, "missing.json")), DEFAULT_WINDOW_STATE);
    const file = path.join(root, "b.json");
    writeFileSync(file, "{");
    assert.deepEqual(loadWindowState(file), DEFAULT_WINDOW_STATE);
    writeFileSync(file, JSON.stringify({ x: 1, y: 2, width: -5, height: 900, maximized: false }));
    assert.deepEqual(loadWindowState(file), DEFAULT_WINDOW_STATE);
    writeFileSync(file, JSON.stringify({ x: 10, width: 1000, height: 700, maximized: false }));
    assert.deepEqual(loadWindowState(file), { width: 1000, height: 700, maximized: false }, "half a position is no position");
  });
});

describe("clampToDisplays", () => {
  it("keeps a window that is fully visible as it was", () => {
    const state = { x: 200, y: 100, width: 1200, height: 800, maximized: false };
    assert.deepEqual(clampToDisplays(state, [PRIMARY], PRIMARY), state);
  });

  it("centres a window left on a monitor that is no longer connected", () => {
    const state = { x: 2500, y: 200, width: 1600, height: 1000, maximized: true };
    assert.deepEqual(clampToDisplays(state, [PRIMARY], PRIMARY), { width: 1600, height: 1000, maximized: true });
  });

  it("keeps it on the second monitor while that is connected", () => {
    const state = { x: 2500, y: 200, width: 1600, height: 1000, maximized: false };
    assert.deepEqual(clampToDisplays(state, [PRIMARY, RIGHT], PRIMARY), state);
  });

  it("pulls a window hanging off the edge fully back inside the display", () => {
    const state = { x: 1500, y: -300, width: 1000, height: 800, maximized: false };
    assert.deepEqual(clampToDisplays(state, [PRIMARY], PRIMARY), { x: 920, y: 0, width: 1000, height: 800, maximized: false });
  });

  it("centres a window with only a sliver visible", () => {
    const state = { x: 1870, y: 100, width: 1000, height: 800, maximized: false };
    assert.deepEqual(clampToDisplays(state, [PRIMARY], PRIMARY), { width: 1000, height: 800, maximized: false });
  });

  it("shrinks a window larger than the display and raises one below the minimum size", () => {
    const small: Rect = { x: 0, y: 0, width: 1366, height: 728 };
    assert.deepEqual(clampToDisplays({ x: 0, y: 0, width: 3000, height: 2000, maximized: false }, [small], small), { x: 0, y: 0, width: 1366, height: 728, maximized: false });
    assert.deepEqual(clampToDisplays({ width: 300, height: 200, maximized: false }, [PRIMARY], PRIMARY), { width: 800, height: 560, maximized: false });
  });
});

describe("trackWindowState", () => {
  class FakeWindow extends EventEmitter {
    bounds: Rect = { x: 10, y: 20, width: 1000, height: 700 };
    maximized = false;
    getNormalBounds = () => this.bounds;
    isMaximized = () => this.maximized;
  }
  function fakeClock() {
    const timers = new Map<number, () => void>();
    let id = 0;
    const clock: Clock = {
      now: () => 0,
      setTimeout: (fn) => (timers.set(++id, fn), id),
      clearTimeout: (h) => void timers.delete(h as number),
    };
    return { clock, fire: () => [...timers.values()].forEach((fn) => fn()), pending: () => timers.size };
  }

  it("saves once after a burst of moves, with the normal bounds and the maximized flag", () => {
    const win = new FakeWindow();
    const saved: WindowState[] = [];
    const { clock, fire, pending } = fakeClock();
    trackWindowState(win, (s) => saved.push(s), clock);
    win.emit("move");
    win.bounds = { x: 50, y: 60, width: 1000, height: 700 };
    win.emit("move");
    win.maximized = true;
    win.emit("maximize");
    assert.equal(pending(), 1, "debounced");
    assert.equal(saved.length, 0);
    fire();
    assert.deepEqual(saved, [{ x: 50, y: 60, width: 1000, height: 700, maximized: true }]);
  });

  it("saves at once when the window closes", () => {
    const win = new FakeWindow();
    const saved: WindowState[] = [];
    const { clock, pending } = fakeClock();
    trackWindowState(win, (s) => saved.push(s), clock);
    win.emit("resize");
    win.emit("close");
    assert.equal(saved.length, 1);
    assert.equal(pending(), 0, "the pending save was folded into the close");
  });
});
