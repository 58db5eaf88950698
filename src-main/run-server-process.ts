/**
 * The server's utility process, as a function: waits for its settings in the first
 * message, starts the server on 127.0.0.1, reports `ready` with the engine status, keeps
 * reporting the engine status when it changes, and closes everything on `stop`. The
 * parent port is injected, so tests run it in plain Node with a fake port.
 */
import net from "node:net";
import { ConfigError, createServer, loadConfig, ModelConfigError, type ConfigInput, type PustakaServer } from "../src-server/index.js";
import { openLogFile, type LogFile } from "./log.js";
import { ParentMessageSchema, type ChildMessage, type ValidServerSettings } from "./server-protocol.js";

/** The part of Electron's `process.parentPort` used here. */
export interface ParentPortLike {
  on(event: "message", listener: (event: { data: unknown }) => void): unknown;
  postMessage(message: ChildMessage): void;
}

export interface ServerProcessOptions {
  /** Ends the process (`process.exit` in the app). */
  exit(code: number): void;
  /** How often the engine status is checked for changes, in ms. Default 2000. */
  statusIntervalMs?: number;
}

export interface ServerProcessHandle {
  /** Closes the server and exits (what `stop` and SIGTERM do). Idempotent. */
  stop(): Promise<void>;
}

/** `preferred` when it is free on `host`, else 0 (any free port). */
export function choosePort(host: string, preferred: number): Promise<number> {
  if (preferred === 0) return Promise.resolve(0);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(0));
    probe.listen(preferred, host, () => probe.close(() => resolve(preferred)));
  });
}

export function runServerProcess(port: ParentPortLike, options: ServerProcessOptions): ServerProcessHandle {
  let starting: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  let server: PustakaServer | null = null;
  let logFile: LogFile | null = null;
  let statusTimer: NodeJS.Timeout | undefined;

  async function start(settings: ValidServerSettings): Promise<void> {
    logFile = openLogFile(settings.logFile, settings.logLevel);
    const host = "127.0.0.1";
    const config = loadConfig({
      // The desktop app is configured by its settings alone, never by PUSTAKA_* variables.
      env: {},
      defaults: { catalogPath: settings.catalogPath },
      overrides: {
        ...(settings.config as ConfigInput | undefined),
        host,
        port: await choosePort(host, settings.port),
        dataDir: settings.dataDir,
        modelsDir: settings.modelsDir,
        apiKey: settings.apiKey,
        logLevel: settings.logLevel,
      },
    });
    server = await createServer(config, { version: settings.version, logger: logFile.logger, rendererDir: settings.rendererDir, workers: settings.workers });
    if (stopping) return;
    const url = await server.listen();
    let last = JSON.stringify(server.engine.status());
    port.postMessage({ type: "ready", url, engine: server.engine.status() });
    statusTimer = setInterval(() => {
      const engine = server?.engine.status();
      const json = JSON.stringify(engine);
      if (!engine || json === last) return;
      last = json;
      port.postMessage({ type: "engine", engine });
    }, options.statusIntervalMs ?? 2000);
  }

  function stop(code = 0): Promise<void> {
    stopping ??= (async () => {
      await starting?.catch(() => undefined);
      clearInterval(statusTimer);
      try {
        await server?.close();
      } catch (error) {
        logFile?.log.error("closing the server failed", { error: String(error) });
        code = 1;
      }
      port.postMessage({ type: "stopped" });
      logFile?.close();
      options.exit(code);
    })();
    return stopping;
  }

  port.on("message", ({ data }) => {
    const parsed = ParentMessageSchema.safeParse(data);
    if (!parsed.success) {
      logFile?.log.warn("ignored a malformed message from the main process");
      return;
    }
    if (parsed.data.type === "stop") {
      void stop();
      return;
    }
    if (starting) return;
    starting = start(parsed.data.settings).catch((error: unknown) => {
      const fatal = error instanceof ConfigError || error instanceof ModelConfigError;
      const message = error instanceof Error ? error.message : String(error);
      logFile?.log.error("the server could not start", { error: message, fatal });
      port.postMessage({ type: "error", message, fatal });
      void stop(1);
    });
  });

  return { stop: () => stop() };
}
