/**
 * The workbench in Debian's Chromium (playwright-core): where the browser is, its flags, and
 * what the end-to-end tests share.
 */
import path from "node:path";
import type { Page } from "playwright-core";

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

/** The current screen in light and in dark (the workbench follows the OS colour scheme), as `<name>-light.png` and `<name>-dark.png`. */
export function screenshotter(page: () => Page, dir: string): (name: string) => Promise<void> {
  return async (name) => {
    const p = page();
    await p.screenshot({ path: path.join(dir, `${name}-light.png`) });
    await p.emulateMedia({ colorScheme: "dark" });
    await p.screenshot({ path: path.join(dir, `${name}-dark.png`) });
    await p.emulateMedia({ colorScheme: "light" });
  };
}
