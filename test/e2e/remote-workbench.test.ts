/**
 * The workbench with a remote chat model, end to end: Debian's Chromium against the real
 * server, whose `svc-merlion-13b` is served by llama.cpp's llama-server on loopback (a local
 * embedder beside it). The analyst sees no difference: the model is listed with its replica's
 * health, a chat streams, a corpus question is answered with its sources, and Stop stops the
 * upstream's generation. Screenshots land in test-results/e2e-remote/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { CHROMIUM, CHROMIUM_ARGS, capAnswers, screenshotter } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const RENDERER = path.join(REPO_ROOT, "dist", "renderer");
const SHOTS = path.join(REPO_ROOT, "test-results", "e2e-remote");

describe("the workbench with a remote chat model", () => {
  let upstream: LlamaServer;
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  const shot = screenshotter(() => page, SHOTS);
  const busySlots = async () => ((await (await fetch(`${upstream.url.replace(/\/v1$/, "")}/slots`)).json()) as { is_processing: boolean }[]).filter((s) => s.is_processing).length;

  before(async () => {
    assert.ok(existsSync(path.join(RENDERER, "index.html")), `the workbench is not built: run \`npm run build\` (looked in ${RENDERER})`);
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}`);
    mkdirSync(SHOTS, { recursive: true });
    upstream = await startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 2 });
    t = await startTestServer({
      bindings: { e5: testModel("multilingual-e5-small") },
      rendererDir: RENDERER,
      config: { models: { remote: { "svc-merlion-13b": { upstreams: [{ url: upstream.url, model: "smol" }] } } }, upstreams: { healthIntervalSeconds: 1 }, rag: { chunkTargetTokens: 120 } },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    page = await context.newPage();
    page.on("pageerror", (error) => assert.fail(`page error: ${error.message}`));
    await page.goto((await t.server.signInLink())!);
    await page.getByRole("textbox", { name: /Message|Question/ }).waitFor();
    await capAnswers(page);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    await upstream?.stop();
  });

  it("lists the remote model with its replica's health on the Models page", async () => {
    await page.getByRole("link", { name: "Models" }).click();
    const row = page.locator("tr", { hasText: "svc-merlion-13b" }).first();
    await row.waitFor();
    await row.getByText(/healthy/i).first().waitFor({ timeout: 15_000 });
    assert.ok(((await row.textContent()) ?? "").includes("smol"), "the upstream model is named");
    await shot("01-models");
  });

  it("streams a chat answer from the upstream", { timeout: 120_000 }, async () => {
    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("textbox", { name: /Message|Question/ }).fill("Say hello to the team in one sentence.");
    await page.keyboard.press("Enter");
    const answer = page.locator("article.msg-assistant").first();
    await answer.waitFor();
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("article.msg-assistant").length > 0 && !(globalThis as any).document.querySelector('article[aria-busy="true"]'), null, { timeout: 90_000 });
    assert.ok(((await answer.textContent()) ?? "").trim().length > 0, "an answer appeared");
    await shot("02-chat");
  });

  it("answers a corpus question with its sources", { timeout: 240_000 }, async () => {
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "Banjir", embedding_model: "e5" })).json;
    const sent = await upload(t, corpus.id, [evalDoc("floods-pahang-2023-briefing.md"), evalDoc("banjir-kelantan-2022.md")]);
    assert.equal(sent.status, 202);
    await waitForStatus(t, corpus.id, 120_000);
    await page.reload();
    await page.getByRole("combobox", { name: "Corpus" }).selectOption({ label: "Banjir" });
    const before = await page.locator("article.msg-assistant").count();
    await page.getByRole("textbox", { name: /Question|Message/ }).fill("How long did Kuantan Port suspend vessel operations during the Pahang floods?");
    await page.keyboard.press("Enter");
    await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll("article.msg-assistant").length > n && !(globalThis as any).document.querySelector('article[aria-busy="true"]'), before, { timeout: 180_000 });
    const answer = page.locator("article.msg-assistant").nth(before);
    await shot("03-corpus-answer");
    assert.ok((await answer.locator(".source-chip").count()) > 0, `the answer lists its sources: ${await answer.textContent()}`);
  });

  it("stops the upstream's generation when the analyst presses Stop", { timeout: 120_000 }, async () => {
    await page.getByRole("combobox", { name: "Corpus" }).selectOption("");
    await page.getByRole("textbox", { name: /Message|Question/ }).fill("Write a very long story about a cat who sails to Langkawi.");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => {
      const last: any = [...(globalThis as any).document.querySelectorAll("article.msg-assistant")].at(-1);
      return last?.getAttribute("aria-busy") === "true" && (last.textContent ?? "").length > 20;
    }, null, { timeout: 60_000 });
    assert.ok((await busySlots()) > 0, "the upstream is generating");
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator("article.msg-assistant").last().getByText("Stopped").waitFor({ timeout: 10_000 });
    let busy = 1;
    for (let i = 0; i < 50 && busy > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      busy = await busySlots();
    }
    assert.equal(busy, 0, "stopping in the UI stops the generation upstream");
    await shot("04-stopped");
  });
});
