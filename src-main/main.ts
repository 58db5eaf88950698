/**
 * The desktop app's composition root, and the only module that imports `electron`: it
 * hands Electron's pieces to the plain modules beside it. One instance; the server in a
 * utility process (restarted with backoff when it crashes); one sandboxed window on the
 * server's own origin, reached through the preload bridge with the workbench's key.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { app, BrowserWindow, dialog, ipcMain, Menu, safeStorage, screen, session, shell, utilityProcess } from "electron";
import { hugePageEnvironment, packageLayout } from "../src-server/index.js";
import { appPaths } from "./app-paths.js";
import { systemClock } from "./clock.js";
import { pickFiles, type DialogLike } from "./file-dialog.js";
import { IPC } from "./ipc-channels.js";
import { createIpcHandlers, registerIpcHandlers } from "./ipc-handlers.js";
import { openLogFile } from "./log.js";
import { aboutDetail, buildMenuTemplate } from "./menu-template.js";
import { guardWebContents, isAppUrl } from "./navigation-guard.js";
import { createWindow, loadInto } from "./secure-window.js";
import { bridgeState } from "./bridge-state.js";
import { ServerHost, type HostState } from "./server-host.js";
import { hardenSession } from "./session-policy.js";
import { showSettingsDialog } from "./settings-dialog.js";
import { SettingsStore } from "./settings.js";
import { statusPage } from "./splash-page.js";
import { loadUiCredential } from "./ui-credential.js";
import { clampToDisplays, loadWindowState, saveWindowState } from "./window-state.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

// The same folder in development and packaged builds (the package name is lower-case).
app.setPath("userData", path.join(app.getPath("appData"), "Pustaka"));

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  main().catch((error: unknown) => {
    dialog.showErrorBox("Pustaka could not start", String(error));
    app.exit(1);
  });
}

async function main(): Promise<void> {
  const paths = appPaths(app.getPath("userData"));
  app.setAppLogsPath(paths.logsDir);
  const mainLog = openLogFile(paths.mainLog);
  const log = mainLog.log;
  const layout = packageLayout(import.meta.url);
  let win: BrowserWindow | null = null;
  await app.whenReady();
  log.info("starting", { version: app.getVersion(), packaged: app.isPackaged, rendererBuilt: layout.rendererDir !== null });

  const settings = new SettingsStore(paths.settingsFile, log);
  const credential = loadUiCredential({
    safeStorage: {
      isEncryptionAvailable: () => safeStorage.isEncryptionAvailable(),
      encryptString: (text) => safeStorage.encryptString(text),
      decryptString: (data) => safeStorage.decryptString(data),
      ...(process.platform === "linux" ? { getSelectedStorageBackend: () => safeStorage.getSelectedStorageBackend() } : {}),
    },
    file: paths.keyFile,
    log,
  });
  const modelsDir = () => settings.get().modelsDir ?? paths.defaultModelsDir;
  const host = new ServerHost({
    // glibc reads its tunables at start: the server's environment asks for huge pages (engine/huge-pages.ts).
    fork: () => utilityProcess.fork(here("./server-process.js"), [], { serviceName: "Pustaka server", stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...hugePageEnvironment(process.env) } }),
    settings: () => ({
      dataDir: paths.dataDir,
      modelsDir: modelsDir(),
      apiKey: credential.key,
      logFile: paths.serverLog,
      rendererDir: layout.rendererDir,
      catalogPath: layout.catalogPath,
      version: app.getVersion(),
    }),
    preferredPort: settings.get().serverPort,
    log,
  });
  // The last origin the server had: navigation and IPC are judged against it, even while it restarts.
  let appOrigin: string | null = null;
  const readyOrigin = () => (host.state.phase === "ready" && host.state.url ? new URL(host.state.url).origin : null);

  const ses = session.defaultSession;
  hardenSession(
    {
      onHeadersReceived: (listener) => ses.webRequest.onHeadersReceived((details, callback) => callback({ responseHeaders: listener(details.responseHeaders) })),
      onBeforeRequest: (listener) => ses.webRequest.onBeforeRequest((details, callback) => callback({ cancel: !listener(details.url) })),
      setPermissionRequestHandler: (handler) => ses.setPermissionRequestHandler((_contents, permission, callback, details) => callback(handler(permission, details.requestingUrl))),
      setPermissionCheckHandler: (handler) => ses.setPermissionCheckHandler((_contents, permission, requestingOrigin) => handler(permission, requestingOrigin)),
    },
    { appOrigin: () => appOrigin, readyOrigin },
  );
  ses.setDevicePermissionHandler(() => false);
  app.on("web-contents-created", (_event, contents) => {
    guardWebContents(contents, {
      appOrigin: () => appOrigin,
      openExternal: (url) => void shell.openExternal(url).catch((error: unknown) => log.warn("could not open a link", { error: String(error) })),
    });
  });

  const windowDialog = (): DialogLike => ({
    showOpenDialog: (options) => (win ? dialog.showOpenDialog(win, options) : dialog.showOpenDialog(options)),
    showMessageBox: (options) => (win ? dialog.showMessageBox(win, options) : dialog.showMessageBox(options)),
  });
  const restartServer = () => host.restart();
  const disposeIpc = registerIpcHandlers(
    ipcMain,
    createIpcHandlers({
      appOrigin: () => appOrigin,
      bootstrap: () => (appOrigin ? { baseUrl: appOrigin, credential: credential.key, version: app.getVersion() } : null),
      serverState: () => bridgeState(host.state),
      showOpenDialog: (kind) => pickFiles(windowDialog(), kind),
      showItemInFolder: (file) => shell.showItemInFolder(file),
      restartServer,
      revealRoots: () => [paths.dataDir, modelsDir()],
    }),
  );

  Menu.setApplicationMenu(
    Menu.buildFromTemplate(
      buildMenuTemplate({
        platform: process.platform,
        isPackaged: app.isPackaged,
        appName: "Pustaka",
        actions: {
          openDocuments: () => win?.webContents.send(IPC.menuCommand, "open-documents"),
          openSettings: () =>
            void showSettingsDialog({ dialog: windowDialog(), settings, defaultModelsDir: paths.defaultModelsDir, restartServer, openFolder: (dir) => shell.openPath(dir) }).catch(
              (error: unknown) => log.error("settings failed", { error: String(error) }),
            ),
          openLogsFolder: () => void shell.openPath(paths.logsDir),
          showAbout: () =>
            void windowDialog().showMessageBox({
              title: "About Pustaka",
              message: `Pustaka ${app.getVersion()}`,
              detail: aboutDetail(host.state, process.versions),
              buttons: ["OK"],
            }),
        },
      }),
    ),
  );

  const pageFor = (state: HostState) => (state.phase === "ready" && state.url && layout.rendererDir ? `${state.url}/` : statusPage(state));
  let shown: { phase: HostState["phase"]; page: string } | null = null;
  /** Shows the workbench once the server is ready (again, or on a new origin), else a status page. */
  const showState = (state: HostState) => {
    if (!win || state.phase === "stopped") return;
    if (isAppUrl(win.webContents.getURL(), appOrigin)) {
      // The workbench shows the state itself (state events); reload it only if it goes away.
      shown = null;
      return;
    }
    const page = pageFor(state);
    if (shown?.phase === state.phase && shown.page === page) return;
    shown = { phase: state.phase, page };
    loadInto(win, page, log);
  };
  host.onState((state) => {
    if (state.phase === "ready" && state.url) {
      const url = new URL(state.url);
      appOrigin = url.origin;
      try {
        if (settings.get().serverPort !== Number(url.port)) settings.update({ serverPort: Number(url.port) });
      } catch (error) {
        log.warn("could not save the server port", { error: String(error) });
      }
    }
    showState(state);
    if (state.phase !== "stopped") win?.webContents.send(IPC.serverState, bridgeState(state));
  });

  function openWindow(): void {
    const displays = screen.getAllDisplays().map((display) => display.workArea);
    const state = clampToDisplays(loadWindowState(paths.windowStateFile), displays, screen.getPrimaryDisplay().workArea);
    const created = createWindow({
      create: (options) => new BrowserWindow(options),
      spec: { preload: here("./preload.cjs"), state, icon: path.join(layout.root, "resources", "icon.png"), devTools: !app.isPackaged },
      initialUrl: pageFor(host.state),
      saveState: (windowState) => saveWindowState(paths.windowStateFile, windowState),
      clock: systemClock,
      log,
    });
    created.on("closed", () => {
      win = null;
      shown = null;
    });
    win = created;
  }

  app.on("second-instance", () => {
    if (!win) return openWindow();
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on("activate", () => {
    if (!win) openWindow();
  });
  app.on("window-all-closed", () => {
    if (process.platform !== "darwin") app.quit();
  });
  let quitting = false;
  app.on("before-quit", (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    host
      .close()
      .catch((error: unknown) => log.error("stopping the server failed", { error: String(error) }))
      .finally(() => {
        disposeIpc();
        log.info("quit");
        mainLog.close();
        app.quit();
      });
  });

  host.start();
  openWindow();
}
