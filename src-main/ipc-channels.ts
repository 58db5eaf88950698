/**
 * Every IPC channel between the preload and the main process, in one place. The main
 * process answers exactly these; anything else is not listened to.
 */
export const IPC = {
  /** Synchronous, once per page load: base URL, credential and version for the bridge. */
  bootstrap: "pustaka:bootstrap",
  getServerState: "pustaka:get-server-state",
  openFileDialog: "pustaka:open-file-dialog",
  revealInFolder: "pustaka:reveal-in-folder",
  restartServer: "pustaka:restart-server",
  /** Main → renderer: the server state changed. */
  serverState: "pustaka:server-state",
  /** Main → renderer: a menu command for the workbench. */
  menuCommand: "pustaka:menu-command",
} as const;

/** Channels the main process answers with `ipcMain.handle` (request/response). */
export const INVOKE_CHANNELS = [IPC.getServerState, IPC.openFileDialog, IPC.revealInFolder, IPC.restartServer] as const;

/** What `IPC.bootstrap` returns to a page at the app's origin (null elsewhere or before the server is up). */
export interface BootstrapInfo {
  baseUrl: string;
  credential: string;
  version: string;
}
