/**
 * Where the window may go. In-window navigation and `window.open` stay on the app's own
 * origin (the local server, `http://127.0.0.1:PORT`); http(s) links elsewhere open in the
 * system browser; everything else (javascript:, file:, data:, custom schemes) is refused.
 */
import type { BrowserWindowConstructorOptions } from "electron";
import { hardenedWebPreferences } from "./secure-window.js";

/** The app's origin, e.g. `http://127.0.0.1:7780`; null before the server has started once. */
export type OriginSource = () => string | null;

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** True when `url` is on the app's own origin. */
export function isAppUrl(url: string, appOrigin: string | null): boolean {
  const parsed = parse(url);
  return appOrigin !== null && parsed !== null && parsed.protocol === "http:" && parsed.origin === appOrigin;
}

/** True for http(s) URLs without embedded credentials: the only ones handed to the system browser. */
export function isExternalWebUrl(url: string): boolean {
  const parsed = parse(url);
  return parsed !== null && (parsed.protocol === "http:" || parsed.protocol === "https:") && !parsed.username && !parsed.password;
}

export type NavigationDecision = "allow" | "open-external" | "deny";

/** The policy for a navigation or `window.open` to `url`. */
export function navigationDecision(url: string, appOrigin: string | null): NavigationDecision {
  if (isAppUrl(url, appOrigin)) return "allow";
  return isExternalWebUrl(url) ? "open-external" : "deny";
}

type WindowOpenResponse = { action: "deny" } | { action: "allow"; overrideBrowserWindowOptions: BrowserWindowConstructorOptions };

interface PreventableUrlEvent {
  url: string;
  preventDefault(): void;
}

/** The part of Electron's `WebContents` guarded here. */
export interface GuardableContents {
  on(event: "will-navigate", listener: (event: PreventableUrlEvent) => void): unknown;
  on(event: "will-redirect", listener: (event: PreventableUrlEvent) => void): unknown;
  on(event: "will-attach-webview", listener: (event: { preventDefault(): void }) => void): unknown;
  setWindowOpenHandler(handler: (details: { url: string }) => WindowOpenResponse): void;
}

export interface GuardDeps {
  appOrigin: OriginSource;
  /** Opens a URL in the system browser (`shell.openExternal`). */
  openExternal(url: string): void;
}

/**
 * Applies the policy to one web contents (every one the app creates: the main window,
 * pop-ups, DevTools). Redirects never open the browser: only a navigation the page
 * started does.
 */
export function guardWebContents(contents: GuardableContents, deps: GuardDeps): void {
  contents.on("will-navigate", (event) => {
    const decision = navigationDecision(event.url, deps.appOrigin());
    if (decision === "allow") return;
    event.preventDefault();
    if (decision === "open-external") deps.openExternal(event.url);
  });
  contents.on("will-redirect", (event) => {
    if (!isAppUrl(event.url, deps.appOrigin())) event.preventDefault();
  });
  contents.on("will-attach-webview", (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const decision = navigationDecision(url, deps.appOrigin());
    if (decision === "open-external") deps.openExternal(url);
    if (decision !== "allow") return { action: "deny" };
    // A same-origin pop-up gets the window's protections but no preload: it holds no credential.
    return { action: "allow", overrideBrowserWindowOptions: { webPreferences: hardenedWebPreferences() } };
  });
}
