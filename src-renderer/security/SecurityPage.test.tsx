import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { ApiKey, OllamaListener, SecurityStatus } from "../api/contract.js";
import { adminPrincipal, apiError, json, principal, renderWithApp, type Handler } from "../test-utils/render.js";
import { SecurityPage } from "./SecurityPage.js";

const status = (patch: Partial<SecurityStatus> = {}): SecurityStatus => ({
  object: "security",
  key_provider: { kind: "local-file", id: "local-file:/data/keys/kek.bin#v1", hardware_backed: false },
  audit: { signing_key_id: "ak_5f2c", chains: 2, entries: 1234 },
  oauth: { issuer: "http://127.0.0.1:7780", signing_key_ids: ["ok_1"], token_ttl_seconds: 900 },
  transport: { tls: false, host: "127.0.0.1:7780", loopback_only: true },
  ...patch,
});

const apiKey = (id: string, name: string, patch: Partial<ApiKey> = {}): ApiKey => ({
  id,
  object: "api_key",
  workspace_id: "ws_default",
  name,
  prefix: `psk-${id.slice(4, 8)}`,
  scopes: ["inference"],
  created_at: 1_700_000_000,
  expires_at: null,
  revoked_at: null,
  last_used_at: null,
  rate_limit_tier: "default",
  ...patch,
});

const KEYS = [
  apiKey("key_admn", "admin", { scopes: ["inference", "rag.read", "rag.write", "keys.manage", "workspaces.manage", "audit.read", "metrics.read"] }),
  apiKey("key_olla", "ollama-clients"),
  apiKey("key_rago", "rag-only", { scopes: ["rag.read"] }),
  apiKey("key_gone", "revoked", { revoked_at: 1_700_000_100 }),
  apiKey("key_past", "expired", { expires_at: 1_000 }),
];

const closedListener: OllamaListener = {
  object: "ollama_listener",
  status: "closed",
  listening: false,
  host: "127.0.0.1",
  port: null,
  url: null,
  default_port: 11434,
  key: null,
  workspace: null,
  opened_at: null,
  opened_by: null,
  problem: null,
};

const openListener = (port: number, key: ApiKey, patch: Partial<OllamaListener> = {}): OllamaListener => ({
  ...closedListener,
  status: "open",
  listening: true,
  port,
  url: `http://127.0.0.1:${port}`,
  key: { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, expires_at: key.expires_at, revoked_at: key.revoked_at },
  workspace: { id: "ws_default", name: "Default" },
  opened_at: 1_700_000_000,
  opened_by: "api_key:key_admn",
  ...patch,
});

