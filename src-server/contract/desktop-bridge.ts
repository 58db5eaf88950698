/**
 * The desktop shell's side of the contract: the preload bridge, `window.pustaka`,
 * everything the workbench may ask of the shell. Types only: src-main's preload
 * implements it, the renderer uses it (it may import this folder and nothing else of
 * the server or the shell), and nothing here exists at run time.
 */
import type { Health } from "./common.js";

/** The engine's report (`GET /healthz` `engine`): backend, GPU in use (false = CPU), threads, loaded models. */
export type EngineStatus = Health["engine"];

export type ServerStateName = "starting" | "ready" | "crashed" | "restarting" | "failed";

/** The local server as the shell sees it; sent on every change. */
export interface ServerState {
  state: ServerStateName;
  /** Why, in words: the error behind `crashed`/`failed`, or what is happening. */
  detail?: string;
  /** GPU backend in use (`cuda`, `vulkan`, `metal`), false for the CPU; absent before the first report. */
  gpu?: string | false;
  /** The engine's latest status while the server runs (GPU is known once a model has loaded). */
  engine?: EngineStatus;
  /** Crashes since the server last ran stably; 0 when healthy. */
  restarts: number;
  /** While `restarting`: when the next attempt starts (Unix milliseconds). */
  retryAt?: number;
}

/** `documents`: PDF, DOCX, text, Markdown, HTML; `model`: GGUF files. */
export type FileDialogKind = "documents" | "model";

/** Commands from the application menu that the workbench carries out. */
export type MenuCommand = "open-documents";

export interface PustakaBridge {
  /** The local server's origin (`http://127.0.0.1:PORT`), which is also this page's origin. */
  readonly baseUrl: string;
  /** The workbench's own API key (send as `Authorization: Bearer`); kept by the shell with the OS keychain. */
  readonly credential: string;
  /** The app's version. */
  readonly version: string;
  /** Native open dialog; resolves to the chosen absolute paths, `[]` when cancelled. */
  openFileDialog(options: { kind: FileDialogKind }): Promise<string[]>;
  /** Shows a file in its folder: paths a dialog returned, or inside the app's data and models folders; rejects otherwise. */
  revealInFolder(path: string): Promise<void>;
  /** Stops and starts the local server again (e.g. after it failed). */
  restartServer(): Promise<void>;
  /** Calls back with the current server state, then on every change; returns the unsubscribe function. */
  onServerState(callback: (state: ServerState) => void): () => void;
  /** Calls back when the user picks a menu command the workbench handles; returns the unsubscribe function. */
  onMenuCommand(callback: (command: MenuCommand) => void): () => void;
}
