/**
 * Settings… : the models folder, the one setting the desktop shell owns. A native dialog
 * (it works even when the workbench cannot load); changing the folder restarts the
 * server so it scans the new one.
 */
import { mkdirSync } from "node:fs";
import type { DialogLike } from "./file-dialog.js";
import type { SettingsStore } from "./settings.js";

export interface SettingsDialogDeps {
  dialog: DialogLike;
  settings: SettingsStore;
  /** `<data>/models`, used when no folder is chosen. */
  defaultModelsDir: string;
  restartServer(): Promise<void>;
  /** Opens a folder in the file manager (`shell.openPath`). */
  openFolder(path: string): Promise<unknown>;
}

export type SettingsOutcome = "changed" | "reset" | "opened" | "unchanged";

/** Shows the settings dialog and carries out the choice. */
export async function showSettingsDialog(deps: SettingsDialogDeps): Promise<SettingsOutcome> {
  const chosen = deps.settings.get().modelsDir;
  const current = chosen ?? deps.defaultModelsDir;
  const buttons = ["Change models folder…", "Open models folder", "Close", ...(chosen ? ["Use the default folder"] : [])];
  const { response } = await deps.dialog.showMessageBox({
    type: "none",
    title: "Settings",
    message: "Models folder",
    detail: `${current}\n\nPustaka lists the .gguf files in this folder. Changing it restarts the local server.`,
    buttons,
    defaultId: 2,
    cancelId: 2,
    noLink: true,
  });
  if (response === 0) {
    const picked = await deps.dialog.showOpenDialog({ title: "Models folder", defaultPath: current, properties: ["openDirectory", "createDirectory"] });
    const folder = picked.canceled ? undefined : picked.filePaths[0];
    if (!folder || folder === current) return "unchanged";
    deps.settings.update({ modelsDir: folder });
    await deps.restartServer();
    return "changed";
  }
  if (response === 1) {
    mkdirSync(current, { recursive: true });
    await deps.openFolder(current);
    return "opened";
  }
  if (response === 3) {
    deps.settings.update({ modelsDir: null });
    await deps.restartServer();
    return "reset";
  }
  return "unchanged";
}
