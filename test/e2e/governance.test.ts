/**
 * The governance screens end to end in a real browser: Debian's Chromium driven by
 * playwright-core against the real server (built UI, a real small embedding model, fresh
 * data directory). After some activity by the signed-in session and by an API key: the
 * Keys page shows this minute's rate-limit usage; the Audit page lists the activity,
 * filters by type, opens an entry, verifies the trail and exports it as JSONL for a time
 * range; a service account is created (its secret works at the real token endpoint until
 * it is disabled in the UI) and is put on another rate-limit tier; the Security page names
 * the key provider and rotates the token signing key after a confirmation. Screenshots of
 * each screen in light and dark land in test-results/e2e/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { startTestServer } from "../helpers/test-server.js";
import { startCluster } from "../helpers/cluster.js";

/** What the test needs of the server under test: one process, or three replicas behind HAProxy. */
interface Target {
  url: string;
  call(method: string, route: string, body?: unknown, key?: string | null): Promise<{ status: number; headers: Headers; json: any }>;
  signInLink(): Promise<string>;
  close(): Promise<void>;
}

async function oneServer(config: Record<string, unknown>): Promise<Target> {
  const t = await startTestServer({ bindings: { e5: testModel("multilingual-e5-small") }, rendererDir: RENDERER, config });
  return { url: t.url, call: (m, r, b, k) => t.call(m, r, b, k), signInLink: async () => (await t.server.signInLink())!, close: () => t.close() };
}

async function threeReplicas(config: Record<string, unknown>): Promise<Target> {
  const c = await startCluster({ bindings: { e5: testModel("multilingual-e5-small") }, config: { ...config, oauth: { issuer: "http://pustaka.team.test" } } });
  return {
    url: c.url,
    call: (m, r, b, k) => c.call(m, r, b, { key: k }),
    // The link r1 printed, opened through the balancer.
    signInLink: () => Promise.resolve(`${c.url}/#signin=${/#signin=(psi-[A-Za-z0-9]+)/.exec(c.replicas[0]!.output())![1]}`),
    close: () => c.close(),
  };
}

const RENDERER = path.join(REPO_ROOT, "dist", "renderer");
const SHOTS = path.join(REPO_ROOT, "test-results", "e2e");
const CHROMIUM = process.env.PUSTAKA_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
/** A tier with room for the test's own traffic, so the meters have a limit to show. */
const TIER = { requestsPerMinute: 600, tokensPerMinute: 200_000 };

