import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, it } from "node:test";
import { guardWebContents, isAppUrl, navigationDecision, type GuardableContents } from "./navigation-guard.js";

const APP = "http://127.0.0.1:7780";

const HOSTILE = [
  "javascript:alert(document.cookie)",
  "JaVaScRiPt:alert(1)",
  "file:///etc/passwd",
  "file://127.0.0.1:7780/etc/passwd",
  "data:text/html,<script>alert(1)</script>",
  "blob:http://127.0.0.1:7780/0f3c",
  "vbscript:msgbox",
  "chrome://settings",
  "devtools://devtools/bundled/inspector.html",
  "smb://attacker/share",
  "ms-msdt:/id PCWDiagnostic",
  "pustaka://settings",
  "about:blank",
  "not a url",
  "",
];

describe("navigation policy", () => {
  it("allows the app's own origin, paths and fragments included", () => {
    for (const url of [`${APP}/`, `${APP}/corpora/corp_1?x=1`, `${APP}/#signin=abc`]) assert.equal(navigationDecision(url, APP), "allow", url);
  });

  it("does not mistake look-alike origins for the app", () => {
    for (const url of [
      "http://127.0.0.1:7781/",
      "https://127.0.0.1:7780/",
      "http://localhost:7780/",
      "http://127.0.0.1.attacker.example:7780/",
      "http://attacker.example/?http://127.0.0.1:7780",
      "http://127.0.0.1:7780@attacker.example/",
    ])
      assert.notEqual(navigationDecision(url, APP), "allow", url);
  });

  it("opens only http(s) links elsewhere in the system browser", () => {
    assert.equal(navigationDecision("https://huggingface.co/aisingapore", APP), "open-external");
    assert.equal(navigationDecision("http://example.org/report.pdf", APP), "open-external");
    assert.equal(navigationDecision("https://user:secret@example.org/", APP), "deny", "no credentials handed to the browser");
  });

  it("refuses every other scheme outright", () => {
    for (const url of HOSTILE) assert.equal(navigationDecision(url, APP), "deny", url);
  });

  it("allows nothing before the server has an origin", () => {
    assert.equal(isAppUrl(`${APP}/`, null), false);
    assert.equal(navigationDecision(`${APP}/`, null), "open-external");
  });
});

class FakeContents extends EventEmitter implements GuardableContents {
  openHandler: Parameters<GuardableContents["setWindowOpenHandler"]>[0] | null = null;
  setWindowOpenHandler(handler: Parameters<GuardableContents["setWindowOpenHandler"]>[0]): void {
    this.openHandler = handler;
  }
  /** Emits a preventable event; resolves whether it was prevented. */
  fire(name: string, url: string): boolean {
    let prevented = false;
    this.emit(name, { url, preventDefault: () => (prevented = true) });
    return prevented;
  }
}

function guarded() {
  const contents = new FakeContents();
  const opened: string[] = [];
  guardWebContents(contents, { appOrigin: () => APP, openExternal: (url) => void opened.push(url) });
  return { contents, opened };
}

describe("guardWebContents", () => {
  it("will-navigate: stays in the app, sends web links to the browser, blocks the rest", () => {
    const { contents, opened } = guarded();
    assert.equal(contents.fire("will-navigate", `${APP}/chat`), false);
    assert.equal(contents.fire("will-navigate", "https://example.org/"), true);
    for (const url of HOSTILE) assert.equal(contents.fire("will-navigate", url), true, url);
    assert.deepEqual(opened, ["https://example.org/"]);
  });

  it("will-redirect: only to the app, and a redirect never opens the browser", () => {
    const { contents, opened } = guarded();
    assert.equal(contents.fire("will-redirect", `${APP}/login`), false);
    assert.equal(contents.fire("will-redirect", "https://example.org/"), true);
    assert.equal(contents.fire("will-redirect", "file:///etc/passwd"), true);
    assert.deepEqual(opened, []);
  });

  it("window.open: same-origin pop-ups are hardened and get no preload; others are denied", () => {
    const { contents, opened } = guarded();
    const same = contents.openHandler!({ url: `${APP}/documents/doc_1` });
    assert.equal(same.action, "allow");
    if (same.action === "allow") {
      const prefs = same.overrideBrowserWindowOptions.webPreferences!;
      assert.equal(prefs.sandbox, true);
      assert.equal(prefs.contextIsolation, true);
      assert.equal(prefs.nodeIntegration, false);
      assert.equal(prefs.preload, undefined);
    }
    assert.deepEqual(contents.openHandler!({ url: "https://example.org/" }), { action: "deny" });
    for (const url of HOSTILE) assert.deepEqual(contents.openHandler!({ url }), { action: "deny" }, url);
    assert.deepEqual(opened, ["https://example.org/"]);
  });

  it("refuses to attach webviews", () => {
    const { contents } = guarded();
    let prevented = false;
    contents.emit("will-attach-webview", { preventDefault: () => (prevented = true) });
    assert.equal(prevented, true);
  });
});
