/**
 * The main window: sandboxed, context-isolated, no Node in the page, one preload (the
 * bridge), its size and position restored and remembered.
 */
import path from "node:path";
import type { BrowserWindowConstructorOptions, WebPreferences } from "electron";
import type { Clock } from "./clock.js";
import type { Log } from "./log.js";
import { MIN_WINDOW_SIZE, trackWindowState, type TrackedWindow, type WindowState } from "./window-state.js";

/** Web preferences every window of the app gets (pop-ups too, without the preload). */
export function hardenedWebPreferences(): WebPreferences {
  return {
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    experimentalFeatures: false,
    safeDialogs: true,
    spellcheck: true,
  };
}

export interface WindowSpec {
  /** Absolute path of the bundled preload (`preload.cjs`). */
  preload: string;
  /** Restored size and position, already clamped to the displays. */
  state: WindowState;
  /** Window icon (Linux and Windows; macOS uses the bundle's). */
  icon?: string;
  /** DevTools only in development builds. */
  devTools: boolean;
}

export function windowOptions(spec: WindowSpec): BrowserWindowConstructorOptions {
  if (!path.isAbsolute(spec.preload) || !spec.preload.endsWith(".cjs")) throw new Error(`the preload must be an absolute path to a .cjs bundle: ${spec.preload}`);
  const { x, y, width, height } = spec.state;
  return {
    ...(x !== undefined && y !== undefined ? { x, y } : {}),
    width,
    height,
    minWidth: MIN_WINDOW_SIZE.width,
    minHeight: MIN_WINDOW_SIZE.height,
    // Shown once painted, so it never flashes white.
    show: false,
    title: "Pustaka",
    backgroundColor: "#0f2a2e",
    ...(spec.icon ? { icon: spec.icon } : {}),
    webPreferences: { ...hardenedWebPreferences(), preload: spec.preload, devTools: spec.devTools },
  };
}

/** The part of a BrowserWindow used here. */
export interface WindowLike extends TrackedWindow {
  maximize(): void;
  show(): void;
  once(event: "ready-to-show", listener: () => void): unknown;
  loadURL(url: string): Promise<void>;
}

export interface CreateWindowDeps<W extends WindowLike> {
  /** `(options) => new BrowserWindow(options)`. */
  create(options: BrowserWindowConstructorOptions): W;
  spec: WindowSpec;
  /** What to show first (the splash page while the server starts). */
  initialUrl: string;
  saveState(state: WindowState): void;
  clock: Clock;
  log: Log;
}

/** Creates the main window, restores its state, and starts tracking it. */
export function createWindow<W extends WindowLike>(deps: CreateWindowDeps<W>): W {
  const win = deps.create(windowOptions(deps.spec));
  if (deps.spec.state.maximized) win.maximize();
  win.once("ready-to-show", () => win.show());
  trackWindowState(win, (state) => deps.saveState(state), deps.clock);
  loadInto(win, deps.initialUrl, deps.log);
  return win;
}

/** Loads `url`; a failed or superseded load is logged, never an unhandled rejection. */
export function loadInto(win: Pick<WindowLike, "loadURL">, url: string, log: Log): void {
  win.loadURL(url).catch((error: unknown) => log.warn("a page load did not complete", { url: url.startsWith("data:") ? "data:…" : url, error: String(error) }));
}
