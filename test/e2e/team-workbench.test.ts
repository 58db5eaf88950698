/**
 * The workbench of a team server, in Debian's Chromium, through HAProxy in front of three
 * replicas on Postgres: sign in with the link one replica printed, create a corpus, upload
 * documents (indexed by whichever replicas take the jobs, their progress reaching the page
 * whichever replica its event stream is on), ask in English and in Malay and get cited
 * answers, with every page's requests spread over the replicas. Screenshots at 1280x800,
 * light and dark, in test-results/e2e/team-*.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, capAnswers, screenshotter } from "../helpers/browser.js";
import { startCluster, type Cluster } from "../helpers/cluster.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";

const RENDERER = path.join(REPO_ROOT, "dist", "renderer");
const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "documents");
const SHOTS = path.join(REPO_ROOT, "test-results", "e2e");

describe("the workbench of a team server (three replicas behind HAProxy)", { timeout: 600_000 }, () => {
  let c: Cluster;
  let browser: Browser;
  let page: Page;
  const replicasSeen = new Set<string>();
  const shot = screenshotter(() => page, SHOTS);

  before(async () => {
    assert.ok(existsSync(path.join(RENDERER, "index.html")), `the workbench is not built: run \`npm run build\` (looked in ${RENDERER})`);
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: \`apt-get install -y chromium\` (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    c = await startCluster({
      bindings: { chat: testModel("smollm2-135m-instruct"), e5: testModel("multilingual-e5-small") },
      config: { chat: { contextSize: 2048, sequences: 2 }, rag: { chunkTargetTokens: 120 }, oauth: { issuer: "http://pustaka.team.test" } },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    page = await context.newPage();
    page.on("pageerror", (error) => assert.fail(`page error: ${error.message}`));
    page.on("response", (res) => {
      const replica = res.headers()["x-pustaka-replica"];
      if (replica) replicasSeen.add(replica);
    });
  });

  after(async () => {
    await browser?.close();
    await c?.close();
  });

  it("signs in through the balancer with the link one replica printed", async () => {
    const printed = /(http:\/\/127\.0\.0\.1:\d+)\/#signin=(psi-[A-Za-z0-9]+)/.exec(c.replicas[0]!.output());
    assert.ok(printed, "r1 printed a sign-in link");
    await page.goto(`${c.url}/#signin=${printed[2]}`);
    await page.getByRole("textbox", { name: /Message|Question/ }).waitFor();
    await capAnswers(page);
    assert.doesNotMatch(page.url(), /signin=/);
    await shot("team-01-signed-in");
  });

  it("creates a corpus and shows every document reach Indexed, whichever replica indexed it", { timeout: 300_000 }, async () => {
    await page.getByRole("link", { name: "Corpora" }).click();
    await page.getByRole("button", { name: "New corpus" }).first().click();
    await page.getByLabel("Name", { exact: true }).fill("Laporan pasukan");
    await page.getByRole("button", { name: "Create corpus" }).click();
    await page.waitForURL(/#\/corpora\/corp_/);
    const files = ["report.pdf", "report.docx", "guide.md", "laporan-ms.txt"].map((f) => path.join(FIXTURES, f));
    await page.getByTestId("file-input").setInputFiles(files);
    await page.waitForFunction(() => [...(globalThis as any).document.querySelectorAll(".upload-row")].filter((r: any) => /Indexed/.test(r.textContent ?? "")).length === 4, null, { timeout: 240_000 });
    await page.getByText("Ready", { exact: true }).first().waitFor();
    const indexers = c.postgres.psql(c.databaseUrl, "SELECT DISTINCT origin FROM corpus_changes WHERE change = 'indexed'").trim().split("\n");
    assert.ok(indexers.length >= 1, `indexed by ${indexers.join(", ")}`);
    await shot("team-02-corpus-ready");
  });

  it("answers an English and a Malay question with citations, its requests spread over the replicas", { timeout: 300_000 }, async () => {
    await page.getByRole("button", { name: "Ask this corpus" }).click();
    await page.waitForURL(/#\/chat/);
    for (const question of ["What revenue did the northern region earn?", "Berapakah hasil tangkapan koperasi nelayan?"]) {
      const before = await page.locator("article.msg-assistant").count();
      await page.getByRole("textbox", { name: /Question|Message/ }).fill(question);
      await page.keyboard.press("Enter");
      const answer = page.locator("article.msg-assistant").nth(before);
      await answer.waitFor();
      await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll("article.msg-assistant").length > n && !(globalThis as any).document.querySelector('article[aria-busy="true"]'), before, { timeout: 240_000 });
      assert.ok(((await answer.textContent()) ?? "").trim().length > 0, "an answer appeared");
      assert.ok((await answer.locator(".source-chip").count()) > 0, "the answer lists its sources");
    }
    await shot("team-03-answers");
    assert.ok(replicasSeen.size >= 2, `the page's requests were answered by several replicas: ${[...replicasSeen].join(", ")}`);
  });

  it("shows the audit trail every replica wrote, verified as one chain", { timeout: 60_000 }, async () => {
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await page.getByRole("table", { name: "Audit log" }).waitFor();
    await page.getByRole("button", { name: "Verify integrity" }).click();
    await page.getByText("The audit trail is intact").waitFor({ timeout: 30_000 });
    const verified = await c.call("GET", "/v1/audit/verify");
    assert.equal(verified.json.valid, true);
    await shot("team-04-audit");
  });
});
