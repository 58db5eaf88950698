/**
 * The application menu, as a template for `Menu.buildFromTemplate`. macOS gets its app
 * menu (About, Settings…, Quit live there); elsewhere File holds Settings… and Quit and
 * Help holds About. DevTools appear only in development builds.
 */
import type { MenuItemConstructorOptions } from "electron";
import type { EngineStatus } from "./bridge.js";

export interface MenuActions {
  openDocuments(): void;
  openSettings(): void;
  openLogsFolder(): void;
  showAbout(): void;
}

export interface MenuOptions {
  platform: NodeJS.Platform;
  /** Packaged builds have no DevTools. */
  isPackaged: boolean;
  appName: string;
  actions: MenuActions;
}

const separator: MenuItemConstructorOptions = { type: "separator" };

export function buildMenuTemplate({ platform, isPackaged, appName, actions }: MenuOptions): MenuItemConstructorOptions[] {
  const mac = platform === "darwin";
  const settings: MenuItemConstructorOptions = { label: "Settings…", accelerator: "CmdOrCtrl+,", click: () => actions.openSettings() };
  const about: MenuItemConstructorOptions = { label: `About ${appName}`, click: () => actions.showAbout() };
  const appMenu: MenuItemConstructorOptions[] = mac
    ? [
        {
          label: appName,
          submenu: [about, separator, settings, separator, { role: "services" }, separator, { role: "hide" }, { role: "hideOthers" }, { role: "unhide" }, separator, { role: "quit" }],
        },
      ]
    : [];
  return [
    ...appMenu,
    {
      label: "File",
      submenu: [
        { label: "Open documents…", accelerator: "CmdOrCtrl+O", click: () => actions.openDocuments() },
        separator,
        ...(mac ? [{ role: "close" } as const] : [settings, separator, { role: "quit" } as const]),
      ],
    },
    {
      label: "Edit",
      submenu: [{ role: "undo" }, { role: "redo" }, separator, { role: "cut" }, { role: "copy" }, { role: "paste" }, { role: "pasteAndMatchStyle" }, { role: "delete" }, separator, { role: "selectAll" }],
    },
    {
      label: "View",
      submenu: [
        { role: "reload" },
        { role: "forceReload" },
        ...(isPackaged ? [] : [{ role: "toggleDevTools" } as const]),
        separator,
        { role: "resetZoom" },
        { role: "zoomIn" },
        { role: "zoomOut" },
        separator,
        { role: "togglefullscreen" },
      ],
    },
    {
      label: "Window",
      submenu: mac ? [{ role: "minimize" }, { role: "zoom" }, separator, { role: "front" }] : [{ role: "minimize" }, { role: "close" }],
    },
    {
      role: "help",
      submenu: [{ label: "Open logs folder", click: () => actions.openLogsFolder() }, ...(mac ? [] : [separator, about])],
    },
  ];
}

/** The About box's text: what runs the models (GPU or CPU) and where the API is. */
export function aboutDetail(server: { engine: EngineStatus | null; url: string | null }, versions: { electron?: string; chrome?: string; node?: string }): string {
  const lines = ["A local AI workbench: answers from your own documents, with citations, offline."];
  const engine = server.engine;
  if (engine) {
    const gpu = engine.gpu === null ? "GPU or CPU (decided when a model first loads)" : engine.gpu ? `GPU (${engine.gpu})` : "CPU";
    const threads = engine.threads > 0 ? `${engine.threads} threads` : "threads: the physical cores";
    lines.push(`Engine: ${engine.backend} on ${gpu}, ${threads}${engine.loadedModels.length ? `; loaded: ${engine.loadedModels.map((m) => m.id).join(", ")}` : ""}`);
  } else {
    lines.push("Engine: the local server is not running");
  }
  if (server.url) lines.push(`OpenAI-compatible API: ${server.url}/v1`);
  lines.push(`Electron ${versions.electron ?? "?"} · Chromium ${versions.chrome ?? "?"} · Node.js ${versions.node ?? "?"}`);
  return lines.join("\n");
}
