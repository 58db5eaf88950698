/**
 * The main process's side of the bridge. Every handler first checks that the message
 * comes from the workbench (the top frame of a page on the app's origin), then
 * validates its arguments; paths a renderer may reveal are those a dialog handed out or
 * those inside the app's data and models folders.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { FileDialogKind, ServerState } from "./bridge.js";
import { IPC, INVOKE_CHANNELS, type BootstrapInfo } from "./ipc-channels.js";
import { isAppUrl } from "./navigation-guard.js";

/** The part of an IPC event checked here (Electron's `IpcMainInvokeEvent`/`IpcMainEvent`). */
export interface IpcEventLike {
  senderFrame: { url: string; parent: unknown } | null;
}

export interface IpcDeps {
  appOrigin(): string | null;
  /** Base URL (when the server is ready), credential and version for the preload. */
  bootstrap(): BootstrapInfo | null;
  serverState(): ServerState;
  /** Shows the native open dialog; resolves to absolute paths. */
  showOpenDialog(kind: FileDialogKind): Promise<string[]>;
  /** `shell.showItemInFolder`. */
  showItemInFolder(path: string): void;
  restartServer(): Promise<void>;
  /** Folders whose files may be revealed (data and models folders). */
  revealRoots(): string[];
}

export type InvokeChannel = (typeof INVOKE_CHANNELS)[number];
export type InvokeHandler = (event: IpcEventLike, ...args: unknown[]) => Promise<unknown>;

const NoArgs = z.tuple([]);
const DialogArgs = z.tuple([z.object({ kind: z.enum(["documents", "model"]) }).strict()]);
const RevealArgs = z.tuple([
  z
    .string()
    .min(1)
    .max(4096)
    .refine((p) => !p.includes("\0") && path.isAbsolute(p) && path.normalize(p) === p, "must be a normalised absolute path"),
]);

/** Throws unless the sender is the top frame of a page on the app's origin. */
export function assertFromWorkbench(event: IpcEventLike, appOrigin: string | null): void {
  const frame = event.senderFrame;
  if (!frame || frame.parent !== null || !isAppUrl(frame.url, appOrigin)) throw new Error("refused: the sender is not the Pustaka workbench");
}

function parseArgs<T>(schema: z.ZodType<T>, args: unknown[]): T {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw new Error(`invalid arguments: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

/** A synchronous handler whose throws become rejections, as the renderer sees them. */
function rejecting(handler: (event: IpcEventLike, ...args: unknown[]) => unknown): InvokeHandler {
  return (event, ...args) => new Promise((resolve) => resolve(handler(event, ...args)));
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function isInside(file: string, root: string): boolean {
  const relative = path.relative(root, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/** The invoke handlers and the synchronous bootstrap handler, bound to `deps`. */
export function createIpcHandlers(deps: IpcDeps): { invoke: Record<InvokeChannel, InvokeHandler>; bootstrap: (event: IpcEventLike) => BootstrapInfo | null } {
  const handedOut = new Set<string>();
  const guard = (event: IpcEventLike) => assertFromWorkbench(event, deps.appOrigin());

  const mayReveal = (file: string): boolean => {
    if (handedOut.has(file)) return true;
    // Both the path as given and its real target must be inside: a symlink in the data folder cannot point out.
    return deps.revealRoots().some((root) => isInside(file, root) && isInside(real(file), real(root)));
  };

  const invoke: Record<InvokeChannel, InvokeHandler> = {
    [IPC.getServerState]: rejecting((event, ...args) => {
      guard(event);
      parseArgs(NoArgs, args);
      return deps.serverState();
    }),
    [IPC.openFileDialog]: async (event, ...args) => {
      guard(event);
      const [{ kind }] = parseArgs(DialogArgs, args);
      const paths = await deps.showOpenDialog(kind);
      for (const p of paths) handedOut.add(p);
      return paths;
    },
    [IPC.revealInFolder]: rejecting((event, ...args) => {
      guard(event);
      const [file] = parseArgs(RevealArgs, args);
      if (!mayReveal(file)) throw new Error("refused: this path was not given to the workbench");
      deps.showItemInFolder(file);
    }),
    [IPC.restartServer]: async (event, ...args) => {
      guard(event);
      parseArgs(NoArgs, args);
      await deps.restartServer();
    },
  };

  const bootstrap = (event: IpcEventLike): BootstrapInfo | null => {
    try {
      guard(event);
    } catch {
      return null;
    }
    return deps.bootstrap();
  };

  return { invoke, bootstrap };
}

/** The part of Electron's `ipcMain` used here. */
export interface IpcMainLike {
  handle(channel: string, handler: (event: IpcEventLike, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
  on(channel: string, listener: (event: SyncIpcEventLike) => void): unknown;
  removeListener(channel: string, listener: (event: SyncIpcEventLike) => void): unknown;
}

/** A synchronous IPC event: the answer goes in `returnValue`. */
export type SyncIpcEventLike = IpcEventLike & { returnValue: unknown };

/** Registers the handlers on `ipcMain`; returns the function that removes them. */
export function registerIpcHandlers(ipcMain: IpcMainLike, handlers: ReturnType<typeof createIpcHandlers>): () => void {
  for (const channel of INVOKE_CHANNELS) ipcMain.handle(channel, (event, ...args) => handlers.invoke[channel](event, ...args));
  const onBootstrap = (event: SyncIpcEventLike) => {
    event.returnValue = handlers.bootstrap(event);
  };
  ipcMain.on(IPC.bootstrap, onBootstrap);
  return () => {
    for (const channel of INVOKE_CHANNELS) ipcMain.removeHandler(channel);
    ipcMain.removeListener(IPC.bootstrap, onBootstrap);
  };
}
