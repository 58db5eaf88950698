/**
 * The session's defences, on top of the window's: a Content-Security-Policy added to
 * every response, requests allowed only to the running server's origin (so a process
 * that grabs the port while the server is down never sees the workbench's key), and
 * permissions denied except writing to the clipboard (the copy buttons) from the app.
 */

import { WORKBENCH_CSP } from "../src-server/index.js";

/** The workbench's CSP, the one the server sends with its pages: enforced again by the window's session. */
export const APP_CSP = WORKBENCH_CSP;

export type ResponseHeaders = Record<string, string[] | string>;

/** `headers` with `APP_CSP` added; a policy already there (the server's) is kept: browsers enforce both. */
export function withCsp(headers: ResponseHeaders | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let cspKey = "Content-Security-Policy";
  for (const [name, value] of Object.entries(headers ?? {})) {
    out[name] = Array.isArray(value) ? [...value] : [value];
    if (name.toLowerCase() === "content-security-policy") cspKey = name;
  }
  const policies = out[cspKey] ?? [];
  if (!policies.includes(APP_CSP)) policies.push(APP_CSP);
  out[cspKey] = policies;
  return out;
}

/** Schemes the page itself produces or DevTools uses; the CSP governs them. */
const LOCAL_SCHEMES = new Set(["data:", "blob:", "devtools:"]);

/** Whether a request may leave the renderer: only to the server while it is ready (http and its WebSocket). */
export function requestAllowed(url: string, readyOrigin: string | null): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (LOCAL_SCHEMES.has(parsed.protocol)) return true;
  if (readyOrigin === null || (parsed.protocol !== "http:" && parsed.protocol !== "ws:")) return false;
  return parsed.host === new URL(readyOrigin).host;
}

/** Permissions granted, and only to the app's origin. Everything else (camera, geolocation, notifications, ...) is denied. */
const GRANTED = new Set(["clipboard-sanitized-write"]);

export function permissionAllowed(permission: string, requestingUrl: string | undefined, appOrigin: string | null): boolean {
  if (!GRANTED.has(permission) || !requestingUrl || appOrigin === null) return false;
  try {
    return new URL(requestingUrl).origin === appOrigin;
  } catch {
    return false;
  }
}

/** The part of Electron's `Session` configured here, in plain callbacks. */
export interface SessionHooks {
  onHeadersReceived(listener: (headers: ResponseHeaders | undefined) => Record<string, string[]>): void;
  onBeforeRequest(listener: (url: string) => boolean): void;
  setPermissionRequestHandler(handler: (permission: string, requestingUrl: string | undefined) => boolean): void;
  setPermissionCheckHandler(handler: (permission: string, requestingOrigin: string | undefined) => boolean): void;
}

/** Installs the CSP, the request filter and the permission handlers. */
export function hardenSession(hooks: SessionHooks, deps: { appOrigin: () => string | null; readyOrigin: () => string | null }): void {
  hooks.onHeadersReceived((headers) => withCsp(headers));
  hooks.onBeforeRequest((url) => requestAllowed(url, deps.readyOrigin()));
  hooks.setPermissionRequestHandler((permission, url) => permissionAllowed(permission, url, deps.appOrigin()));
  hooks.setPermissionCheckHandler((permission, origin) => permissionAllowed(permission, origin, deps.appOrigin()));
}
