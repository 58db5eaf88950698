/**
 * The workbench in Debian's Chromium (playwright-core): where the browser is, its flags, and
 * what the end-to-end tests share.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { REPO_ROOT } from "./models.js";

export const CHROMIUM = process.env.PUSTAKA_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

/**
 * Caps every answer the page asks for at `maxTokens` (the 135M test model can run on until its
 * context is full), except prompts that ask for a "long story" (the Stop tests need one).
 */
export async function capAnswers(page: Page, maxTokens = 48): Promise<void> {
  await page.route("**/v1/**", async (route) => {
    const request = route.request();
    if (request.method() === "POST" && /\/(query|chat\/completions)$/.test(request.url()) && !request.postData()?.includes("long story")) {
      await route.continue({ postData: JSON.stringify({ ...JSON.parse(request.postData() ?? "{}"), max_tokens: maxTokens }) });
      return;
    }
    await route.continue();
  });
}

/** Where the documentation's screenshots live; `npm run docs:images` (an end-to-end run) writes them, so they show the workbench as it is. */
export const DOC_IMAGES = path.join(REPO_ROOT, "docs", "images");
/** Only a run asked to (`PUSTAKA_DOC_IMAGES=1`) replaces them: a test run leaves the tree as it found it. */
const WRITE_DOC_IMAGES = process.env.PUSTAKA_DOC_IMAGES === "1";

/** A screenshot the documentation shows: its file name in docs/images (without `-light.png`), and whether the dark one is shown too. */
export interface DocShot {
  name: string;
  dark?: boolean;
}

/**
 * The current screen in light and in dark (the workbench follows the OS colour scheme), as
 * `<name>-light.png` and `<name>-dark.png` in `dir`; with PUSTAKA_DOC_IMAGES=1 a screen listed
 * in `docShots` is also copied to docs/images under its documentation name (`<name>-light.png`, and `-dark.png`
 * when the documentation shows both).
 */
export function screenshotter(page: () => Page, dir: string, docShots: Record<string, DocShot> = {}): (name: string) => Promise<void> {
  return async (name) => {
    const p = page();
    const light = path.join(dir, `${name}-light.png`);
    const dark = path.join(dir, `${name}-dark.png`);
    await p.screenshot({ path: light });
    await p.emulateMedia({ colorScheme: "dark" });
    await p.screenshot({ path: dark });
    await p.emulateMedia({ colorScheme: "light" });
    const shown = docShots[name];
    if (!shown || !WRITE_DOC_IMAGES) return;
    mkdirSync(DOC_IMAGES, { recursive: true });
    copyFileSync(light, path.join(DOC_IMAGES, `${shown.name}-light.png`));
    if (shown.dark) copyFileSync(dark, path.join(DOC_IMAGES, `${shown.name}-dark.png`));
  };
}
