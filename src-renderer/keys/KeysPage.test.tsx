import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { ApiKey, Principal } from "../api/contract.js";
import { adminPrincipal, apiError, json, principal, renderWithApp, type Handler } from "../test-utils/render.js";
import { KeysPage } from "./KeysPage.js";
import { MCP_CLIENTS, mcpConfig } from "./mcp-snippets.js";

const apiKey = (patch: Partial<ApiKey> = {}): ApiKey => ({
  id: "key_2",
  object: "api_key",
  workspace_id: "ws_default",
  name: "Notebook",
  prefix: "psk-abcd1234",
  scopes: ["inference"],
  created_at: 1_790_000_000,
  expires_at: null,
  revoked_at: null,
  last_used_at: null,
  rate_limit_tier: "default",
  ...patch,
});
const KEYS = "/v1/admin/workspaces/ws_default/api_keys";
const me = (over: Partial<Principal> = {}): Principal => ({
  ...adminPrincipal,
  rate_limits: {
    key: { tier: "gold", requests_per_minute: 60, tokens_per_minute: 100_000, remaining_requests: 48, remaining_tokens: 98_766, resets_at: Math.floor(Date.now() / 1000) + 40 },
    workspace: { tier: "unlimited", requests_per_minute: 0, tokens_per_minute: 0, remaining_requests: null, remaining_tokens: null, resets_at: 0 },
  },
  ...over,
});
const list = (data: unknown[]) => json({ object: "list", data, first_id: null, last_id: null, has_more: false });
const corpus = (id: string, name: string) => ({ id, object: "rag.corpus", name, chunking: "semantic", embedding_model: "e5", dimensions: 384, status: "ready", document_counts: { queued: 0, processing: 0, indexed: 1, failed: 0, total: 1 }, chunk_count: 4, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 });
const routes = (extra: Record<string, Handler> = {}): Record<string, Handler> => ({
  "GET /v1/me": () => json(me()),
  "GET /v1/models": () => json({ object: "list", data: [] }),
  [`GET ${KEYS}`]: () => json({ object: "list", data: [apiKey()], first_id: null, last_id: null, has_more: false }),
  ...extra,
});

describe("KeysPage", () => {
  it("shows this minute's usage of the key and the workspace as meters, unlimited as such", async () => {
    renderWithApp(<KeysPage />, { principal: adminPrincipal, routes: routes() });
    const keyScope = await screen.findByRole("group", { name: "This session's key" });
    await within(keyScope).findByText("Tier gold");
    expect(keyScope).toHaveTextContent("12 of 60");
    expect(keyScope).toHaveTextContent("1,234 of 100,000");
    const meter = within(keyScope).getByRole("meter", { name: "Requests used this minute by This session's key" });
    expect(meter).toHaveAttribute("aria-valuenow", "12");
    expect(meter).toHaveAttribute("aria-valuemax", "60");
    expect(keyScope).toHaveTextContent(/Resets in (39|40) s/);
    const workspace = screen.getByRole("group", { name: "Whole workspace" });
    expect(workspace).toHaveTextContent("Tier unlimited");
    expect(within(workspace).getAllByText("Unlimited")).toHaveLength(2);
    expect(within(workspace).queryByRole("meter")).not.toBeInTheDocument();
  });

  it("lets an administrator put a key on another tier with a PATCH", async () => {
    const user = userEvent.setup();
    let tier = "default";
    const patch = vi.fn<Handler>(({ body }) => {
      tier = (body as { rate_limit_tier: string }).rate_limit_tier;
      return json(apiKey({ rate_limit_tier: tier }));
    });
    renderWithApp(<KeysPage />, {
      principal: adminPrincipal,
      routes: routes({ [`GET ${KEYS}`]: () => json({ object: "list", data: [apiKey({ rate_limit_tier: tier })], first_id: null, last_id: null, has_more: false }), [`PATCH ${KEYS}/key_2`]: patch }),
    });
    const row = (await within(await screen.findByRole("table", { name: "API keys of this workspace" })).findByText("Notebook")).closest("tr")!;
    expect(row).toHaveTextContent("default");
    await user.click(within(row).getByRole("button", { name: "Change the rate-limit tier of Notebook" }));
    const dialog = await screen.findByRole("dialog", { name: "Rate-limit tier of “Notebook”" });
    const input = within(dialog).getByLabelText("Tier");
    await user.clear(input);
    await user.type(input, "gold");
    await user.click(within(dialog).getByRole("button", { name: "Save tier" }));
    await waitFor(() => expect(patch).toHaveBeenCalledTimes(1));
    expect(patch.mock.calls[0]![0].body).toEqual({ rate_limit_tier: "gold" });
    await waitFor(() => expect(within(screen.getByRole("table", { name: "API keys of this workspace" })).getByText("Notebook").closest("tr")).toHaveTextContent("gold"));
  });

  it("does not offer tier changes without workspaces.manage, and keeps service accounts a tab away", async () => {
    const user = userEvent.setup();
    renderWithApp(<KeysPage />, { principal, routes: routes({ "GET /v1/admin/workspaces/ws_default/service_accounts": () => json({ object: "list", data: [], first_id: null, last_id: null, has_more: false }) }) });
    const row = (await within(await screen.findByRole("table", { name: "API keys of this workspace" })).findByText("Notebook")).closest("tr")!;
    expect(within(row).queryByRole("button", { name: /rate-limit tier/ })).not.toBeInTheDocument();
    await user.click(screen.getByRole("tab", { name: "Service accounts" }));
    expect(await screen.findByRole("heading", { name: "No service accounts yet" })).toBeInTheDocument();
  });
});

