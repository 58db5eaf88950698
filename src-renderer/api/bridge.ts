/** The Electron preload bridge (`window.pustaka`); undefined when the workbench runs in a browser. */
import type { PustakaBridge } from "./contract.js";

export type { FileDialogKind, MenuCommand, PustakaBridge, ServerState, ServerStateName } from "./contract.js";

declare global {
  interface Window {
    pustaka?: PustakaBridge;
  }
}

/** The bridge, when running inside the desktop app. */
export function getBridge(): PustakaBridge | undefined {
  return typeof window === "undefined" ? undefined : window.pustaka;
}

/** `http://host:port` from a bridge base URL that may end in `/` or `/v1`. */
export function originOf(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}
