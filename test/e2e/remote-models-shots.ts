/**
 * Screenshots of the Models page's "Team servers" (remote models) in Debian's Chromium at
 * 1280×800, light and dark, against real servers: Pustaka with one remote model on a real
 * llama-server (healthy) and one whose replicas are closed ports (down); the add form with
 * a passing connection test, the model it adds, a refusal from the server (a host not on the
 * allow-list, a plain-HTTP host beyond loopback), the removal confirmation; and a second
 * Pustaka without remote models for the empty state.
 *
 *   npm run build:renderer && node --import tsx test/e2e/remote-models-shots.ts
 *
 * PNGs land in test-results/remote-models/. Not a test: it fails loudly when a step does
 * not find what it waits for, and says what it saved.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { freePort, startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const RENDERER = path.join(REPO_ROOT, "dist", "renderer");
const SHOTS = path.join(REPO_ROOT, "test-results", "remote-models");
const CHROMIUM = process.env.PUSTAKA_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const saved: string[] = [];

/** The current screen in light and in dark (the workbench follows the OS colour scheme). */
async function shot(page: Page, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    // Let transitions (badges, focus rings) settle in the new scheme.
    await page.waitForTimeout(150);
    const file = path.join(SHOTS, `${name}-${scheme}.png`);
    await page.screenshot({ path: file });
    saved.push(file);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

/** Scrolls the page's own scroller so that `target` starts near the top of the viewport. */
async function scrollTo(target: Locator, offset = 24): Promise<void> {
  // In the page (no DOM types in the tests' TypeScript project).
  await target.evaluate((el: any, off) => {
    el.scrollIntoView({ block: "start" });
    let scroller = el.parentElement;
    while (scroller && scroller.scrollHeight <= scroller.clientHeight) scroller = scroller.parentElement;
    scroller?.scrollBy(0, -off);
  }, offset);
}

async function openModels(browser: Browser, t: TestServer): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  const page = await context.newPage();
  page.on("pageerror", (error) => {
    throw new Error(`page error: ${error.message}`);
  });
  await page.goto((await t.server.signInLink())!);
  await page.getByRole("link", { name: "Models" }).click();
  await page.getByRole("heading", { name: "Models", level: 1 }).waitFor();
  return page;
}

