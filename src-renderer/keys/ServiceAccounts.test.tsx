import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { CreatedServiceAccount, ServiceAccount } from "../api/contract.js";
import { adminPrincipal, json, principal, renderWithApp, type Handler } from "../test-utils/render.js";
import { ServiceAccounts } from "./ServiceAccounts.js";

const account = (patch: Partial<ServiceAccount> = {}): ServiceAccount => ({
  id: "sa_nightly",
  object: "service_account",
  workspace_id: "ws_default",
  name: "Nightly job",
  client_id: "sa_nightly",
  scopes: ["rag.read", "rag.write"],
  auth_methods: ["client_secret"],
  secret_prefix: "pss-abcd",
  public_key: null,
  disabled_at: null,
  created_at: 1_790_000_000,
  last_token_at: null,
  rate_limit_tier: "default",
  ...patch,
});
const list = (data: ServiceAccount[]) => json({ object: "list", data, first_id: null, last_id: null, has_more: false });
const BASE = "/v1/admin/workspaces/ws_default/service_accounts";

function setup(routes: Record<string, Handler>, who = adminPrincipal) {
  return renderWithApp(<ServiceAccounts workspaceId="ws_default" />, { principal: who, routes });
}

describe("ServiceAccounts", () => {
  it("creates an account and shows its secret once, with the token request to paste", async () => {
    const user = userEvent.setup();
    let accounts: ServiceAccount[] = [];
    const created: CreatedServiceAccount = { ...account({ name: "Indexer" }), client_secret: "pss-s3cr3t-once" };
    const create = vi.fn<Handler>(({ body }) => {
      accounts = [account({ name: "Indexer" })];
      return json({ ...created, scopes: (body as { scopes: string[] }).scopes }, 201);
    });
    setup({ [`GET ${BASE}`]: () => list(accounts), [`POST ${BASE}`]: create });
    expect(await screen.findByRole("heading", { name: "No service accounts yet" })).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "New service account" }));
    const dialog = await screen.findByRole("dialog", { name: "New service account" });
    await user.type(within(dialog).getByLabelText("Name"), "Indexer");
    await user.click(within(dialog).getByRole("checkbox", { name: /rag\.write/ }));
    await user.click(within(dialog).getByRole("button", { name: "Create service account" }));
    expect(create).toHaveBeenCalledTimes(1);
    expect(create.mock.calls[0]![0].body).toEqual({ name: "Indexer", scopes: ["inference", "rag.read", "rag.write"] });
    const shown = await screen.findByRole("dialog", { name: "Service account “Indexer” created" });
    expect(within(shown).getByLabelText("The new client secret")).toHaveTextContent("pss-s3cr3t-once");
    expect(within(shown).getByText(/curl -u/).textContent).toBe("curl -u sa_nightly:pss-s3cr3t-once \\\n  -d grant_type=client_credentials \\\n  http://localhost:3000/v1/oauth/token");
    await user.click(within(shown).getByRole("button", { name: "I have copied it" }));
    await waitFor(() => expect(screen.queryByText(/pss-s3cr3t-once/)).not.toBeInTheDocument());
    expect(await screen.findByText("Indexer")).toBeInTheDocument();
  });

  it("refuses a public key that is not a JSON object, and sends a valid one", async () => {
    const user = userEvent.setup();
    const create = vi.fn<Handler>(() => json({ ...account({ auth_methods: ["private_key_jwt"], secret_prefix: null }), client_secret: null }, 201));
    setup({ [`GET ${BASE}`]: () => list([]), [`POST ${BASE}`]: create });
    await user.click(await screen.findByRole("button", { name: "New service account" }));
    const dialog = await screen.findByRole("dialog");
    await user.type(within(dialog).getByLabelText("Name"), "Signer");
    const jwk = within(dialog).getByLabelText("Public key (JWK, optional)");
    await user.type(jwk, "not json");
    await user.click(within(dialog).getByRole("button", { name: "Create service account" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("This is not a JSON object");
    expect(jwk).toHaveAttribute("aria-invalid", "true");
    expect(create).not.toHaveBeenCalled();
    await user.clear(jwk);
    await user.click(jwk);
    await user.paste('{"kty":"OKP","crv":"Ed25519","x":"abc"}');
    await user.click(within(dialog).getByRole("button", { name: "Create service account" }));
    await waitFor(() => expect(create).toHaveBeenCalledTimes(1));
    expect(create.mock.calls[0]![0].body).toMatchObject({ name: "Signer", public_key: { kty: "OKP", crv: "Ed25519", x: "abc" } });
    expect(await screen.findByText(/signs in with its public key: no secret was made/)).toBeInTheDocument();
  });

  it("disables with a PATCH, then offers to enable", async () => {
    const user = userEvent.setup();
    let current = account();
    const patch = vi.fn<Handler>(({ body }) => {
      current = account({ disabled_at: (body as { disabled: boolean }).disabled ? 1_790_000_100 : null });
      return json(current);
    });
    setup({ [`GET ${BASE}`]: () => list([current]), [`PATCH ${BASE}/sa_nightly`]: patch });
    await user.click(await screen.findByRole("button", { name: "Disable Nightly job" }));
    await waitFor(() => expect(patch).toHaveBeenCalledTimes(1));
    expect(patch.mock.calls[0]![0].body).toEqual({ disabled: true });
    expect(await screen.findByRole("button", { name: "Enable Nightly job" })).toBeInTheDocument();
    expect(screen.getByText("Disabled")).toBeInTheDocument();
  });

  it("rotates the secret after confirmation and shows the new one", async () => {
    const user = userEvent.setup();
    const rotate = vi.fn<Handler>(() => json({ ...account(), client_secret: "pss-rotated" }));
    setup({ [`GET ${BASE}`]: () => list([account()]), [`POST ${BASE}/sa_nightly/secret`]: rotate });
    await user.click(await screen.findByRole("button", { name: "Rotate the secret of Nightly job" }));
    const confirm = await screen.findByRole("alertdialog", { name: "Rotate the secret of “Nightly job”?" });
    expect(rotate).not.toHaveBeenCalled();
    await user.click(within(confirm).getByRole("button", { name: "Rotate secret" }));
    const shown = await screen.findByRole("dialog", { name: "New secret for “Nightly job”" });
    expect(within(shown).getByLabelText("The new client secret")).toHaveTextContent("pss-rotated");
  });

  it("shows each account's tier and lets an administrator change it with a PATCH", async () => {
    const user = userEvent.setup();
    let current = account();
    const patch = vi.fn<Handler>(({ body }) => {
      current = account({ rate_limit_tier: (body as { rate_limit_tier: string | null }).rate_limit_tier ?? "default" });
      return json(current);
    });
    setup({ [`GET ${BASE}`]: () => list([current]), [`PATCH ${BASE}/sa_nightly`]: patch });
    const row = (await screen.findByText("Nightly job")).closest("tr")!;
    expect(row).toHaveTextContent("Tier: default");
    await user.click(within(row).getByRole("button", { name: "Change the rate-limit tier of Nightly job" }));
    const dialog = await screen.findByRole("dialog", { name: "Rate-limit tier of “Nightly job”" });
    expect(dialog).toHaveTextContent("this service account's tokens may use");
    const input = within(dialog).getByLabelText("Tier");
    await user.clear(input);
    await user.type(input, "batch");
    await user.click(within(dialog).getByRole("button", { name: "Save tier" }));
    await waitFor(() => expect(patch).toHaveBeenCalledTimes(1));
    expect(patch.mock.calls[0]![0].body).toEqual({ rate_limit_tier: "batch" });
    await waitFor(() => expect(screen.getByText("Nightly job").closest("tr")).toHaveTextContent("Tier: batch"));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();

    await user.click(within(screen.getByText("Nightly job").closest("tr")!).getByRole("button", { name: "Change the rate-limit tier of Nightly job" }));
    const again = await screen.findByRole("dialog", { name: "Rate-limit tier of “Nightly job”" });
    await user.click(within(again).getByRole("checkbox", { name: "Use the default tier" }));
    await user.click(within(again).getByRole("button", { name: "Save tier" }));
    await waitFor(() => expect(patch).toHaveBeenCalledTimes(2));
    expect(patch.mock.calls[1]![0].body).toEqual({ rate_limit_tier: null });
    await waitFor(() => expect(screen.getByText("Nightly job").closest("tr")).toHaveTextContent("Tier: default"));
  });

  it("shows the tier without offering a change to a key without workspaces.manage", async () => {
    setup({ [`GET ${BASE}`]: () => list([account({ rate_limit_tier: "batch" })]) }, principal);
    const row = (await screen.findByText("Nightly job")).closest("tr")!;
    expect(row).toHaveTextContent("Tier: batch");
    expect(within(row).queryByRole("button", { name: /rate-limit tier/ })).not.toBeInTheDocument();
  });

  it("deletes only after confirmation", async () => {
    const user = userEvent.setup();
    let accounts = [account()];
    const remove = vi.fn<Handler>(() => {
      accounts = [];
      return json({ id: "sa_nightly", object: "service_account.deleted", deleted: true });
    });
    setup({ [`GET ${BASE}`]: () => list(accounts), [`DELETE ${BASE}/sa_nightly`]: remove });
    await user.click(await screen.findByRole("button", { name: "Delete Nightly job" }));
    const confirm = await screen.findByRole("alertdialog", { name: "Delete “Nightly job”?" });
    expect(confirm).toHaveTextContent("can never sign in again");
    await user.click(within(confirm).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(remove).toHaveBeenCalledTimes(1));
    expect(await screen.findByRole("heading", { name: "No service accounts yet" })).toBeInTheDocument();
  });

  it("says so when the server does not offer service accounts yet", async () => {
    setup({});
    expect(await screen.findByRole("alert")).toHaveTextContent("This server does not offer that feature yet");
  });
});
