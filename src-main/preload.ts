/**
 * The preload: builds `window.pustaka` (see bridge.ts) for the workbench page and nothing
 * else. It runs sandboxed, so it is bundled into one CommonJS file (`preload.cjs`); the
 * page never sees `ipcRenderer`, IPC events or any Node API, only these functions.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from "electron";
import type { MenuCommand, PustakaBridge, ServerState } from "./bridge.js";
import { IPC, type BootstrapInfo } from "./ipc-channels.js";

/** Subscribes `callback` to a main → renderer channel, passing the payload only. */
function subscribe<T>(channel: string, callback: (value: T) => void): () => void {
  const listener = (_event: IpcRendererEvent, value: T) => callback(value);
  ipcRenderer.on(channel, listener);
  return () => void ipcRenderer.removeListener(channel, listener);
}

// Synchronous once, so the page can build its API client before its first render. The
// main process answers only the workbench (its origin, top frame); elsewhere it is null.
const info = ipcRenderer.sendSync(IPC.bootstrap) as BootstrapInfo | null;

if (info) {
  const bridge: PustakaBridge = {
    baseUrl: info.baseUrl,
    credential: info.credential,
    version: info.version,
    openFileDialog: (options) => ipcRenderer.invoke(IPC.openFileDialog, { kind: options.kind }) as Promise<string[]>,
    revealInFolder: async (path) => {
      await ipcRenderer.invoke(IPC.revealInFolder, path);
    },
    restartServer: async () => {
      await ipcRenderer.invoke(IPC.restartServer);
    },
    onServerState(callback) {
      let changed = false;
      const unsubscribe = subscribe<ServerState>(IPC.serverState, (state) => {
        changed = true;
        callback(state);
      });
      void (ipcRenderer.invoke(IPC.getServerState) as Promise<ServerState>).then(
        (state) => {
          if (!changed) callback(state);
        },
        () => undefined,
      );
      return unsubscribe;
    },
    onMenuCommand: (callback) => subscribe<MenuCommand>(IPC.menuCommand, callback),
  };
  contextBridge.exposeInMainWorld("pustaka", bridge);
}
