import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { splashPage, statusPage } from "./splash-page.js";

const html = (url: string) => decodeURIComponent(url.slice(url.indexOf(",") + 1));

describe("splashPage", () => {
  it("is a script-free data: page with a locked-down CSP", () => {
    const url = splashPage({ title: "Pustaka", message: "Starting the local server…" });
    assert.ok(url.startsWith("data:text/html;charset=utf-8,"));
    const page = html(url);
    assert.match(page, /Content-Security-Policy" content="default-src 'none'/);
    assert.ok(!/<script/i.test(page));
    assert.match(page, /Starting the local server…/);
  });

  it("escapes the text it shows (error messages can contain anything)", () => {
    const page = html(splashPage({ title: "Failed", message: "x", detail: `<img src=x onerror="alert(1)"> & 'quotes'` }));
    assert.ok(!page.includes("<img"));
    assert.match(page, /&#60;img src=x onerror=&#34;alert\(1\)&#34;&#62; &#38; &#39;quotes&#39;/);
  });
});

describe("statusPage", () => {
  it("says what the server is doing, and why it failed", () => {
    assert.match(html(statusPage({ phase: "starting", url: null, error: null })), /Starting the local server/);
    assert.match(html(statusPage({ phase: "restarting", url: null, error: "GGML_ASSERT failed" })), /Restarting[\s\S]*GGML_ASSERT failed/);
    const failed = html(statusPage({ phase: "failed", url: null, error: "models folder unreadable" }));
    assert.match(failed, /could not start[\s\S]*Settings…[\s\S]*models folder unreadable/);
    assert.match(html(statusPage({ phase: "ready", url: "http://127.0.0.1:7780", error: null })), /not built[\s\S]*http:\/\/127\.0\.0\.1:7780\/v1[\s\S]*npm run build:renderer/);
  });
});