describe("SecurityPage", () => {
  it("names the key provider and warns that the local key file is for development", async () => {
    renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: { "GET /v1/admin/security": () => json(status()) } });
    const provider = await screen.findByRole("region", { name: "Key protection" });
    expect(provider).toHaveTextContent("Local key file");
    expect(provider).toHaveTextContent("Key on this disk");
    expect(within(provider).getByRole("note")).toHaveTextContent("configure an HSM (PKCS#11)");
    expect(screen.getByRole("region", { name: "Audit trail" })).toHaveTextContent("ak_5f2c");
    expect(screen.getByRole("region", { name: "Audit trail" })).toHaveTextContent("1,234");
    const oauth = screen.getByRole("region", { name: "Service-account sign-in (OAuth 2.0)" });
    expect(oauth).toHaveTextContent("http://127.0.0.1:7780");
    expect(oauth).toHaveTextContent("15 minutes");
    const transport = screen.getByRole("region", { name: "Connections" });
    expect(transport).toHaveTextContent("Off");
    expect(transport).toHaveTextContent("This computer only");
    expect(within(transport).queryByRole("note")).not.toBeInTheDocument();
  });

  it("shows an HSM as hardware-backed without the warning, and warns when exposed without TLS", async () => {
    renderWithApp(<SecurityPage />, {
      principal: adminPrincipal,
      routes: { "GET /v1/admin/security": () => json(status({ key_provider: { kind: "pkcs11", id: "pkcs11:token/pustaka:kek-1", hardware_backed: true }, transport: { tls: false, host: "0.0.0.0:7780", loopback_only: false } })) },
    });
    const provider = await screen.findByRole("region", { name: "Key protection" });
    expect(provider).toHaveTextContent("Hardware security module (PKCS#11)");
    expect(provider).toHaveTextContent("Hardware-backed");
    expect(within(provider).queryByRole("note")).not.toBeInTheDocument();
    expect(within(screen.getByRole("region", { name: "Connections" })).getByRole("note")).toHaveTextContent("without TLS");
  });

  it("rotates the token signing key only after confirmation, then lists the new key as the signing one", async () => {
    const user = userEvent.setup();
    let kids = ["ok_1"];
    const rotate = vi.fn<Handler>(() => {
      kids = ["ok_2", "ok_1"];
      return json({ object: "oauth.signing_key", kid: "ok_2", published: kids });
    });
    const { server } = renderWithApp(<SecurityPage />, {
      principal: adminPrincipal,
      routes: { "GET /v1/admin/security": () => json(status({ oauth: { issuer: "http://127.0.0.1:7780", signing_key_ids: kids, token_ttl_seconds: 900 } })), "POST /v1/admin/oauth/rotate-signing-key": rotate },
    });
    const oauth = await screen.findByRole("region", { name: "Service-account sign-in (OAuth 2.0)" });
    expect(within(oauth).getByRole("listitem")).toHaveTextContent("ok_1Signing");
    await user.click(within(oauth).getByRole("button", { name: "Rotate token signing key" }));
    const confirm = await screen.findByRole("alertdialog", { name: "Rotate the token signing key?" });
    expect(confirm).toHaveTextContent("Tokens already issued keep working until they expire (at most 15 minutes)");
    await user.click(within(confirm).getByRole("button", { name: "Cancel" }));
    expect(rotate).not.toHaveBeenCalled();

    await user.click(within(oauth).getByRole("button", { name: "Rotate token signing key" }));
    await user.click(within(await screen.findByRole("alertdialog")).getByRole("button", { name: "Rotate key" }));
    await waitFor(() => expect(rotate).toHaveBeenCalledTimes(1));
    expect(within(oauth).getByRole("status")).toHaveTextContent("New tokens are now signed with: ok_2");
    await waitFor(() => expect(within(oauth).getAllByRole("listitem")).toHaveLength(2));
    const [newest, older] = within(oauth).getAllByRole("listitem");
    expect(newest).toHaveTextContent("ok_2Signing");
    expect(older).toHaveTextContent("ok_1Verifying only");
    expect(server.calls.filter((c) => c.method === "GET" && c.path === "/v1/admin/security")).toHaveLength(2);
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
  });

  it("explains a 403 instead of a blank page", async () => {
    renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: { "GET /v1/admin/security": () => apiError(403, "insufficient_scope", "this API key lacks the 'workspaces.manage' scope", "permission_error") } });
    expect(await screen.findByRole("heading", { name: "Security needs the workspaces.manage scope" })).toBeInTheDocument();
    expect(screen.getByText(/not allowed to see how this instance is secured/)).toBeInTheDocument();
  });

  it("explains without asking when the key lacks workspaces.manage", () => {
    const { server } = renderWithApp(<SecurityPage />, { principal, routes: {} });
    expect(screen.getByRole("heading", { name: "Security needs the workspaces.manage scope" })).toBeInTheDocument();
    expect(server.calls).toHaveLength(0);
  });

  it("says so when the server does not offer the security status yet", async () => {
    renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: {} });
    expect(await screen.findByRole("alert")).toHaveTextContent("This server does not offer that feature yet");
  });

  describe("the Ollama listener", () => {
    const routes = (listener: () => OllamaListener, extra: Record<string, Handler> = {}): Record<string, Handler> => ({
      "GET /v1/admin/security": () => json(status()),
      "GET /v1/admin/ollama-listener": () => json(listener()),
      "GET /v1/admin/workspaces/ws_default/api_keys": () => json({ object: "list", data: KEYS, first_id: "key_admn", last_id: "key_past", has_more: false }),
      ...extra,
    });

    it("opens it with a lendable key of the workspace after a plain warning, then shows its address, key, workspace and scopes", async () => {
      const user = userEvent.setup();
      let state = closedListener;
      const open = vi.fn<Handler>(({ body }) => {
        const { key_id, port } = body as { key_id: string; port: number };
        state = openListener(port, KEYS.find((k) => k.id === key_id)!);
        return json(state);
      });
      renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: routes(() => state, { "POST /v1/admin/ollama-listener": open }) });
      const card = await screen.findByRole("region", { name: "Ollama listener" });
      expect(await within(card).findByText("Closed")).toBeInTheDocument();
      const select = await within(card).findByRole("combobox", { name: "Key it acts as" });
      // Only active keys without administrative scopes are offered.
      expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual(["ollama-clients (psk-olla…) — inference", "rag-only (psk-rago…) — rag.read"]);
      expect(within(card).getByRole("textbox", { name: "Port" })).toHaveValue("11434");
      expect(within(card).getByRole("note")).toHaveTextContent("any program on this computer can use this key's access");
      await user.click(within(card).getByRole("button", { name: "Open listener" }));
      await waitFor(() => expect(open).toHaveBeenCalledTimes(1));
      expect(open.mock.calls[0]![0].body).toEqual({ key_id: "key_olla", port: 11434 });
      await waitFor(() => expect(within(card).getByText("Open")).toBeInTheDocument());
      expect(card).toHaveTextContent("http://127.0.0.1:11434");
      expect(card).toHaveTextContent("ollama-clients (psk-olla…)");
      expect(card).toHaveTextContent("Default (ws_default)");
      expect(card).toHaveTextContent("OLLAMA_HOST=http://127.0.0.1:11434");
      expect(within(card).getByRole("note")).toHaveTextContent("without the key");
      expect(within(card).queryByRole("combobox")).not.toBeInTheDocument();
    });

    it("moves an open listener to another key and port, keeping the form's choice", async () => {
      const user = userEvent.setup();
      let state = openListener(11434, KEYS[1]!);
      const open = vi.fn<Handler>(({ body }) => {
        const { key_id, port } = body as { key_id: string; port: number };
        state = openListener(port, KEYS.find((k) => k.id === key_id)!);
        return json(state);
      });
      renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: routes(() => state, { "POST /v1/admin/ollama-listener": open }) });
      const card = await screen.findByRole("region", { name: "Ollama listener" });
      await user.click(await within(card).findByRole("button", { name: "Change key or port" }));
      const select = await within(card).findByRole("combobox", { name: "Key it acts as" });
      expect(select).toHaveValue("key_olla");
      await user.selectOptions(select, "key_rago");
      const port = within(card).getByRole("textbox", { name: "Port" });
      await user.clear(port);
      await user.type(port, "70000");
      expect(within(card).getByRole("button", { name: "Move listener" })).toBeDisabled();
      await user.clear(port);
      await user.type(port, "11500");
      await user.click(within(card).getByRole("button", { name: "Move listener" }));
      await waitFor(() => expect(open).toHaveBeenCalledTimes(1));
      expect(open.mock.calls[0]![0].body).toEqual({ key_id: "key_rago", port: 11500 });
      await waitFor(() => expect(card).toHaveTextContent("http://127.0.0.1:11500"));
      expect(card).toHaveTextContent("rag-only");
    });

    it("shows the server's refusal of a busy port, and changes nothing", async () => {
      const user = userEvent.setup();
      const busy = vi.fn<Handler>(() => apiError(409, "port_in_use", "port 11434 on 127.0.0.1 is already in use (is Ollama itself running?); stop what uses it or choose another port", "conflict_error"));
      renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: routes(() => closedListener, { "POST /v1/admin/ollama-listener": busy }) });
      const card = await screen.findByRole("region", { name: "Ollama listener" });
      await user.click(await within(card).findByRole("button", { name: "Open listener" }));
      expect(await within(card).findByRole("alert")).toHaveTextContent("is Ollama itself running?");
      expect(within(card).getByText("Closed")).toBeInTheDocument();
    });

    it("shows a listener whose key was revoked as not working, with why, and closes it", async () => {
      const user = userEvent.setup();
      let state = openListener(11434, KEYS[3]!, { status: "broken", problem: { code: "revoked_api_key", message: "the API key 'revoked' (psk-gone…) has been revoked" } });
      const close = vi.fn<Handler>(() => {
        state = closedListener;
        return json(state);
      });
      renderWithApp(<SecurityPage />, { principal: adminPrincipal, routes: routes(() => state, { "DELETE /v1/admin/ollama-listener": close }) });
      const card = await screen.findByRole("region", { name: "Ollama listener" });
      expect(await within(card).findByText("Not working")).toBeInTheDocument();
      const [why] = within(card).getAllByRole("note");
      expect(why).toHaveTextContent("Its key has been revoked, so clients get 401");
      expect(why).toHaveTextContent("psk-gone");
      // It can be opened again at once with another key.
      expect(await within(card).findByRole("combobox", { name: "Key it acts as" })).toHaveValue("key_olla");
      await user.click(within(card).getByRole("button", { name: "Close listener" }));
      await waitFor(() => expect(close).toHaveBeenCalledTimes(1));
      expect(await within(card).findByText("Closed")).toBeInTheDocument();
      expect(card).not.toHaveTextContent("psk-gone");
    });

    it("says which key to create when none can be lent", async () => {
      renderWithApp(<SecurityPage />, {
        principal: adminPrincipal,
        routes: { ...routes(() => closedListener), "GET /v1/admin/workspaces/ws_default/api_keys": () => json({ object: "list", data: [KEYS[0], KEYS[3]], first_id: null, last_id: null, has_more: false }) },
      });
      const card = await screen.findByRole("region", { name: "Ollama listener" });
      expect(await within(card).findByText(/No key of this workspace can be lent/)).toBeInTheDocument();
      expect(within(card).getByRole("link", { name: "Go to Keys & connection" })).toHaveAttribute("href", expect.stringContaining("keys"));
      expect(within(card).queryByRole("button", { name: "Open listener" })).not.toBeInTheDocument();
    });

    it("speaks Malay", async () => {
      renderWithApp(<SecurityPage />, { principal: adminPrincipal, locale: "ms", routes: routes(() => openListener(11434, KEYS[1]!)) });
      const card = await screen.findByRole("region", { name: "Pendengar Ollama" });
      expect(await within(card).findByText("Dibuka")).toBeInTheDocument();
      expect(within(card).getByRole("note")).toHaveTextContent("mana-mana program pada komputer ini boleh menggunakan akses kunci ini");
      expect(within(card).getByRole("button", { name: "Tutup pendengar" })).toBeInTheDocument();
    });
  });
});
