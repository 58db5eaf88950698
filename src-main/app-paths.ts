/** Where the desktop app keeps its files, all under the OS's app-data folder (`app.getPath("userData")`). */
import path from "node:path";

export interface AppPaths {
  userData: string;
  /** The server's data directory (database, encrypted documents, keys). */
  dataDir: string;
  /** Models folder unless the settings choose another. */
  defaultModelsDir: string;
  logsDir: string;
  serverLog: string;
  mainLog: string;
  settingsFile: string;
  windowStateFile: string;
  /** The workbench's API key, encrypted with safeStorage. */
  keyFile: string;
}

export function appPaths(userData: string): AppPaths {
  const dataDir = path.join(userData, "data");
  const logsDir = path.join(userData, "logs");
  return {
    userData,
    dataDir,
    defaultModelsDir: path.join(dataDir, "models"),
    logsDir,
    serverLog: path.join(logsDir, "server.log"),
    mainLog: path.join(logsDir, "main.log"),
    settingsFile: path.join(userData, "settings.json"),
    windowStateFile: path.join(userData, "window-state.json"),
    keyFile: path.join(userData, "workbench-key.bin"),
  };
}
