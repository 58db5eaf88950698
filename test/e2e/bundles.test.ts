/**
 * Corpus bundles in the workbench (issue 35), in Debian's Chromium against the real server
 * (built UI, real small models): a corpus exported from its page — streamed to the file the
 * person picks, or downloaded where the browser cannot stream — and imported from the corpora
 * list: upload with progress, the verified preview with the signer to compare, Import; the new
 * corpus holds the same documents and a question on it cites the same document. A second
 * instance without the bundle's embedding model indexes the documents again with its own. Each
 * bad bundle (a flipped byte, one cut short, a wrong passphrase, none given, a foreign file) is
 * refused in words. Every state is photographed in light and dark (test-results/e2e-bundles/).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, capAnswers, screenshotter } from "../helpers/browser.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const RENDERER = path.join(REPO_ROOT, "dist", "renderer");
const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "documents");
const SHOTS = path.join(REPO_ROOT, "test-results", "e2e-bundles");
const PASSPHRASE = "sungai-kelantan-naik-dua-puluh-enam";
const QUESTION = "Berapakah hasil tangkapan koperasi nelayan?";
const EVAL_EXTRA = ["banjir-kelantan-2022.md", "banjir-johor-2024.txt", "eksport-minyak-sawit-2023.md", "employee-leave-policy.md"];
const DOCUMENTS = ["guide.md", "laporan-ms.txt", "report.pdf", ...EVAL_EXTRA];

/**
 * Chromium's save picker, minus the dialog headless Chromium cannot show: the file is created
 * in the origin's private file system (a real FileSystemFileHandle and writable stream). Writes
 * wait while `window.__bundleGate` is set (the first chunk already counted), so the page can be
 * photographed mid-export.
 */
const PICKER = `
  window.showSaveFilePicker = async (options) => {
    const root = await navigator.storage.getDirectory();
    const handle = await root.getFileHandle(options.suggestedName, { create: true });
    return {
      kind: "file",
      name: handle.name,
      remove: () => root.removeEntry(handle.name),
      createWritable: async () => {
        const writer = (await handle.createWritable()).getWriter();
        return new WritableStream({
          async write(chunk) {
            if (window.__bundleGate) await window.__bundleGate;
            await writer.write(chunk);
          },
          close: () => writer.close(),
          abort: (reason) => writer.abort(reason),
        });
      },
    };
  };
`;

