import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { SecurityStatus } from "../api/contract.js";
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
});
