import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { APP_CSP, hardenSession, permissionAllowed, requestAllowed, withCsp, type SessionHooks } from "./session-policy.js";

const APP = "http://127.0.0.1:7780";

describe("Content-Security-Policy", () => {
  it("is strict: own scripts only, no inline script, no eval, no plugins, no framing", () => {
    const directives = new Map(APP_CSP.split("; ").map((d: string) => [d.split(" ")[0], d.split(" ").slice(1)]));
    assert.deepEqual(directives.get("script-src"), ["'self'"]);
    assert.deepEqual(directives.get("default-src"), ["'self'"]);
    assert.deepEqual(directives.get("object-src"), ["'none'"]);
    assert.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
    assert.deepEqual(directives.get("connect-src"), ["'self'"]);
    assert.ok(!APP_CSP.includes("unsafe-eval"));
  });

  it("is added to every response, next to the server's own policy and without duplicates", () => {
    assert.deepEqual(withCsp(undefined), { "Content-Security-Policy": [APP_CSP] });
    assert.deepEqual(withCsp({ "content-type": ["text/html"] }), { "content-type": ["text/html"], "Content-Security-Policy": [APP_CSP] });
    assert.deepEqual(withCsp({ "content-security-policy": [APP_CSP] }), { "content-security-policy": [APP_CSP] });
    assert.deepEqual(withCsp({ "Content-Security-Policy": "default-src 'none'" }), { "Content-Security-Policy": ["default-src 'none'", APP_CSP] });
  });
});

describe("request filter", () => {
  it("lets requests reach the running server, over HTTP and its WebSocket", () => {
    assert.equal(requestAllowed(`${APP}/v1/models`, APP), true);
    assert.equal(requestAllowed("ws://127.0.0.1:7780/socket", APP), true);
    assert.equal(requestAllowed("data:image/png;base64,AAAA", APP), true);
    assert.equal(requestAllowed("blob:http://127.0.0.1:7780/1234", APP), true);
  });

  it("blocks everything while the server is not ready: whoever holds the port then is not us", () => {
    assert.equal(requestAllowed(`${APP}/v1/models`, null), false);
    assert.equal(requestAllowed("ws://127.0.0.1:7780/socket", null), false);
  });

  it("blocks other origins and schemes", () => {
    for (const url of ["https://example.org/", "http://127.0.0.1:7781/", "http://localhost:7780/", "https://127.0.0.1:7780/", "file:///etc/passwd", "ftp://x/", "chrome-extension://abc/x.js", "nonsense"])
      assert.equal(requestAllowed(url, APP), false, url);
  });
});

describe("permissions", () => {
  it("grants only clipboard writes, only to the app's origin", () => {
    assert.equal(permissionAllowed("clipboard-sanitized-write", `${APP}/chat`, APP), true);
    assert.equal(permissionAllowed("clipboard-sanitized-write", APP, APP), true);
    assert.equal(permissionAllowed("clipboard-sanitized-write", "https://example.org/", APP), false);
    assert.equal(permissionAllowed("clipboard-sanitized-write", undefined, APP), false);
    assert.equal(permissionAllowed("clipboard-sanitized-write", `${APP}/`, null), false);
  });

  it("denies everything else, even to the app", () => {
    for (const permission of ["clipboard-read", "media", "geolocation", "notifications", "midi", "openExternal", "pointerLock", "fullscreen", "display-capture", "fileSystem", "hid", "serial", "usb", "unknown"])
      assert.equal(permissionAllowed(permission, `${APP}/`, APP), false, permission);
  });
});

describe("hardenSession", () => {
  it("installs all four hooks, reading the origins live", () => {
    const installed: Partial<Record<keyof SessionHooks, (...args: any[]) => unknown>> = {};
    const hooks: SessionHooks = {
      onHeadersReceived: (l) => void (installed.onHeadersReceived = l),
      onBeforeRequest: (l) => void (installed.onBeforeRequest = l),
      setPermissionRequestHandler: (h) => void (installed.setPermissionRequestHandler = h),
      setPermissionCheckHandler: (h) => void (installed.setPermissionCheckHandler = h),
    };
    let ready: string | null = null;
    hardenSession(hooks, { appOrigin: () => APP, readyOrigin: () => ready });
    assert.equal(installed.onBeforeRequest!(`${APP}/`), false);
    ready = APP;
    assert.equal(installed.onBeforeRequest!(`${APP}/`), true);
    assert.deepEqual(installed.onHeadersReceived!({}), { "Content-Security-Policy": [APP_CSP] });
    assert.equal(installed.setPermissionRequestHandler!("media", `${APP}/`), false);
    assert.equal(installed.setPermissionCheckHandler!("clipboard-sanitized-write", APP), true);
  });
});