describe("corpus bundles in the workbench", () => {
  let t: TestServer;
  let other: TestServer | null = null;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let sourceId: string;
  let sourceName: string;
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-e2e-bundles-"));
  const passphraseBundle = path.join(dir, "notis-dan-laporan.pustaka");
  const recipientBundle = path.join(dir, "untuk-pejabat.pustaka");
  let shotPage: () => Page = () => page;
  const shot = screenshotter(() => shotPage(), SHOTS);

  const signerOf = async (server: TestServer) => (await server.call("GET", "/v1/rag/bundles/recipient")).json as { recipient: string; signer: { key_id: string } };
  const filenames = async (server: TestServer, corpusId: string) => ((await server.call("GET", `/v1/rag/corpora/${corpusId}/documents?limit=100&order=asc`)).json.data as { filename: string }[]).map((d) => d.filename).sort();

  before(async () => {
    assert.ok(existsSync(path.join(RENDERER, "index.html")), `the workbench is not built: run \`npm run build\` (looked in ${RENDERER})`);
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: \`apt-get install -y chromium\` (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), e5: testModel("multilingual-e5-small") },
      rendererDir: RENDERER,
      config: { chat: { contextSize: 2048, sequences: 2 }, rag: { chunkTargetTokens: 120 } },
    });
    sourceName = "Laporan dan panduan";
    sourceId = (await t.call("POST", "/v1/rag/corpora", { name: sourceName, embedding_model: "e5" })).json.id as string;
    // Enough passages that the bundle spans more than one of age's 64 KiB chunks: a byte flipped
    // inside a chunk that is not the last is tampering, not a cut.
    const files = [...["guide.md", "laporan-ms.txt", "report.pdf"].map((name) => ({ name, content: readFileSync(path.join(FIXTURES, name)) })), ...EVAL_EXTRA.map(evalDoc)];
    assert.equal((await upload(t, sourceId, files)).status, 202);
    const ready = await waitForStatus(t, sourceId, 300_000);
    assert.deepEqual([ready.status, ready.document_counts.failed], ["ready", 0]);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light", acceptDownloads: true });
    await context.addInitScript(PICKER);
    page = await context.newPage();
    page.on("pageerror", (error) => assert.fail(`page error: ${error.message}`));
    await page.goto((await t.server.signInLink())!);
    await page.getByRole("textbox", { name: /Message|Question/ }).waitFor();
    await capAnswers(page);
  });

  after(async () => {
    await browser?.close();
    await other?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exports a corpus from its page with a passphrase, streamed to the picked file, and names the key id to pass on", { timeout: 120_000 }, async () => {
    await page.goto(`${t.url}/#/corpora/${sourceId}`);
    await page.getByRole("button", { name: "Export bundle" }).click();
    const dialog = page.getByRole("dialog", { name: `Export “${sourceName}”` });
    await dialog.waitFor();
    const passphrase = dialog.getByLabel("Passphrase", { exact: true });
    assert.equal(await passphrase.evaluate((el) => el === (globalThis as any).document.activeElement), true, "the passphrase field has the focus");
    await shot("01-export-form");
    await passphrase.fill("pendek");
    await dialog.getByRole("button", { name: "Export bundle" }).click();
    await dialog.getByText("Too short: at least 12 characters (6 so far).").waitFor();
    await shot("02-export-too-short");
    await passphrase.fill(PASSPHRASE);
    await dialog.getByLabel("Repeat the passphrase").fill(`${PASSPHRASE}-lain`);
    await dialog.getByText("The two passphrases differ.").waitFor();
    await dialog.getByText("Strong.").waitFor();
    await shot("03-export-mismatch");
    await dialog.getByLabel("Repeat the passphrase").fill(PASSPHRASE);

    // Held after the first chunk, to see the export under way.
    await page.evaluate(() => {
      const w = globalThis as any;
      w.__bundleGate = new Promise((resolve) => (w.__bundleRelease = resolve));
    });
    await dialog.getByRole("button", { name: "Export bundle" }).click();
    await dialog.getByText("Writing the bundle…").waitFor();
    // The first chunk is counted before its write waits.
    await dialog.getByText(/^[1-9][\d.]* (B|KB|MB) written$/).waitFor();
    await shot("04-export-writing");
    await page.evaluate(() => (globalThis as any).__bundleRelease());
    await dialog.getByText("Bundle saved").waitFor({ timeout: 60_000 });
    const signer = (await signerOf(t)).signer.key_id;
    assert.equal(((await dialog.locator(".bundle-keyid").textContent()) ?? "").trim(), signer, "the page names this instance's signing key");
    await dialog.getByText(/Tell the recipient this key id/).waitFor();
    assert.equal(await dialog.getByRole("button", { name: "Done" }).evaluate((el) => el === (globalThis as any).document.activeElement), true);
    await shot("05-export-done");

    // What was written to the picked file is the bundle, whole.
    const base64 = await page.evaluate(async () => {
      const root = await (globalThis as any).navigator.storage.getDirectory();
      const file = await (await root.getFileHandle("laporan-dan-panduan.pustaka")).getFile();
      const bytes = new Uint8Array(await file.arrayBuffer());
      let s = "";
      for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return (globalThis as any).btoa(s);
    });
    writeFileSync(passphraseBundle, Buffer.from(base64, "base64"));
    const size = statSync(passphraseBundle).size;
    assert.ok(size > 10_000, `a bundle of ${size} bytes`);
    assert.equal(readFileSync(passphraseBundle).subarray(0, 21).toString("latin1"), "age-encryption.org/v1", "an age file");
    const saved = (await dialog.locator(".notice-detail").first().textContent()) ?? "";
    assert.match(saved, /^laporan-dan-panduan\.pustaka, [\d.]+ KB$/);
    await dialog.getByRole("button", { name: "Done" }).click();
    await dialog.waitFor({ state: "hidden" });
    assert.equal(await page.getByRole("button", { name: "Export bundle" }).evaluate((el) => el === (globalThis as any).document.activeElement), true, "focus is back on the button that opened the dialog");
  });

  it("exports for this instance's recipient key as a download where the browser cannot stream to a file", { timeout: 120_000 }, async () => {
    // The key, as a person would get it: from the import dialog on the receiving side (here the same instance).
    await page.goto(`${t.url}/#/corpora`);
    await page.getByRole("button", { name: "Import bundle" }).click();
    const importDialog = page.getByRole("dialog", { name: "Import a corpus bundle" });
    const key = ((await importDialog.getByLabel("This Pustaka's recipient key").textContent()) ?? "").trim();
    assert.equal(key, (await signerOf(t)).recipient);
    await shot("06-import-form");
    await page.keyboard.press("Escape");

    await page.evaluate(() => delete (globalThis as any).showSaveFilePicker);
    await page.goto(`${t.url}/#/corpora/${sourceId}`);
    await page.getByRole("button", { name: "Export bundle" }).click();
    const dialog = page.getByRole("dialog", { name: `Export “${sourceName}”` });
    await dialog.getByRole("radio", { name: /Another Pustaka's key/ }).check();
    const field = dialog.getByLabel("Recipient key");
    await field.fill("ed25519:0123456789abcdef");
    await dialog.getByText(/is a signing key id/).waitFor();
    await shot("07-export-recipient-wrong");
    await field.fill(key);
    await dialog.getByText("It is downloaded once it is complete.").waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), dialog.getByRole("button", { name: "Export bundle" }).click()]);
    assert.equal(download.suggestedFilename(), "laporan-dan-panduan.pustaka");
    await download.saveAs(recipientBundle);
    await dialog.getByText("Only the Pustaka whose key you entered can open it.").waitFor();
    assert.ok(statSync(recipientBundle).size > 10_000);
    await shot("08-export-recipient-done");
    await page.keyboard.press("Escape");
  });

  it("imports the bundle from the corpora list: progress, the verified signer compared, a second corpus with the same documents that cites the same document", { timeout: 400_000 }, async () => {
    await page.goto(`${t.url}/#/corpora`);
    await page.getByRole("button", { name: "Import bundle" }).click();
    const dialog = page.getByRole("dialog", { name: "Import a corpus bundle" });
    await dialog.getByTestId("bundle-file-input").setInputFiles(passphraseBundle);
    await dialog.getByText(/^notis-dan-laporan\.pustaka · [\d.]+ KB$/).waitFor();
    await dialog.getByLabel("Passphrase", { exact: true }).fill(PASSPHRASE);
    // The upload slowed to 48 KB/s by Chromium's network emulation, to see it under way.
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 48 * 1024 });
    await dialog.getByRole("button", { name: "Upload and verify" }).click();
    const bar = dialog.getByRole("progressbar", { name: "Bundle upload" });
    await page.waitForFunction(() => {
      const now = Number((globalThis as any).document.querySelector('[role="progressbar"][aria-label="Bundle upload"]')?.getAttribute("aria-valuenow") ?? 0);
      return now >= 10 && now < 90;
    }, null, { timeout: 60_000 });
    assert.match((await bar.getAttribute("aria-valuetext")) ?? "", /^[\d.]+ KB of [\d.]+ KB sent$/);
    await shot("09-import-uploading");
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
    await dialog.getByText("Verified: the signature and every file check out.").waitFor({ timeout: 120_000 });

    const signer = (await signerOf(t)).signer.key_id;
    assert.equal(((await dialog.locator(".bundle-keyid-large").textContent()) ?? "").trim(), signer, "the signer shown is the exporting instance's key");
    const facts = (await dialog.locator(".bundle-columns").textContent()) ?? "";
    assert.match(facts, new RegExp(`Corpus${sourceName}`));
    assert.match(facts, new RegExp(`Documents${DOCUMENTS.length}Passages\\d+`));
    await dialog.getByText("Here as “e5”: its passages are used as they are, nothing is indexed again.").waitFor();
    assert.equal(await dialog.getByText("Instance", { exact: true }).count(), 0, "no instance row when the instance is the signer");
    const importButton = dialog.getByRole("button", { name: "Import", exact: true });
    assert.equal(await importButton.isDisabled(), true, "nothing is imported before the signer is confirmed");
    await shot("10-import-preview");
    await dialog.getByRole("checkbox", { name: "The key id matches the one the sender gave me" }).check();
    await dialog.getByLabel("Name of the new corpus").fill("Salinan pejabat");
    let releaseCommit: () => void = () => undefined;
    const commitHeld = new Promise<void>((resolve) => (releaseCommit = resolve));
    await page.route("**/v1/rag/bundles/imports/*/commit", async (route) => {
      await commitHeld;
      await route.continue();
    });
    await importButton.click();
    await dialog.getByRole("status").filter({ hasText: "Importing: every passage is sealed under this Pustaka's keys…" }).waitFor();
    await shot("11-import-importing");
    releaseCommit();
    await dialog.getByText("Imported as “Salinan pejabat”").waitFor({ timeout: 120_000 });
    await page.unroute("**/v1/rag/bundles/imports/*/commit");
    await shot("12-import-done");

    await dialog.getByRole("link", { name: "Open the corpus" }).click();
    await page.waitForURL(/#\/corpora\/corp_/);
    const importedId = /#\/corpora\/(corp_[A-Za-z0-9_-]+)/.exec(page.url())![1]!;
    assert.notEqual(importedId, sourceId);
    await page.getByRole("heading", { level: 1, name: /Salinan pejabat/ }).waitFor();
    await page.getByText("Ready", { exact: true }).first().waitFor();
    const table = page.locator("table");
    for (const name of DOCUMENTS) await table.getByText(name, { exact: true }).waitFor();
    assert.deepEqual(await filenames(t, importedId), await filenames(t, sourceId), "the same documents");
    await shot("13-imported-corpus");

    // The same question on the source corpus and on the imported one, through the chat page at
    // temperature 0: the same passages found, the same answer, so the same documents cited.
    await page.route("**/v1/rag/corpora/*/query", async (route) => {
      await route.continue({ postData: JSON.stringify({ ...JSON.parse(route.request().postData() ?? "{}"), max_tokens: 48, temperature: 0 }) });
    });
    const sources: Record<string, string[]> = {};
    for (const [name, corpusId] of [["source", sourceId], ["imported", importedId]] as const) {
      await page.goto(`${t.url}/#/corpora/${corpusId}`);
      await page.getByRole("button", { name: "Ask this corpus" }).click();
      await page.waitForURL(/#\/chat/);
      const before = await page.locator("article.msg-assistant").count();
      await page.getByRole("textbox", { name: /Question|Message/ }).fill(QUESTION);
      await page.keyboard.press("Enter");
      await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll("article.msg-assistant").length > n && !(globalThis as any).document.querySelector('article[aria-busy="true"]'), before, { timeout: 240_000 });
      sources[name] = await page.locator("article.msg-assistant").nth(before).locator(".source-chip .source-name").allTextContents();
      if (name === "imported") await shot("14-imported-answer");
    }
    await page.unroute("**/v1/rag/corpora/*/query");
    assert.ok(sources.imported!.length > 0, "the answer on the imported corpus cites its sources");
    const top = ((await t.call("POST", `/v1/rag/corpora/${importedId}/search`, { query: QUESTION, top_k: 3 })).json.data as { filename: string }[])[0]?.filename;
    assert.equal(top, "laporan-ms.txt", "the imported corpus finds the document that answers");
    assert.ok(sources.imported!.includes(top), `the answer cites ${top}`);
    assert.deepEqual(sources.imported, sources.source, "the imported corpus cites the same documents as the source");
  });

  it("opens the bundle made for this instance without a passphrase, and discards it on request", { timeout: 120_000 }, async () => {
    const before = (await t.call("GET", "/v1/rag/corpora?limit=100")).json.data.length as number;
    await page.goto(`${t.url}/#/corpora`);
    await page.getByRole("button", { name: "Import bundle" }).click();
    const dialog = page.getByRole("dialog", { name: "Import a corpus bundle" });
    await dialog.getByTestId("bundle-file-input").setInputFiles(recipientBundle);
    await dialog.getByRole("button", { name: "Upload and verify" }).click();
    await dialog.getByText("this Pustaka's key", { exact: true }).waitFor({ timeout: 120_000 });
    await dialog.getByRole("button", { name: "Discard" }).click();
    await dialog.getByRole("button", { name: "Upload and verify" }).waitFor();
    assert.equal((await t.call("GET", "/v1/rag/corpora?limit=100")).json.data.length, before, "nothing imported");
    assert.deepEqual(existsSync(path.join(t.dataDir, "imports")) ? readdirSync(path.join(t.dataDir, "imports")) : [], [], "the discarded bundle is gone from the server");
    await page.keyboard.press("Escape");
  });

  it("refuses a flipped byte, a bundle cut short, a wrong passphrase, none given and a foreign file, each in words, importing nothing", { timeout: 300_000 }, async () => {
    const bundle = readFileSync(passphraseBundle);
    const flipped = Buffer.from(bundle);
    // A byte inside age's first 64 KiB chunk (past its header), which is not the last chunk.
    assert.ok(bundle.length > 70_000, `a bundle of several chunks (${bundle.length} bytes)`);
    flipped[2_000]! ^= 0x40;
    const cases: [string, Buffer, string, RegExp][] = [
      ["15-import-tampered", flipped, PASSPHRASE, /The bundle was altered after it was made/],
      ["16-import-truncated", bundle.subarray(0, Math.floor(bundle.length * 0.6)), PASSPHRASE, /The bundle is incomplete: it was cut short/],
      ["17-import-wrong-passphrase", bundle, "bukan-kata-laluan-ini", /the passphrase is wrong, or it was made for another Pustaka's key/],
      ["18-import-needs-passphrase", bundle, "", /This bundle was not made for this Pustaka's key\. If the sender chose a passphrase, enter it and try again\./],
      ["19-import-foreign-file", readFileSync(path.join(FIXTURES, "guide.md")), PASSPHRASE, /This file is not a Pustaka corpus bundle/],
    ];
    const before = (await t.call("GET", "/v1/rag/corpora?limit=100")).json.data.length as number;
    await page.goto(`${t.url}/#/corpora`);
    await page.getByRole("button", { name: "Import bundle" }).click();
    const dialog = page.getByRole("dialog", { name: "Import a corpus bundle" });
    for (const [name, bytes, secret, message] of cases) {
      await dialog.getByTestId("bundle-file-input").setInputFiles({ name: `${name}.pustaka`, mimeType: "application/octet-stream", buffer: bytes });
      await dialog.getByLabel("Passphrase", { exact: true }).fill(secret);
      await dialog.getByRole("button", { name: "Upload and verify" }).click();
      const alert = dialog.getByRole("alert");
      await alert.filter({ hasText: message }).waitFor({ timeout: 120_000 });
      await shot(name);
    }
    assert.equal((await t.call("GET", "/v1/rag/corpora?limit=100")).json.data.length, before, "no corpus was created");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    // The same refusal in Malay.
    await page.getByRole("radio", { name: "Bahasa Melayu" }).click();
    try {
      await page.getByRole("button", { name: "Import berkas" }).click();
      const ms = page.getByRole("dialog", { name: "Import berkas korpus" });
      await ms.getByTestId("bundle-file-input").setInputFiles(path.join(FIXTURES, "guide.md"));
      await ms.getByRole("button", { name: "Muat naik dan sahkan" }).click();
      await ms.getByRole("alert").filter({ hasText: "Fail ini bukan berkas korpus Pustaka. Pilih fail .pustaka yang dibuat dengan Eksport berkas." }).waitFor({ timeout: 120_000 });
      await shot("19b-import-foreign-file-ms");
      await page.keyboard.press("Escape");
    } finally {
      await page.getByRole("radio", { name: "English" }).click();
    }
  });

  it("on an instance without the bundle's embedding model: says so, and indexes the documents again with a local one", { timeout: 400_000 }, async () => {
    other = await startTestServer({ bindings: { chat: testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2") }, rendererDir: RENDERER, config: { rag: { chunkTargetTokens: 120 } } });
    const second = await context.browser()!.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    const otherPage = await second.newPage();
    otherPage.on("pageerror", (error) => assert.fail(`page error: ${error.message}`));
    shotPage = () => otherPage;
    try {
      await otherPage.goto((await other.server.signInLink())!);
      await otherPage.getByRole("textbox", { name: /Message|Question/ }).waitFor();
      await otherPage.goto(`${other.url}/#/corpora`);
      await otherPage.getByRole("heading", { name: "No corpora yet" }).waitFor();
      await shot("19c-corpora-empty");
      await otherPage.getByRole("button", { name: "Import bundle" }).click();
      const dialog = otherPage.getByRole("dialog", { name: "Import a corpus bundle" });
      await dialog.getByTestId("bundle-file-input").setInputFiles(passphraseBundle);
      await dialog.getByLabel("Passphrase", { exact: true }).fill(PASSPHRASE);
      await dialog.getByRole("button", { name: "Upload and verify" }).click();
      await dialog.getByText("This Pustaka does not have that model").waitFor({ timeout: 120_000 });
      // The signer is the first instance's, compared across machines as a person would.
      assert.equal(((await dialog.locator(".bundle-keyid-large").textContent()) ?? "").trim(), (await signerOf(t)).signer.key_id);
      await dialog.getByRole("checkbox", { name: "The key id matches the one the sender gave me" }).check();
      const importButton = dialog.getByRole("button", { name: "Import", exact: true });
      assert.equal(await importButton.isDisabled(), true, "no import until a model is chosen");
      await shot("20-import-model-missing");
      await dialog.getByLabel("Index the documents again with").selectOption("minilm");
      await importButton.click();
      await dialog.getByText(/Its documents are being indexed again with minilm/).waitFor({ timeout: 120_000 });
      await shot("21-import-reindexing");
      await dialog.getByRole("link", { name: "Open the corpus" }).click();
      await otherPage.waitForURL(/#\/corpora\/corp_/);
      const importedId = /#\/corpora\/(corp_[A-Za-z0-9_-]+)/.exec(otherPage.url())![1]!;
      const ready = await waitForStatus(other, importedId, 300_000);
      assert.deepEqual([ready.status, ready.embedding_model, ready.document_counts.failed], ["ready", "minilm", 0]);
      assert.deepEqual(await filenames(other, importedId), await filenames(t, sourceId));
      await otherPage.getByText("Ready", { exact: true }).first().waitFor({ timeout: 60_000 });

      // The Export button while a corpus indexes: the corpus as the server reports it mid-indexing,
      // held there for the photograph (the real indexing above finished in seconds).
      await otherPage.route(`**/v1/rag/corpora/${importedId}`, async (route) => {
        if (route.request().method() !== "GET") return route.fallback();
        const response = await route.fetch();
        const corpus = await response.json();
        await route.fulfill({ response, json: { ...corpus, status: "indexing", document_counts: { ...corpus.document_counts, queued: 3, indexed: corpus.document_counts.total - 3 } } });
      });
      await otherPage.reload();
      await otherPage.getByText("Export is possible once indexing has finished.").waitFor();
      assert.equal(await otherPage.getByRole("button", { name: "Export bundle" }).isDisabled(), true);
      await shot("22-export-disabled-indexing");
      await otherPage.unroute(`**/v1/rag/corpora/${importedId}`);
    } finally {
      shotPage = () => page;
      await second.close();
    }
  });
});