for (const [label, start, suffix] of [
  ["one server", oneServer, ""],
  ["three replicas on Postgres behind HAProxy", threeReplicas, "-team"],
] as const) {
describe(`the governance screens in Chromium (${label})`, { timeout: 600_000 }, () => {
  let t: Target;
  let browser: Browser;
  let page: Page;

  /** The current screen in light and in dark (the workbench follows the OS colour scheme). */
  const shots = async (name: string) => {
    await page.emulateMedia({ colorScheme: "light" });
    await page.screenshot({ path: path.join(SHOTS, `${name}${suffix}-light.png`) });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: path.join(SHOTS, `${name}${suffix}-dark.png`) });
    await page.emulateMedia({ colorScheme: "light" });
  };
  /** An embeddings request made by the signed-in page itself (its session cookie), as the workbench would. */
  const embedFromPage = (input: string) =>
    page.evaluate(async (text) => {
      const res = await fetch("/v1/embeddings", { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json", "x-pustaka-csrf": "1" }, body: JSON.stringify({ model: "e5", input: [text] }) });
      return res.status;
    }, input);

  before(async () => {
    assert.ok(existsSync(path.join(RENDERER, "index.html")), `the workbench is not built: run \`npm run build\` (looked in ${RENDERER})`);
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: \`apt-get install -y chromium\` (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    t = await start({ rateLimits: { tiers: { e2e: TIER }, defaultTier: "e2e" } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light", acceptDownloads: true });
    page = await context.newPage();
    page.on("pageerror", (error) => assert.fail(`page error: ${error.message}`));
    await page.goto(await t.signInLink());
    await page.getByRole("link", { name: "Keys & connection", exact: true }).waitFor();
    // Activity to audit: the session embeds twice; the admin key creates a corpus; a bad key is refused.
    assert.equal(await embedFromPage("Laporan banjir Kelantan 2022"), 200);
    assert.equal(await embedFromPage("Hasil tangkapan koperasi nelayan"), 200);
    assert.equal((await t.call("POST", "/v1/rag/corpora", { name: "Laporan", embedding_model: "e5" })).status, 201);
    assert.equal((await t.call("GET", "/v1/me", undefined, "psk-not-a-real-key")).status, 401);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows this minute's rate-limit usage of the session's key and the workspace on the Keys page", { timeout: 60_000 }, async () => {
    await page.getByRole("link", { name: "Keys & connection", exact: true }).click();
    const key = page.getByRole("group", { name: "This session's key" });
    await key.getByText("Tier e2e").waitFor();
    // The session made two embeddings requests this minute; the poll shows them.
    await page.waitForFunction(() => /Requests2 of 600/.test((globalThis as any).document.querySelector('[aria-label="This session\'s key"]')?.textContent ?? ""), null, { timeout: 15_000 });
    const meter = key.getByRole("meter", { name: /Requests used this minute/ });
    assert.equal(await meter.getAttribute("aria-valuenow"), "2");
    assert.equal(await meter.getAttribute("aria-valuemax"), "600");
    const workspace = page.getByRole("group", { name: "Whole workspace" });
    assert.match((await workspace.textContent()) ?? "", /[1-9]\d* of 600/, "the workspace counts every key's requests");
    assert.match((await page.locator("table").first().textContent()) ?? "", /e2e/, "each key shows its tier");
    await shots("gov-01-keys-usage");
  });

  it("lists the activity on the Audit page, filters it by type and opens an entry", { timeout: 60_000 }, async () => {
    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    const table = page.getByRole("table", { name: "Audit log" });
    await table.waitFor();
    // Entries are written in small batches: refresh until the corpus creation is there.
    for (let i = 0; i < 20 && !/corpus\.create/.test((await table.textContent()) ?? ""); i++) {
      await page.waitForTimeout(250);
      await page.getByRole("button", { name: "Refresh" }).click();
    }
    const text = (await table.textContent()) ?? "";
    assert.match(text, /corpus\.create/);
    assert.match(text, /embeddings\.create/);
    assert.match(text, /Workbench session/, "the session's requests name it as the actor");
    await shots("gov-02-audit-list");

    await page.getByLabel("Event type").selectOption({ label: "Embeddings" });
    await page.waitForFunction(() => {
      const rows = [...(globalThis as any).document.querySelectorAll("table.audit-table tbody tr")];
      return rows.length >= 2 && rows.every((r: any) => /embeddings\.create/.test(r.textContent ?? ""));
    }, null, { timeout: 10_000 });
    assert.match((await table.textContent()) ?? "", /e5/, "the model is among the key facts");

    await table.getByRole("button", { name: /Details of embeddings\.create/ }).first().click();
    const drawer = page.getByRole("dialog", { name: "embeddings.create" });
    await drawer.waitFor();
    const details = (await drawer.textContent()) ?? "";
    assert.match(details, /input_sha256/, "inputs appear only as digests");
    assert.doesNotMatch(details, /Laporan banjir|koperasi/, "never the input itself");
    assert.match(details, /Previous hash[0-9a-f]{64}/);
    await shots("gov-03-audit-entry");
    await page.keyboard.press("Escape");
    await drawer.waitFor({ state: "detached" });
  });

  it("verifies the trail and says it is intact", { timeout: 60_000 }, async () => {
    await page.getByRole("button", { name: "Verify integrity" }).click();
    const result = page.locator(".verify-result");
    await result.getByText("The audit trail is intact").waitFor({ timeout: 20_000 });
    assert.match((await result.textContent()) ?? "", /[1-9][\d,]* entries in \d+ chains? checked in \d+ ms/);
    await shots("gov-04-audit-verified");
  });

  it("exports the trail as JSONL for the chosen time range, closed by a signed manifest", { timeout: 60_000 }, async () => {
    await page.getByLabel("Time", { exact: true }).selectOption({ label: "Last hour" });
    const [request, download] = await Promise.all([
      page.waitForRequest((r) => r.url().includes("/v1/audit/export")),
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export JSONL" }).click(),
    ]);
    const url = new URL(request.url());
    assert.equal(url.searchParams.get("format"), "jsonl");
    const since = Date.parse(url.searchParams.get("since") ?? "");
    assert.ok(Date.now() - since > 59 * 60_000 && Date.now() - since < 70 * 60_000, `the export asks for the last hour: ${url.search}`);
    assert.match(download.suggestedFilename(), /^pustaka-audit-.*\.jsonl$/);
    const lines = readFileSync(await download.path(), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { object: string; type?: string; signature?: string });
    assert.ok(lines.some((l) => l.type === "embeddings.create"), "the export holds the activity");
    assert.equal(lines.at(-1)!.object, "audit.manifest");
    assert.ok(lines.at(-1)!.signature, "the manifest is signed");
    await page.getByText(/^Saved pustaka-audit-.*\.jsonl\.$/).waitFor();
    await page.getByLabel("Time", { exact: true }).selectOption({ label: "Any time" });
  });

  it("shows the signing key to pin for offline verification", async () => {
    const card = page.getByRole("region", { name: "Prove it outside Pustaka" });
    await card.getByRole("button", { name: "Copy public key (PEM)" }).waitFor();
    const signingKey = (await t.call("GET", "/v1/audit/signing-key")).json as { key_id: string };
    assert.match((await card.textContent()) ?? "", new RegExp(signingKey.key_id));
    assert.match((await card.textContent()) ?? "", /pustaka audit verify FILE --public-key key\.pem/);
  });

  it("creates a service account whose secret is shown once and gets a token until it is disabled", { timeout: 60_000 }, async () => {
    await page.getByRole("link", { name: "Keys & connection", exact: true }).click();
    await page.getByRole("tab", { name: "Service accounts" }).click();
    await page.getByRole("heading", { name: "No service accounts yet" }).waitFor();
    await page.getByRole("tab", { name: "Service accounts" }).evaluate((tab) => tab.scrollIntoView({ block: "start" }));
    await shots("gov-05-service-accounts-empty");
    await page.getByRole("button", { name: "New service account" }).first().click();
    const dialog = page.getByRole("dialog", { name: "New service account" });
    await dialog.getByLabel("Name").fill("Nightly indexer");
    await dialog.getByRole("button", { name: "Create service account" }).click();
    const shown = page.getByRole("dialog", { name: "Service account “Nightly indexer” created" });
    const secretField = shown.getByLabel("The new client secret");
    await secretField.waitFor();
    const secret = ((await secretField.textContent()) ?? "").trim();
    const snippet = (await shown.locator("pre").textContent()) ?? "";
    const clientId = /curl -u (\S+):/.exec(snippet)?.[1] ?? "";
    assert.ok(secret.length >= 20 && clientId.length > 0, `a secret and a client id: ${snippet}`);
    assert.ok(snippet.includes(`${t.url}/v1/oauth/token`), snippet);
    const token = () => fetch(`${t.url}/v1/oauth/token`, { method: "POST", headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=client_credentials" });
    const granted = await token();
    assert.equal(granted.status, 200, "the shown secret gets a token");
    assert.equal(((await granted.json()) as { token_type: string }).token_type, "Bearer");
    await shots("gov-06-service-account-secret");
    await shown.getByRole("button", { name: "I have copied it" }).click();
    assert.equal(await page.getByText(secret).count(), 0, "the secret is not shown again");

    const row = page.locator("tr", { hasText: "Nightly indexer" });
    await row.getByText("Active").waitFor();
    await page.getByRole("button", { name: "Disable Nightly indexer" }).click();
    await row.getByText("Disabled").waitFor();
    assert.notEqual((await token()).status, 200, "a disabled account gets no token");
    await page.getByRole("tab", { name: "Service accounts" }).evaluate((tab) => tab.scrollIntoView({ block: "start" }));
    await shots("gov-07-service-accounts");
  });

  it("puts the service account on another rate-limit tier", { timeout: 30_000 }, async () => {
    const row = page.locator("tr", { hasText: "Nightly indexer" });
    await row.getByText("Tier: e2e").waitFor();
    await row.getByRole("button", { name: "Change the rate-limit tier of Nightly indexer" }).click();
    const dialog = page.getByRole("dialog", { name: "Rate-limit tier of “Nightly indexer”" });
    await dialog.getByLabel("Tier", { exact: true }).fill("unlimited");
    await shots("gov-11-service-account-tier");
    await dialog.getByRole("button", { name: "Save tier" }).click();
    await dialog.waitFor({ state: "detached" });
    await row.getByText("Tier: unlimited").waitFor();
    const workspace = ((await t.call("GET", "/v1/me")).json as { workspace_id: string }).workspace_id;
    const accounts = (await t.call("GET", `/v1/admin/workspaces/${workspace}/service_accounts`)).json as { data: { name: string; rate_limit_tier: string }[] };
    assert.equal(accounts.data.find((a) => a.name === "Nightly indexer")?.rate_limit_tier, "unlimited", "the server holds the new tier");
    const overflow = await page.locator(".table-wrap").first().evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth);
    assert.equal(overflow, 0, "the table fits at 1280×800 without scrolling sideways");
    await page.getByRole("tab", { name: "Service accounts" }).evaluate((tab) => tab.scrollIntoView({ block: "start" }));
    await shots("gov-12-service-accounts-tier");
  });

  it("names the key provider in use on the Security page, with the local key file's warning", { timeout: 30_000 }, async () => {
    await page.getByRole("link", { name: "Security", exact: true }).click();
    const provider = page.getByRole("region", { name: "Key protection" });
    await provider.getByText("Local key file").waitFor();
    assert.match((await provider.getByRole("note").textContent()) ?? "", /configure an HSM \(PKCS#11\)/);
    const status = (await t.call("GET", "/v1/admin/security")).json as { audit: { signing_key_id: string }; oauth: { issuer: string } };
    assert.match((await page.getByRole("region", { name: "Audit trail" }).textContent()) ?? "", new RegExp(status.audit.signing_key_id));
    assert.match((await page.getByRole("region", { name: /OAuth/ }).textContent()) ?? "", new RegExp(status.oauth.issuer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    await shots("gov-08-security");
  });

  it("rotates the token signing key after confirmation and lists the new key as the signing one", { timeout: 30_000 }, async () => {
    const before = ((await t.call("GET", "/v1/admin/security")).json as { oauth: { signing_key_ids: string[] } }).oauth.signing_key_ids;
    const card = page.getByRole("region", { name: /OAuth/ });
    await card.getByRole("button", { name: "Rotate token signing key" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Rotate the token signing key?" });
    assert.match((await confirm.textContent()) ?? "", /Tokens already issued keep working until they expire \(at most 15 minutes\)/);
    await shots("gov-13-rotate-confirm");
    await confirm.getByRole("button", { name: "Rotate key" }).click();
    await confirm.waitFor({ state: "detached" });
    await card.getByText("New signing key in use").waitFor();
    const after = ((await t.call("GET", "/v1/admin/security")).json as { oauth: { signing_key_ids: string[] } }).oauth.signing_key_ids;
    assert.equal(after.length, before.length + 1, "the old key stays published");
    assert.deepEqual(after.slice(1), before);
    assert.match((await card.getByRole("status").textContent()) ?? "", new RegExp(`signed with: ${after[0]}`));
    const items = card.getByRole("listitem");
    assert.equal(await items.count(), after.length);
    assert.match((await items.nth(0).textContent()) ?? "", new RegExp(`${after[0]}Signing`));
    assert.match((await items.nth(1).textContent()) ?? "", new RegExp(`${before[0]}Verifying only`));
    const jwks = (await (await fetch(`${t.url}/v1/oauth/jwks`)).json()) as { keys: { kid: string }[] };
    assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [...after].sort(), "both keys are published to verify tokens");
    await shots("gov-14-security-rotated");
  });

  it("explains a refusal (403) on the Audit page instead of a blank screen", { timeout: 30_000 }, async () => {
    // The workbench session holds every scope; a key without audit.read gets this answer from the real server:
    const workspace = ((await t.call("GET", "/v1/me")).json as { workspace_id: string }).workspace_id;
    const limited = (await t.call("POST", `/v1/admin/workspaces/${workspace}/api_keys`, { name: "Reader", scopes: ["rag.read"] })).json as { secret: string };
    const refused = await t.call("GET", "/v1/audit/events", undefined, limited.secret);
    assert.equal(refused.status, 403);
    await page.route("**/v1/audit/events**", (route) => route.fulfill({ status: 403, contentType: "application/json", body: JSON.stringify(refused.json) }));
    try {
      await page.getByRole("link", { name: "Keys & connection", exact: true }).click();
      await page.getByRole("link", { name: "Audit log", exact: true }).click();
      await page.getByRole("heading", { name: "Audit log needs the audit.read scope" }).waitFor();
      assert.match((await page.locator("main").textContent()) ?? "", /audit\.read/);
      await shots("gov-10-audit-refused");
    } finally {
      await page.unroute("**/v1/audit/events**");
      await page.getByRole("link", { name: "Keys & connection", exact: true }).click();
    }
  });

  it("shows the audit page in Bahasa Melayu too", { timeout: 30_000 }, async () => {
    await page.getByRole("radio", { name: "Bahasa Melayu" }).click();
    await page.getByRole("link", { name: "Log audit", exact: true }).click();
    await page.getByRole("button", { name: "Sahkan integriti" }).waitFor();
    await page.getByRole("table", { name: "Log audit" }).waitFor();
    await shots("gov-09-audit-ms");
    await page.getByRole("radio", { name: "English" }).click();
  });
});
}
