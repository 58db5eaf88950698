/**
 * The workbench end to end in a real browser: Debian's Chromium driven by playwright-core
 * against the real server (built UI, real small models, fresh data directory). Sign in,
 * build a corpus from every format, ask in English and in Malay, open a PDF citation at
 * its page, stop a generation, create and revoke a key; a page of another origin cannot
 * use the session. Assertions are on the DOM; screenshots land in test-results/e2e/, and the
 * ones the user guide shows are copied to docs/images/ (DOC_SHOTS).
 * Also prints the figures the closing note records: start-to-interactive time and the
 * delay between an answer chunk reaching the page and its text on screen.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { CHROMIUM, CHROMIUM_ARGS, capAnswers, screenshotter, type DocShot } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const RENDERER = path.join(REPO_ROOT, "dist", "renderer");
const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "documents");
const NOTICE = path.join(REPO_ROOT, "test", "fixtures", "ocr", "notis-air-klang.png");
const SHOTS = path.join(REPO_ROOT, "test-results", "e2e");
/** The screens docs/user-guide.md (and the README) show, by the names they use there. */
const DOC_SHOTS: Record<string, DocShot> = {
  "02-uploading": { name: "corpus-uploading" },
  "03-corpus-ready": { name: "corpus-documents", dark: true },
  "03b-failed-documents": { name: "corpus-failed" },
  "03c-search-settings": { name: "search-settings" },
  "04-answers": { name: "workbench-chat", dark: true },
  "05-pdf-citation": { name: "citation-pdf", dark: true },
  "05a-create-corpus-ocr": { name: "corpus-create" },
  "05b-ocr-document": { name: "ocr-details" },
  "05c-ocr-citation": { name: "citation-ocr" },
  "08-keys": { name: "keys" },
};