async function main(): Promise<void> {
  assert.ok(existsSync(path.join(RENDERER, "index.html")), `the workbench is not built: run \`npm run build:renderer\` (looked in ${RENDERER})`);
  assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}`);
  mkdirSync(SHOTS, { recursive: true });

  let llama: LlamaServer | undefined;
  let t: TestServer | undefined;
  let empty: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    llama = await startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 2 });
    // Nothing listens on these: replicas that are down.
    const [closedA, closedB] = [await freePort(), await freePort()];
    t = await startTestServer({
      bindings: { "smollm2-local": testModel("smollm2-135m-instruct") },
      config: {
        // gpu1.example is allowed but only over https; anything else beyond loopback is refused.
        upstreams: { healthIntervalSeconds: 1, allowed: ["gpu1.example"] },
        models: {
          remote: {
            "team-chat": { upstreams: [{ name: "gpu1", url: llama.url, model: "smol", readApiKey: () => "sk-team-chat-never-shown" }] },
            "llama-70b": {
              upstreams: [
                { name: "gpu2", url: `http://127.0.0.1:${closedA}/v1`, model: "meta-llama/Llama-3.3-70B-Instruct" },
                { name: "gpu3-vllm-inference-cluster", url: `http://127.0.0.1:${closedB}/serving/openai-compatible/deployments/llama-3-3-70b-instruct/v1`, model: "meta-llama/Llama-3.3-70B-Instruct" },
              ],
            },
          },
        },
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await openModels(browser, t);
    const section = page.getByRole("region", { name: "Team servers" });
    await section.waitFor();
    // Health checks run every second: wait until both models have been checked.
    await section.getByText("Healthy", { exact: true }).waitFor({ timeout: 30_000 });
    await section.getByText("Down", { exact: true }).first().waitFor({ timeout: 30_000 });
    await section.getByText(/Last error/).first().waitFor({ timeout: 30_000 });
    await scrollTo(section.getByRole("heading", { name: "Team servers", exact: true }));
    await shot(page, "01-team-servers");

    // A connection test of the failing model, in place.
    await section.getByRole("button", { name: "Test connection to llama-70b" }).click();
    await section.getByText(/replicas did not answer/).waitFor({ timeout: 30_000 });
    await scrollTo(section.getByRole("heading", { name: "llama-70b", exact: true }), 80);
    await shot(page, "02-test-failing-model");

    // Add a team server: two replicas (the same llama-server twice), a key, a passing test.
    await section.getByRole("button", { name: "Add a team server" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a team server" });
    await dialog.getByLabel("Model id").fill("team-smol");
    await dialog.getByLabel("Server URL").fill(llama.url);
    await dialog.getByLabel("Upstream model, replica 1").fill("smol");
    await dialog.getByLabel("API key, replica 1").fill("sk-live-team-smol-0123456789");
    await dialog.getByRole("button", { name: "Add another replica" }).click();
    await dialog.getByLabel("Server URL, replica 2").fill(`${llama.url}#smol`);
    await dialog.getByRole("button", { name: "Test connection" }).click();
    await dialog.getByText("Every replica answered.").waitFor({ timeout: 30_000 });
    await shot(page, "03-add-form-tested");

    await dialog.getByRole("button", { name: "Add", exact: true }).click();
    await dialog.waitFor({ state: "hidden" });
    await section.getByText("team-smol was added and is being served.").waitFor();
    await section.getByRole("heading", { name: "team-smol", exact: true }).waitFor();
    await page.waitForFunction(() => [...(globalThis as any).document.querySelectorAll(".team-card")].some((c: any) => c.textContent.includes("team-smol") && c.textContent.includes("2 of 2 healthy")), null, { timeout: 30_000 });
    await scrollTo(section.getByRole("heading", { name: "team-chat", exact: true }), 60);
    await shot(page, "04-added-here");

    // The server refuses: a host not on the allow-list, then plain HTTP beyond loopback.
    await section.getByRole("button", { name: "Add a team server" }).click();
    await dialog.getByLabel("Model id").fill("cluster-embed");
    await dialog.getByRole("radio", { name: "Embedding" }).check();
    await dialog.getByLabel("Server URL").fill("https://inference.research-cluster.internal.example.org:8443/openai/v1");
    await dialog.getByLabel("Upstream model, replica 1").fill("BAAI/bge-m3");
    await dialog.getByRole("button", { name: "Add", exact: true }).click();
    await dialog.getByText(/not an allowed upstream/).waitFor();
    await shot(page, "05-add-form-not-allowed");
    await dialog.getByLabel("Server URL").fill("http://gpu1.example:8000/v1");
    await dialog.getByRole("button", { name: "Test connection" }).click();
    await dialog.getByText(/plain HTTP/).first().waitFor();
    await shot(page, "06-add-form-insecure");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });

    // Remove asks first.
    await section.getByRole("button", { name: "Remove team-smol" }).click();
    await page.getByRole("alertdialog", { name: "Remove the team server “team-smol”?" }).waitFor();
    await shot(page, "07-remove-confirm");
    await page.getByRole("button", { name: "Remove", exact: true }).click();
    await section.getByText("team-smol was removed.").waitFor();

    // Malay.
    await page.getByRole("radio", { name: "Bahasa Melayu" }).click();
    const bahagian = page.getByRole("region", { name: "Pelayan pasukan" });
    await bahagian.waitFor();
    await scrollTo(bahagian.getByRole("heading", { name: "Pelayan pasukan", exact: true }));
    await shot(page, "08-team-servers-ms");
    await page.context().close();

    // A server without remote models: the empty state.
    empty = await startTestServer({ bindings: { "smollm2-local": testModel("smollm2-135m-instruct") } });
    const fresh = await openModels(browser, empty);
    const none = fresh.getByRole("region", { name: "Team servers" });
    await none.getByText("No team servers yet").waitFor();
    await scrollTo(none.getByRole("heading", { name: "Team servers", exact: true }));
    await shot(fresh, "09-empty");
  } finally {
    await browser?.close();
    await t?.close();
    await empty?.close();
    await llama?.stop();
  }
  process.stdout.write(`saved ${saved.length} screenshots:\n${saved.map((f) => `  ${path.relative(REPO_ROOT, f)}`).join("\n")}\n`);
}

await main();
