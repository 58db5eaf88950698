/**
 * The API reference page (`GET /docs`) in a real browser: Debian's Chromium driven by
 * playwright-core against the real server as `npm start` runs it. `/docs` sends a browser to
 * `/v1/docs`, where its session cookie goes: refused there with a page that says how to sign
 * in; after the workbench's sign-in link, opened by navigation with the session. Nothing is fetched from anywhere, nothing breaks the page's CSP; landmarks,
 * headings in order, a skip link and every contents link work by keyboard. Screenshots in
 * light and dark land in test-results/e2e/ and docs/images/ (docs/api.md shows them).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT, tinyModel } from "../helpers/models.js";
import { CHROMIUM, CHROMIUM_ARGS, screenshotter } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const SHOTS = path.join(REPO_ROOT, "test-results", "e2e");
/** The operation docs/api.md shows: one with a path parameter, a request body with nested fields, and a scope. */
const SHOWN = "#op-postv1ragcorporacorpusidquery";

describe("the API reference page in Chromium", () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const complaints: string[] = [];
  const shot = screenshotter(() => page, SHOTS, { "api-docs": { name: "api-reference", dark: true } });

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: \`apt-get install -y chromium\` (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    page = await context.newPage();
    page.on("request", (request) => requested.push(request.url()));
    // A CSP violation, a failed load or a script error shows here.
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") complaints.push(message.text());
    });
    page.on("pageerror", (error) => complaints.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it("refuses a browser that is not signed in with a page that says how to get in", async () => {
    const response = await page.goto(`${t.url}/docs`);
    assert.equal(page.url(), `${t.url}/v1/docs`);
    assert.equal(response?.status(), 401);
    assert.match(response?.headers()["content-type"] ?? "", /^text\/html/);
    assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "The API reference needs you signed in");
    assert.match((await page.locator("main").textContent()) ?? "", /sign-in link/);
  });

  it("opens for the workbench's session, by navigation, fetching nothing from anywhere", async () => {
    await page.goto((await t.server.signInLink())!);
    await page.getByRole("textbox", { name: /Message|Question/ }).waitFor();
    requested.length = 0;
    complaints.length = 0;
    const response = await page.goto(`${t.url}/docs`);
    assert.equal(response?.status(), 200);
    assert.equal(page.url(), `${t.url}/v1/docs`);
    assert.equal(await page.title(), "Pustaka API reference");
    assert.deepEqual(requested, [`${t.url}/docs`, `${t.url}/v1/docs`], "the page loads nothing but itself");
    assert.deepEqual(complaints, [], "no CSP violation or error");
    // Its style sheet applied (allowed by its hash): the contents sit beside the reference.
    const [toc, main] = await Promise.all([page.locator("nav.toc").boundingBox(), page.locator("main").boundingBox()]);
    assert.ok(toc && main && toc.x + toc.width <= main.x + 1, `contents beside the reference: ${JSON.stringify({ toc, main })}`);
  });

  it("lists every operation of the OpenAPI document, under landmarks and headings in order", async () => {
    const document = (await t.call("GET", "/v1/openapi.json")).json;
    const operations = Object.values<Record<string, unknown>>(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    assert.equal(await page.locator("article.op").count(), operations);
    assert.equal(await page.getByRole("navigation", { name: "Contents" }).count(), 1);
    assert.equal(await page.getByRole("main").count(), 1);
    assert.equal(await page.getByRole("banner").count(), 1);
    const levels = await page.locator("h1, h2, h3, h4, h5, h6").evaluateAll((hs) => hs.map((h) => Number(h.tagName[1])));
    assert.equal(levels[0], 1);
    assert.equal(levels.filter((l) => l === 1).length, 1, "one h1");
    levels.forEach((level, i) => assert.ok(i === 0 || level <= levels[i - 1]! + 1, `heading ${i} jumps from h${levels[i - 1]} to h${level}`));
    // Every contents link leads to a heading of the page.
    const targets = await page.locator("nav.toc a").evaluateAll((as) => as.map((a) => (a as unknown as { hash: string }).hash));
    assert.equal(targets.length, operations + new Set(Object.values<Record<string, { tags: string[] }>>(document.paths).flatMap((item) => Object.values(item).map((op) => op.tags[0]))).size + 1);
    for (const hash of targets) assert.equal(await page.locator(`${hash}`).count(), 1, `${hash} exists`);
  });

  it("works by keyboard: the skip link, then a contents link, each taking the focus where it points", async () => {
    await page.goto(`${t.url}/docs`);
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), "Skip to the reference");
    await page.keyboard.press("Enter");
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), "main");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.closest("main") !== null), true, "the next stop is inside the reference");
    const link = page.locator(`nav.toc a[href="${SHOWN}"]`);
    await link.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`${SHOWN}$`));
    const heading = page.locator(SHOWN);
    assert.match((await heading.textContent()) ?? "", /^POST \/v1\/rag\/corpora\/\{corpusId\}\/query/);
    assert.equal(await heading.isVisible(), true);
    const top = (await heading.boundingBox())!.y;
    assert.ok(top >= 0 && top < 100, `the operation is scrolled to the top (y = ${top})`);
    assert.match((await page.locator(`article[aria-labelledby="${SHOWN.slice(1)}"]`).textContent()) ?? "", /rag\.read[\s\S]*question[\s\S]*top_k/);
    await shot("api-docs");
    assert.deepEqual(complaints, []);
  });
});