/** Records, in the page, when answer chunks arrive and when answer text changes on screen. */
const TIMING_PROBE = `
  window.__arrivals = [];
  window.__paints = [];
  const nativeFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const res = await nativeFetch(input, init);
    const url = String(input instanceof Request ? input.url : input);
    if (!/\\/(query|chat\\/completions)$/.test(url) || !res.body) return res;
    const [mine, theirs] = res.body.tee();
    (async () => {
      const reader = mine.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (new TextDecoder().decode(value).includes("delta")) window.__arrivals.push(performance.now());
      }
    })().catch(() => undefined); // a stopped answer aborts this copy of the stream too
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  new MutationObserver(() => {
    const last = [...document.querySelectorAll("article.msg-assistant")].at(-1);
    const length = last ? last.textContent.length : 0;
    if (length !== window.__lastLength) {
      window.__lastLength = length;
      window.__paints.push(performance.now());
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

describe("the workbench in Chromium", () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let startToInteractiveMs = 0;
  const tokenDelays: number[] = [];
  const shot = screenshotter(() => page, SHOTS, DOC_SHOTS);

  before(async () => {
    assert.ok(existsSync(path.join(RENDERER, "index.html")), `the workbench is not built: run \`npm run build\` (looked in ${RENDERER})`);
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: \`apt-get install -y chromium\` (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    const started = performance.now();
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), e5: testModel("multilingual-e5-small") },
      rendererDir: RENDERER,
      config: { chat: { contextSize: 2048, sequences: 2 }, rag: { chunkTargetTokens: 120 } },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    await context.addInitScript(TIMING_PROBE);
    page = await context.newPage();
    page.on("pageerror", (error) => assert.fail(`page error: ${error.message}`));
    await page.goto((await t.server.signInLink())!);
    await page.getByRole("textbox", { name: /Message|Question/ }).waitFor();
    startToInteractiveMs = performance.now() - started;
    await capAnswers(page);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    process.stdout.write(`[e2e] server start to interactive page: ${Math.round(startToInteractiveMs)} ms\n`);
    if (tokenDelays.length > 0) {
      process.stdout.write(`[e2e] answer chunk reaching the page to its text on screen: median ${median(tokenDelays).toFixed(1)} ms over ${tokenDelays.length} chunks\n`);
    }
  });

  it("signs in through the link, and the link's token leaves the address bar", async () => {
    assert.doesNotMatch(page.url(), /signin=/);
    await shot("01-chat-empty");
    assert.equal(await page.getByText("workbench session").count(), 1);
  });

  it("creates a corpus, uploads every format plus an unsupported file, and shows each file reach its state", { timeout: 300_000 }, async () => {
    await page.getByRole("link", { name: "Corpora" }).click();
    await page.getByRole("button", { name: "New corpus" }).first().click();
    await page.getByLabel("Name", { exact: true }).fill("Laporan");
    await page.getByRole("button", { name: "Create corpus" }).click();
    await page.waitForURL(/#\/corpora\/corp_/);
    const files = ["report.pdf", "report.docx", "page.html", "guide.md", "laporan-ms.txt", "program-named.txt"].map((f) => path.join(FIXTURES, f));
    await page.getByTestId("file-input").setInputFiles(files);
    const uploads = page.locator(".upload-row");
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll(".upload-row").length === 6);
    await shot("02-uploading");
    const rejected = uploads.filter({ hasText: "program-named.txt" });
    await rejected.getByText("Rejected").waitFor();
    assert.match((await rejected.textContent()) ?? "", /type|jenis/i, "the rejection says why");
    await page.waitForFunction(() => [...(globalThis as any).document.querySelectorAll(".upload-row")].filter((r: any) => /Indexed/.test(r.textContent ?? "")).length === 5, null, { timeout: 240_000 });
    await page.getByText("Ready", { exact: true }).first().waitFor();
    // The table is fetched again after each document's last event: wait for the fetch that follows the PDF's.
    await page.waitForFunction(() => /report\.pdf\s*3/.test((globalThis as any).document.querySelector("table")?.textContent ?? ""), null, { timeout: 30_000 });
    const table = page.locator("table");
    assert.match((await table.textContent()) ?? "", /report\.pdf\s*3/, "the documents table shows the PDF's pages");
    await shot("03-corpus-ready");
  });

  it("does not let a document that failed to index hide behind 'Ready'", { timeout: 120_000 }, async () => {
    // A PDF by its signature whose body pdf.js cannot read: accepted, then failed while parsing.
    await page.getByTestId("file-input").setInputFiles({ name: "rosak.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without a cross-reference table\n") });
    const failedBadge = page.getByRole("button", { name: "1 failed" });
    await failedBadge.waitFor({ timeout: 90_000 });
    assert.equal(await page.getByText("Ready", { exact: true }).first().isVisible(), true, "the corpus stays ready: the other documents answer");
    await failedBadge.click();
    assert.equal(await page.getByRole("button", { name: "Failed (1)" }).getAttribute("aria-pressed"), "true");
    await page.locator("table").getByText("rosak.pdf").waitFor();
    assert.equal(await page.locator("table").getByText("report.pdf").count(), 0, "only the failed document is listed");
    await shot("03b-failed-documents");
    await page.getByRole("button", { name: /^All \(/ }).click();
    await page.locator("table").getByText("report.pdf").waitFor();
  });

  it("sets the corpus's search settings from its page, by keyboard, and puts them back", { timeout: 60_000 }, async () => {
    const facts = page.locator(".page-sub");
    assert.match((await facts.textContent()) ?? "", /search: server default/);
    await page.getByRole("button", { name: "Search settings" }).click();
    const dialog = page.getByRole("dialog", { name: "Search settings" });
    await dialog.getByRole("radio", { name: /Hybrid/ }).check();
    await dialog.getByLabel("How much to trust the words of each question").selectOption("language");
    await dialog.getByLabel("Weight of meaning against words").focus();
    // From the server's 0.5, ten steps of 0.01 up.
    for (let i = 0; i < 10; i++) await page.keyboard.press("ArrowRight");
    assert.equal(await dialog.locator("output").textContent(), "0.60");
    await shot("03c-search-settings");
    await dialog.getByRole("button", { name: "Save settings" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByText(/search: Hybrid · meaning 0\.6 · By language only/).waitFor();
    // The API sees what the page set.
    const corpusId = /#\/corpora\/(corp_[A-Za-z0-9_-]+)/.exec(page.url())![1]!;
    assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.search_defaults, { search: "hybrid", fusion: { vector_weight: 0.6, keyword_trust: "language" } });
    await page.getByRole("button", { name: "Search settings" }).click();
    await dialog.getByRole("radio", { name: /Server default/ }).check();
    await dialog.getByRole("button", { name: "Save settings" }).click();
    await page.getByText(/search: server default/).waitFor();
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.search_defaults, null);
  });

  it("answers an English and a Malay question with streamed text and citations", { timeout: 300_000 }, async () => {
    await page.getByRole("button", { name: "Ask this corpus" }).click();
    await page.waitForURL(/#\/chat/);
    for (const question of ["What revenue did the northern region earn?", "Berapakah hasil tangkapan koperasi nelayan?"]) {
      const before = await page.locator("article.msg-assistant").count();
      await page.evaluate(() => {
        (globalThis as any).__arrivals = [];
        (globalThis as any).__paints = [];
      });
      await page.getByRole("textbox", { name: /Question|Message/ }).fill(question);
      await page.keyboard.press("Enter");
      const answer = page.locator("article.msg-assistant").nth(before);
      await answer.waitFor();
      await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll("article.msg-assistant").length > n && !(globalThis as any).document.querySelector('article[aria-busy="true"]'), before, { timeout: 240_000 });
      assert.ok(((await answer.textContent()) ?? "").trim().length > 0, "an answer appeared");
      assert.ok((await answer.locator(".source-chip").count()) > 0, "the answer lists its sources");
      const { arrivals, paints } = await page.evaluate(() => ({ arrivals: (globalThis as any).__arrivals as number[], paints: (globalThis as any).__paints as number[] }));
      assert.ok(arrivals.length > 1, "the answer arrived in several chunks (streamed)");
      for (const at of arrivals) {
        const painted = paints.find((p) => p >= at);
        if (painted !== undefined) tokenDelays.push(painted - at);
      }
    }
    await shot("04-answers");
  });

  it("opens a PDF citation rendered at the page the passage is on", { timeout: 120_000 }, async () => {
    await page.getByRole("textbox", { name: /Question|Message/ }).fill("Regional revenue by region: North, South, East");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('article[aria-busy="true"]') && (globalThis as any).document.querySelectorAll("article.msg-assistant").length >= 3, null, { timeout: 120_000 });
    const chip = page.locator("article.msg-assistant").last().locator(".source-chip", { hasText: "report.pdf" }).first();
    await chip.waitFor();
    const pageLabel = (await chip.locator(".source-page").textContent()) ?? "";
    const first = Number(/(\d+)/.exec(pageLabel)?.[1]);
    assert.ok(first >= 1, `the chip names its page: ${pageLabel}`);
    await chip.click();
    const rendered = page.getByRole("img", { name: `Page ${first}` });
    await rendered.waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => (globalThis as any).document.querySelector(".pdf-page canvas") !== null);
    await page.locator(".pdf-page .passage-hl").first().waitFor({ timeout: 10_000 });
    assert.ok((await rendered.locator(".passage-hl").count()) > 0, "the passage is highlighted on the cited page");
    await shot("05-pdf-citation");
    await page.keyboard.press("Escape");
  });

  it("reads a scanned notice by OCR, shows it in the documents, and opens its citation with OCR's word boxes over the page image", { timeout: 400_000 }, async () => {
    // The notice as a scan: an image-only PDF (img2pdf wraps the PNG without a text layer).
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-e2e-scan-"));
    const scan = path.join(dir, "notis-air-klang.pdf");
    execFileSync("img2pdf", [NOTICE, "-o", scan]);
    try {
      // A corpus of its own, created with the OCR languages the dialog offers (English and Malay by default).
      await page.getByRole("link", { name: "Corpora" }).click();
      await page.getByRole("button", { name: "New corpus" }).first().click();
      const languages = page.getByRole("group", { name: "Languages of scanned pages (OCR)" });
      assert.equal(await languages.getByRole("checkbox", { name: /English/ }).isChecked({ timeout: 10_000 }), true);
      assert.equal(await languages.getByRole("checkbox", { name: /Bahasa Melayu/ }).isChecked(), true);
      await page.getByLabel("Name", { exact: true }).fill("Notis");
      await shot("05a-create-corpus-ocr");
      await page.getByRole("button", { name: "Create corpus" }).click();
      await page.waitForURL(/#\/corpora\/corp_/);
      const corpusId = /#\/corpora\/(corp_[A-Za-z0-9_-]+)/.exec(page.url())![1]!;
      assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.ocr_languages, ["eng", "msa"]);
      assert.match((await page.locator(".dropzone").textContent()) ?? "", /Scans and images\s*PNG · JPG · TIFF — scanned PDFs too; read by OCR in English \+ Bahasa Melayu/);
      // The notice, and a document about something else (a corpus of one passage gives the relevance gate nothing to compare).
      await page.getByTestId("file-input").setInputFiles([scan, path.join(FIXTURES, "guide.md")]);
      await page.locator(".upload-row", { hasText: "notis-air-klang.pdf" }).getByText("Indexed").waitFor({ timeout: 240_000 });
      const table = page.locator("table.documents-table");
      const chip = table.locator("tr", { hasText: "notis-air-klang.pdf" }).getByRole("button", { name: /notis-air-klang\.pdf was read by OCR: 1 page, mean confidence \d+%/ });
      await chip.waitFor({ timeout: 30_000 });
      assert.match((await chip.textContent()) ?? "", /^OCR · 1 page · \d+%/);
      await chip.click();
      const details = page.getByRole("dialog", { name: "OCR of notis-air-klang.pdf" });
      assert.match((await details.getByRole("row").nth(1).textContent()) ?? "", /^1No text layer\d+%\d+/);
      await shot("05b-ocr-document");
      await page.keyboard.press("Escape");
      await page.getByText("Ready", { exact: true }).first().waitFor({ timeout: 120_000 });

      await page.getByRole("button", { name: "Ask this corpus" }).click();
      await page.waitForURL(/#\/chat/);
      // The 135M test model's answer may rest on the other document alone (its sources list then
      // names only that one): the question is asked again, at most three times.
      let source = null;
      for (let attempt = 0; attempt < 3 && !source; attempt++) {
        const before = await page.locator("article.msg-assistant").count();
        await page.getByRole("textbox", { name: /Question|Message/ }).fill("Bilakah bekalan air di Klang akan terganggu?");
        await page.keyboard.press("Enter");
        await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll("article.msg-assistant").length > n && !(globalThis as any).document.querySelector('article[aria-busy="true"]'), before, { timeout: 240_000 });
        const chipOf = page.locator("article.msg-assistant").nth(before).locator(".source-chip", { hasText: "notis-air-klang.pdf" }).first();
        if ((await chipOf.count()) > 0) source = chipOf;
      }
      assert.ok(source, "the scanned notice is among the sources of an answer");
      await source.click();
      const panel = page.getByRole("complementary");
      assert.match((await panel.getByRole("note").textContent()) ?? "", /Text read by OCR from page 1 · confidence \d+%/);
      const pageView = panel.getByRole("img", { name: "Page 1 (scanned, read by OCR)" });
      await pageView.locator(".ocr-hl").first().waitFor({ timeout: 60_000 });
      // The page and each box as the browser lays them out (no named helpers inside: the page runs this as is).
      const [frame, ...boxes] = await pageView.evaluate((el: any) => [el, ...el.querySelectorAll(".ocr-hl")].map((e: any) => e.getBoundingClientRect().toJSON()));
      assert.ok(boxes.length > 0, "the cited words are marked on the page image");
      for (const b of boxes) {
        assert.ok(b.width > 0 && b.height > 0, `a box has a size: ${JSON.stringify(b)}`);
        assert.ok(b.left >= frame.left - 0.5 && b.right <= frame.right + 0.5 && b.top >= frame.top - 0.5 && b.bottom <= frame.bottom + 0.5, `a box lies on the page: ${JSON.stringify(b)} in ${JSON.stringify(frame)}`);
      }
      // The notice's text fills the top of the page; its lower half is blank, and no box is there.
      assert.ok(boxes.every((b: any) => b.bottom < frame.top + frame.height * 0.6), "the boxes cover the notice's text, not its blank lower half");
      assert.match((await panel.getByRole("region", { name: "The cited text, as OCR read it" }).textContent()) ?? "", /Bekalan air di Klang akan terganggu/);
      await shot("05c-ocr-citation");
      await page.keyboard.press("Escape");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops a generation when asked, and keeps the partial answer marked as stopped", { timeout: 120_000 }, async () => {
    await page.getByRole("combobox", { name: "Corpus" }).selectOption("");
    await page.getByRole("textbox", { name: /Message|Question/ }).fill("Write a long story about a cat who sails to Langkawi.");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => {
      const last: any = [...(globalThis as any).document.querySelectorAll("article.msg-assistant")].at(-1);
      return last?.getAttribute("aria-busy") === "true" && (last.textContent ?? "").length > 20;
    }, null, { timeout: 60_000 });
    await page.getByRole("button", { name: "Stop" }).click();
    const last = page.locator("article.msg-assistant").last();
    await last.getByText("Stopped").waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('article[aria-busy="true"]').count(), 0);
    await shot("06-stopped");
    // The server freed the generation: soon no model holds a lease for the stopped answer.
    let leases = 1;
    for (let i = 0; i < 50 && leases > 0; i++) {
      const health = (await t.call("GET", "/healthz", undefined, null)).json;
      leases = health.engine.loadedModels.reduce((n: number, m: any) => n + m.activeLeases, 0);
      if (leases > 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(leases, 0, "stopping in the UI stops the generation on the server");
  });

  it("creates a key whose secret is shown once, and revokes it", { timeout: 60_000 }, async () => {
    await page.getByRole("link", { name: "Keys & connection" }).click();
    await page.getByRole("button", { name: "New key" }).first().click();
    await page.getByLabel("Name", { exact: true }).fill("Notebook");
    await page.getByRole("button", { name: "Create key" }).click();
    const secretField = page.getByLabel("The new API key");
    await secretField.waitFor();
    const secret = ((await secretField.textContent()) ?? "").trim();
    assert.match(secret, /^psk-[0-9A-Za-z]{43}$/);
    assert.equal((await t.call("GET", "/v1/me", undefined, secret)).status, 200, "the new key works");
    await shot("07-key-secret");
    await page.getByRole("button", { name: "I have copied it" }).click();
    assert.equal(await page.getByText(secret).count(), 0, "the secret is not shown again");
    await page.getByRole("button", { name: "Revoke Notebook" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Revoke" }).click();
    await page.locator("tr", { hasText: "Notebook" }).getByText("Revoked").waitFor();
    assert.equal((await t.call("GET", "/v1/me", undefined, secret)).status, 401, "the revoked key stops working");
    await shot("08-keys");
  });

  it("does not let a page of another origin use the session", async () => {
    const evil = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>elsewhere</title>"));
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    try {
      const other = await page.context().newPage();
      await other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const outcome = await other.evaluate(async (api) => {
        const tries: string[] = [];
        for (const headers of [{}, { "x-pustaka-csrf": "1" }] as Record<string, string>[]) {
          try {
            const res = await fetch(`${api}/v1/me`, { credentials: "include", headers });
            tries.push(`status ${res.status}`);
          } catch (error) {
            tries.push(`blocked: ${(error as Error).name}`);
          }
        }
        return tries;
      }, t.url);
      // Without CORS a foreign page cannot read any answer; the server refuses the cookie besides.
      assert.ok(outcome.every((o) => o.startsWith("blocked")), JSON.stringify(outcome));
      await other.close();
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });
});
