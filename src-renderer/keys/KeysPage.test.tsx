import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { ApiKey, Principal } from "../api/contract.js";
import { adminPrincipal, json, principal, renderWithApp, type Handler } from "../test-utils/render.js";
import { KeysPage } from "./KeysPage.js";

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
    const row = (await screen.findByText("Notebook")).closest("tr")!;
    expect(row).toHaveTextContent("default");
    await user.click(within(row).getByRole("button", { name: "Change the rate-limit tier of Notebook" }));
    const dialog = await screen.findByRole("dialog", { name: "Rate-limit tier of “Notebook”" });
    const input = within(dialog).getByLabelText("Tier");
    await user.clear(input);
    await user.type(input, "gold");
    await user.click(within(dialog).getByRole("button", { name: "Save tier" }));
    await waitFor(() => expect(patch).toHaveBeenCalledTimes(1));
    expect(patch.mock.calls[0]![0].body).toEqual({ rate_limit_tier: "gold" });
    await waitFor(() => expect(screen.getByText("Notebook").closest("tr")).toHaveTextContent("gold"));
  });

  it("does not offer tier changes without workspaces.manage, and keeps service accounts a tab away", async () => {
    const user = userEvent.setup();
    renderWithApp(<KeysPage />, { principal, routes: routes({ "GET /v1/admin/workspaces/ws_default/service_accounts": () => json({ object: "list", data: [], first_id: null, last_id: null, has_more: false }) }) });
    const row = (await screen.findByText("Notebook")).closest("tr")!;
    expect(within(row).queryByRole("button", { name: /rate-limit tier/ })).not.toBeInTheDocument();
    await user.click(screen.getByRole("tab", { name: "Service accounts" }));
    expect(await screen.findByRole("heading", { name: "No service accounts yet" })).toBeInTheDocument();
  });
});