describe("KeysPage: connect an agent or editor (MCP)", () => {
  const mcpRoutes = (keys: ApiKey[], corpora: unknown[], extra: Record<string, Handler> = {}) =>
    routes({ [`GET ${KEYS}`]: () => list(keys), "GET /v1/rag/corpora": () => list(corpora), ...extra });
  const section = () => screen.getByRole("region", { name: "Connect an agent or editor (MCP)" });
  const reachRow = async (name: string) => (await within(await screen.findByRole("table", { name: "Which keys can connect, and what they reach" })).findByRole("rowheader", { name: new RegExp(name) })).closest("tr")!;

  it("shows this server's MCP URL, says what it gives, and copies it", async () => {
    const user = userEvent.setup();
    renderWithApp(<KeysPage />, { principal: adminPrincipal, routes: mcpRoutes([apiKey()], []) });
    const url = `${window.location.origin}/mcp`;
    const mcp = await screen.findByRole("region", { name: "Connect an agent or editor (MCP)" });
    expect(within(mcp).getByText(url)).toBeInTheDocument();
    expect(mcp).toHaveTextContent("corpora as tools: search, cited answers and reading pages");
    expect(mcp).toHaveTextContent("audited and rate-limited like any other request");
    await user.click(within(mcp).getByRole("button", { name: "Copy MCP URL" }));
    expect(await navigator.clipboard.readText()).toBe(url);
  });

  it("offers each client's configuration, names its file, and copies it", async () => {
    const user = userEvent.setup();
    renderWithApp(<KeysPage />, { principal: adminPrincipal, routes: mcpRoutes([apiKey()], []) });
    const tabs = await within(section()).findByRole("tablist", { name: "Client configurations" });
    expect(within(tabs).getAllByRole("tab").map((tab) => tab.textContent)).toEqual(["Claude Desktop", "VS Code", "Cursor", "LM Studio"]);
    for (const { client, label, file } of MCP_CLIENTS) {
      await user.click(within(tabs).getByRole("tab", { name: label }));
      const panel = within(section()).getByRole("tabpanel", { name: label });
      expect(within(panel).getByText(file)).toHaveClass("mcp-file-name");
      const shown = JSON.parse(panel.querySelector("pre")!.textContent) as unknown;
      expect(shown).toEqual(mcpConfig(client, { origin: window.location.origin, apiKey: "psk-…" }));
      await user.click(within(panel).getByRole("button", { name: `Copy the ${label} configuration` }));
      expect(JSON.parse(await navigator.clipboard.readText())).toEqual(shown);
    }
    expect(section()).toHaveTextContent("Replace psk-… with a key that can connect");
  });

  it("fills the configurations with a key just created for MCP while its secret is shown, and never again after", async () => {
    const user = userEvent.setup();
    const created = { ...apiKey({ id: "key_9", name: "Claude", scopes: ["inference", "rag.read"] }), secret: "psk-fresh-secret-0123456789" };
    const create = vi.fn<Handler>(() => json(created, 201));
    let keys = [apiKey()];
    renderWithApp(<KeysPage />, {
      principal: adminPrincipal,
      routes: routes({ [`GET ${KEYS}`]: () => list(keys), [`POST ${KEYS}`]: (req) => ((keys = [...keys, created]), create(req)), "GET /v1/rag/corpora": () => list([]) }),
    });
    await user.click(await within(section()).findByRole("button", { name: "New key for MCP" }));
    const dialog = await screen.findByRole("dialog", { name: "New API key" });
    expect(within(dialog).getByRole("checkbox", { name: /rag\.read/ })).toBeChecked();
    expect(within(dialog).getByRole("checkbox", { name: /^inference/ })).toBeChecked();
    await user.type(within(dialog).getByLabelText("Name"), "Claude");
    await user.click(within(dialog).getByRole("button", { name: "Create key" }));
    const done = await screen.findByRole("button", { name: "I have copied it" });
    // Behind the secret's dialog (inert while it is open), the configurations hold the new key...
    const behind = screen.getByRole("region", { name: "Connect an agent or editor (MCP)", hidden: true });
    expect(behind).toHaveTextContent("Filled in with the new key “Claude” until you close its dialog");
    expect(JSON.parse(behind.querySelector("pre")!.textContent)).toEqual(mcpConfig("claude-desktop", { origin: window.location.origin, apiKey: created.secret }));
    expect(create).toHaveBeenCalledTimes(1);
    // ...and once it is closed the secret is nowhere on the page: it is shown only that once.
    await user.click(done);
    await waitFor(() => expect(section()).toHaveTextContent("Replace psk-… with a key that can connect"));
    expect(document.body).not.toHaveTextContent(created.secret);
    await user.click(within(section()).getByRole("tab", { name: "VS Code" }));
    expect(within(section()).getByRole("tabpanel", { name: "VS Code" })).toHaveTextContent("${input:pustaka-key}");
  });

  it("says for each active key whether it can search and ask, and names the corpora it reaches", async () => {
    const keys = [
      apiKey({ id: "key_a", name: "Claude Desktop", prefix: "psk-aaaa", scopes: ["inference", "rag.read"] }),
      apiKey({ id: "key_b", name: "Search bot", prefix: "psk-bbbb", scopes: ["rag.read"] }),
      apiKey({ id: "key_c", name: "Embedder", prefix: "psk-cccc", scopes: ["inference"] }),
      apiKey({ id: "key_d", name: "Old", prefix: "psk-dddd", scopes: ["inference", "rag.read"], revoked_at: 1_790_000_100 }),
    ];
    renderWithApp(<KeysPage />, { principal: adminPrincipal, routes: mcpRoutes(keys, [corpus("corp_1", "Laporan banjir"), corpus("corp_2", "Taklimat nelayan")]) });
    await waitFor(() => expect(section()).toHaveTextContent("In this workspace: Laporan banjir, Taklimat nelayan."));
    expect(section()).toHaveTextContent("reaches every corpus of its own workspace, and nothing in other workspaces");
    const asks = await reachRow("Claude Desktop");
    expect(asks).toHaveTextContent("psk-aaaa…");
    expect(asks).toHaveTextContent("Search and ask");
    expect(asks).toHaveTextContent("All 2 corpora of this workspace");
    const searches = await reachRow("Search bot");
    expect(searches).toHaveTextContent("Search only");
    expect(searches).toHaveTextContent("All 2 corpora of this workspace");
    expect(searches).toHaveTextContent("Cannot ask for cited answers: that also needs inference.");
    const refused = await reachRow("Embedder");
    expect(refused).toHaveTextContent("Cannot connect");
    expect(refused).toHaveTextContent("MCP needs the rag.read scope. Create a new key for MCP");
    const rows = within(screen.getByRole("table", { name: "Which keys can connect, and what they reach" })).getAllByRole("rowheader");
    expect(rows.map((r) => r.textContent)).toEqual(["Claude Desktoppsk-aaaa…", "Search botpsk-bbbb…", "Embedderpsk-cccc…"]); // active keys only, those that connect first
  });

  it("says when no key can be used at all (every key revoked or expired)", async () => {
    const gone = [apiKey({ revoked_at: 1_790_000_100 }), apiKey({ id: "key_3", name: "Expired", expires_at: 1_790_000_100 })];
    renderWithApp(<KeysPage />, { principal: adminPrincipal, routes: mcpRoutes(gone, []) });
    await waitFor(() => expect(section()).toHaveTextContent("No active keys. Create one for MCP to connect a client."));
    expect(within(section()).queryByRole("table")).not.toBeInTheDocument();
  });

  it("says when there are no corpora yet, and links to the Corpora page", async () => {
    renderWithApp(<KeysPage />, { principal: adminPrincipal, routes: mcpRoutes([apiKey({ scopes: ["inference", "rag.read"] })], []) });
    const row = await reachRow("Notebook");
    expect(row).toHaveTextContent("No corpora yet; it will reach each one created here");
    expect(within(section()).getByRole("link", { name: "Create one under Corpora" })).toHaveAttribute("href", "#/corpora");
  });

  it("does not ask for corpora when the session lacks rag.read, and says why no names are shown", async () => {
    const session = { ...adminPrincipal, scopes: adminPrincipal.scopes.filter((s) => s !== "rag.read") };
    const { server } = renderWithApp(<KeysPage />, { principal: session, routes: mcpRoutes([apiKey({ scopes: ["inference", "rag.read"] })], []) });
    const row = await reachRow("Notebook");
    expect(row).toHaveTextContent("All corpora of this workspace");
    expect(section()).toHaveTextContent("This session's key lacks rag.read, so the corpus names are not shown here.");
    expect(server.calls.some((c) => c.path.startsWith("/v1/rag/corpora"))).toBe(false);
  });

  it("shows loading, then an error with a retry when the corpora cannot be listed", async () => {
    const user = userEvent.setup();
    let fail = true;
    renderWithApp(<KeysPage />, {
      principal: adminPrincipal,
      routes: mcpRoutes([apiKey({ scopes: ["rag.read"] })], [], { "GET /v1/rag/corpora": () => (fail ? apiError(503, "store_unavailable", "the store is busy", "service_unavailable_error") : list([corpus("corp_1", "Laporan banjir")])) }),
    });
    expect(within(await screen.findByRole("region", { name: "Connect an agent or editor (MCP)" })).getByText("Loading…")).toBeInTheDocument();
    const alert = await within(section()).findByRole("alert");
    expect(alert).toHaveTextContent("the store is busy");
    fail = false;
    await user.click(within(alert).getByRole("button", { name: "Try again" }));
    await waitFor(() => expect(section()).toHaveTextContent("In this workspace: Laporan banjir."));
  });

  it("reads in Bahasa Melayu", async () => {
    renderWithApp(<KeysPage />, { locale: "ms", principal: adminPrincipal, routes: mcpRoutes([apiKey({ scopes: ["rag.read"] })], [corpus("corp_1", "Laporan banjir")]) });
    const mcp = await screen.findByRole("region", { name: "Sambungkan ejen atau editor (MCP)" });
    const row = (await within(mcp).findByRole("rowheader", { name: /Notebook/ })).closest("tr")!;
    await waitFor(() => expect(row).toHaveTextContent("Satu-satunya korpus ruang kerja ini"));
    expect(row).toHaveTextContent("Cari sahaja");
    expect(within(mcp).getByRole("button", { name: "Salin URL MCP" })).toBeInTheDocument();
    expect(within(mcp).getByRole("tablist", { name: "Konfigurasi klien" })).toBeInTheDocument();
  });
});
