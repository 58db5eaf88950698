// A small stand-in for the `electron` module, enough to run src-main/main.ts in plain Node
// (electron's binary cannot run here). It reports what the app does to the parent test
// process (process.send) and carries out the test's commands (IPC from a page, requests,
// quitting). Utility processes are Node children running utility-shim.mjs.
import { fork } from "node:child_process";
import { EventEmitter } from "node:events";

const report = (event, data) => process.send?.({ event, data });
// The test passes the app-data folder as `--fake-app-data=DIR` (Electron ignores unknown switches).
const appData = process.argv.find((arg) => arg.startsWith("--fake-app-data="))?.slice("--fake-app-data=".length);
const paths = new Map([["appData", appData]]);

class App extends EventEmitter {
  isPackaged = false;
  getPath(name) {
    if (!paths.get(name)) throw new Error(`fake electron: no path '${name}'`);
    return paths.get(name);
  }
  setPath(name, value) {
    paths.set(name, value);
  }
  setAppLogsPath(value) {
    paths.set("logs", value);
  }
  getVersion() {
    return "0.0.0-fake";
  }
  requestSingleInstanceLock() {
    return true;
  }
  whenReady() {
    return new Promise((resolve) => setImmediate(resolve));
  }
  quit() {
    const event = { prevented: false, preventDefault: () => (event.prevented = true) };
    this.emit("before-quit", event);
    if (event.prevented) return;
    report("exit", 0);
    setImmediate(() => process.exit(0));
  }
  exit(code) {
    report("exit", code);
    process.exit(code);
  }
}
export const app = new App();

class WebContents extends EventEmitter {
  url = "";
  constructor() {
    super();
    app.emit("web-contents-created", {}, this);
  }
  setWindowOpenHandler(handler) {
    this.openHandler = handler;
  }
  getURL() {
    return this.url;
  }
  send(channel, ...args) {
    report("send", { channel, args });
  }
}

export class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    this.webContents = new WebContents();
    report("window", { webPreferences: options.webPreferences, guarded: this.webContents.listenerCount("will-navigate") > 0 });
  }
  loadURL(url) {
    this.webContents.url = url;
    report("load", url);
    setImmediate(() => this.emit("ready-to-show"));
    return Promise.resolve();
  }
  show() {}
  maximize() {}
  isMaximized() {
    return false;
  }
  isMinimized() {
    return false;
  }
  getNormalBounds() {
    return { x: 0, y: 0, width: 1280, height: 840 };
  }
}

export const dialog = {
  showErrorBox: (title, content) => report("error-box", `${title}: ${content}`),
  showOpenDialog: () => Promise.resolve({ canceled: true, filePaths: [] }),
  showMessageBox: () => Promise.resolve({ response: 0 }),
};

class IpcMain extends EventEmitter {
  handlers = new Map();
  handle(channel, handler) {
    this.handlers.set(channel, handler);
  }
  removeHandler(channel) {
    this.handlers.delete(channel);
  }
}
export const ipcMain = new IpcMain();

export const Menu = {
  buildFromTemplate: (template) => ({ template }),
  setApplicationMenu: (menu) => report("menu", menu.template.map((item) => item.label ?? item.role)),
};

const PREFIX = "fake-keychain:";
export const safeStorage = {
  isEncryptionAvailable: () => true,
  getSelectedStorageBackend: () => "gnome_libsecret",
  encryptString: (text) => Buffer.from(PREFIX + Buffer.from(text).toString("hex")),
  decryptString: (data) => Buffer.from(data.toString().slice(PREFIX.length), "hex").toString(),
};

const workArea = { x: 0, y: 0, width: 1920, height: 1040 };
export const screen = { getAllDisplays: () => [{ workArea }], getPrimaryDisplay: () => ({ workArea }) };

const hooks = {};
export const session = {
  defaultSession: {
    webRequest: {
      onHeadersReceived: (listener) => (hooks.headers = listener),
      onBeforeRequest: (listener) => (hooks.request = listener),
    },
    setPermissionRequestHandler: (handler) => (hooks.permission = handler),
    setPermissionCheckHandler: (handler) => (hooks.check = handler),
    setDevicePermissionHandler: () => {},
  },
};

export const shell = {
  openExternal: (url) => (report("open-external", url), Promise.resolve()),
  openPath: () => Promise.resolve(""),
  showItemInFolder: (file) => report("reveal", file),
};

class UtilityProcess extends EventEmitter {
  constructor(modulePath, options) {
    super();
    // Electron gives the utility process `options.env`, else its own environment.
    const child = fork(new URL("./utility-shim.mjs", import.meta.url), [modulePath], { stdio: ["ignore", "ignore", "pipe", "ipc"], execArgv: ["--import", "tsx"], env: options?.env ?? process.env });
    this.stderr = child.stderr;
    child.on("spawn", () => {
      report("fork", { pid: child.pid, serviceName: options?.serviceName });
      this.emit("spawn");
    });
    child.on("message", (message) => this.emit("message", message));
    child.on("exit", (code, signal) => this.emit("exit", code ?? (signal ? 128 : 1)));
    this.child = child;
  }
  postMessage(message) {
    this.child.send(message);
  }
  kill() {
    return this.child.kill();
  }
}
export const utilityProcess = { fork: (modulePath, _args, options) => new UtilityProcess(modulePath, options) };

// The test's commands: IPC as a page at `url` would send it, a request through the session filter, quitting.
process.on("message", (command) => {
  const frame = { url: command.url, parent: null };
  const answer = (result) => report("answer", { id: command.id, ...result });
  if (command.cmd === "send-sync") {
    const event = { senderFrame: frame, returnValue: undefined };
    ipcMain.emit(command.channel, event);
    answer({ value: event.returnValue });
  } else if (command.cmd === "invoke") {
    Promise.resolve()
      .then(() => ipcMain.handlers.get(command.channel)({ senderFrame: frame }, ...command.args))
      .then((value) => answer({ value }), (error) => answer({ error: String(error.message) }));
  } else if (command.cmd === "request") {
    hooks.request({ url: command.url }, (result) => answer({ value: !result.cancel }));
  } else if (command.cmd === "quit") {
    app.quit();
  }
});
