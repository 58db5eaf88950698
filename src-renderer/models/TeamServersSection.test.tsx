import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Model, RemoteModel, RemoteModelTest } from "../api/contract.js";
import { adminPrincipal, apiError, json, principal, renderWithApp, type Handler } from "../test-utils/render.js";
import { ModelsPage } from "./ModelsPage.js";
import { HEALTH_REFRESH_MS, TeamServersSection } from "./TeamServersSection.js";

type Replica = RemoteModel["upstreams"][number];
const replica = (patch: Partial<Replica> = {}): Replica => ({
  id: "r1",
  url: "https://gpu1.example:8000/v1",
  model: "llama-3.1-8b-instruct",
  api_key: false,
  client_certificate: false,
  health: "healthy",
  in_flight: 0,
  queued: 0,
  requests: 0,
  failures: 0,
  last_error: null,
  ...patch,
});
const remote = (patch: Partial<RemoteModel> = {}): RemoteModel => ({
  id: "team-chat",
  object: "remote_model",
  type: "chat",
  source: "config",
  context_length: 8192,
  dimensions: null,
  created_at: null,
  upstreams: [replica()],
  ...patch,
});
const list = (data: RemoteModel[]) => json({ object: "list", data });
const BASE = "/v1/admin/remote-models";

/** A configured model, healthy, and one added here whose replicas fail in every way. */
const configured = remote({ upstreams: [replica({ api_key: true, in_flight: 2, queued: 1, requests: 1200, failures: 3 })] });
const added = remote({
  id: "gpu-70b",
  source: "admin",
  created_at: 1_790_000_000,
  upstreams: [
    replica({ id: "gpu2", url: "https://gpu2.example:8000/v1", model: "meta-llama/Llama-3.3-70B-Instruct", health: "ejected", last_error: "upstream gpu2 answered HTTP 502 three times in a row", client_certificate: true }),
    replica({ id: "gpu3", url: "https://gpu3.example:8000/v1", health: "down", last_error: "connect ECONNREFUSED 10.0.0.3:8000" }),
    replica({ id: "gpu4", url: "https://gpu4.example:8000/v1", health: "unknown" }),
  ],
});

function setup(routes: Record<string, Handler>, who = adminPrincipal, locale: "en" | "ms" = "en") {
  return renderWithApp(<TeamServersSection />, { principal: who, routes, locale });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("TeamServersSection", () => {
  it("lists each model with its source and every replica's server, health, load, last error and credentials", async () => {
    setup({ [`GET ${BASE}`]: () => list([configured, added]) });
    const section = await screen.findByRole("region", { name: "Team servers" });
    const chat = within(await within(section).findByRole("listitem", { name: "team-chat" }));
    expect(chat.getByText("Configuration file")).toBeInTheDocument();
    expect(chat.getByText("1 of 1 healthy")).toBeInTheDocument();
    expect(chat.getByText(/change or remove it there/)).toBeInTheDocument();
    const chatRow = within(chat.getAllByRole("row")[1]!);
    expect(chatRow.getByText("https://gpu1.example:8000/v1")).toBeInTheDocument();
    expect(chatRow.getByText("Healthy")).toBeInTheDocument();
    expect(chatRow.getByText("API key")).toBeInTheDocument();
    expect(chatRow.getByRole("cell", { name: /^2\s*\+1 queued$/ })).toBeInTheDocument();
    expect(chatRow.getByRole("cell", { name: /^1,200\s*3 failed$/ })).toBeInTheDocument();
    // Configured models are changed in the configuration, not here.
    expect(chat.queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();

    const big = within(within(section).getByRole("listitem", { name: "gpu-70b" }));
    expect(big.getByText("Added here")).toBeInTheDocument();
    expect(big.getByText("0 of 3 healthy")).toBeInTheDocument();
    const [, ejected, down, unchecked] = big.getAllByRole("row");
    expect(ejected).toHaveTextContent("Failing (ejected)");
    expect(ejected).toHaveTextContent("Client certificate");
    // The last error is text on the page, not a tooltip.
    expect(within(ejected!).getByText(/Last error:/)).toBeVisible();
    expect(ejected).toHaveTextContent("Last error: upstream gpu2 answered HTTP 502 three times in a row");
    expect(down).toHaveTextContent("Down");
    expect(down).toHaveTextContent("Last error: connect ECONNREFUSED 10.0.0.3:8000");
    expect(unchecked).toHaveTextContent("Not checked");
    expect(unchecked).toHaveTextContent("None");
    expect(big.getByRole("button", { name: "Remove gpu-70b" })).toBeInTheDocument();
  });

  it("refreshes the replicas' health every 5 seconds", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let health: Replica["health"] = "unknown";
    const get = vi.fn<Handler>(() => list([remote({ upstreams: [replica({ health })] })]));
    setup({ [`GET ${BASE}`]: get });
    expect(await screen.findByText("Not checked")).toBeInTheDocument();
    health = "healthy";
    await act(() => vi.advanceTimersByTimeAsync(HEALTH_REFRESH_MS));
    expect(await screen.findByText("Healthy")).toBeInTheDocument();
    expect(get).toHaveBeenCalledTimes(2);
  });

  it("explains what a team server is when there is none, in both languages", async () => {
    const { unmount } = setup({ [`GET ${BASE}`]: () => list([]) });
    const section = await screen.findByRole("region", { name: "Team servers" });
    expect(await within(section).findByRole("heading", { name: "No team servers yet" })).toBeInTheDocument();
    expect(section).toHaveTextContent(/A team server is an OpenAI-compatible inference server on your network/);
    expect(section).toHaveTextContent(/Pustaka tests the connection before adding it/);
    expect(within(section).getByRole("button", { name: "Add a team server" })).toBeInTheDocument();
    unmount();
    setup({ [`GET ${BASE}`]: () => list([]) }, adminPrincipal, "ms");
    const bahagian = await screen.findByRole("region", { name: "Pelayan pasukan" });
    expect(await within(bahagian).findByRole("heading", { name: "Belum ada pelayan pasukan" })).toBeInTheDocument();
    expect(within(bahagian).getByRole("button", { name: "Tambah pelayan pasukan" })).toBeInTheDocument();
  });

  it("tests a model's connection and shows each replica's answer: its latency, or its error", async () => {
    const user = userEvent.setup();
    const okTest: RemoteModelTest = { object: "remote_model.test", ok: true, upstreams: [{ id: "r1", url: "https://gpu1.example:8000/v1", ok: true, ms: 42, models: ["llama-3.1-8b-instruct"], serves_model: true, error: null }] };
    const failedTest: RemoteModelTest = {
      object: "remote_model.test",
      ok: false,
      upstreams: [
        { id: "gpu2", url: "https://gpu2.example:8000/v1", ok: true, ms: 1234, models: ["other-model", "another"], serves_model: null, error: null },
        { id: "gpu3", url: "https://gpu3.example:8000/v1", ok: false, ms: 5003, models: [], serves_model: null, error: "connect ECONNREFUSED 10.0.0.3:8000" },
        { id: "gpu4", url: "https://gpu4.example:8000/v1", ok: false, ms: 12, models: [], serves_model: null, error: "GET /models answered HTTP 401: invalid api key" },
      ],
    };
    const testChat = vi.fn<Handler>(() => json(okTest));
    setup({ [`GET ${BASE}`]: () => list([configured, added]), [`POST ${BASE}/team-chat/test`]: testChat, [`POST ${BASE}/gpu-70b/test`]: () => json(failedTest) });
    const chat = within(await screen.findByRole("listitem", { name: "team-chat" }));
    await user.click(chat.getByRole("button", { name: "Test connection to team-chat" }));
    expect(testChat).toHaveBeenCalledTimes(1);
    expect(await chat.findByText("Every replica answered.")).toBeInTheDocument();
    expect(chat.getByText("Answered in 42 ms")).toBeInTheDocument();
    expect(chat.getByText("· serves llama-3.1-8b-instruct", { exact: false })).toBeInTheDocument();

    const big = within(screen.getByRole("listitem", { name: "gpu-70b" }));
    await user.click(big.getByRole("button", { name: "Test connection to gpu-70b" }));
    expect(await big.findByText("2 of 3 replicas did not answer.")).toBeInTheDocument();
    expect(big.getByText("Answered in 1,234 ms")).toBeInTheDocument();
    expect(big.getByText(/does not list this model; it lists other-model, another/)).toBeInTheDocument();
    expect(big.getByText("Failed after 5,003 ms")).toBeInTheDocument();
    expect(big.getByText("connect ECONNREFUSED 10.0.0.3:8000", { selector: ".test-error" })).toBeInTheDocument();
    expect(big.getByText("GET /models answered HTTP 401: invalid api key")).toBeInTheDocument();
    // The answer is announced, and can be put away.
    expect(big.getByText("2 of 3 replicas did not answer.").closest("[aria-live]")).toHaveAttribute("aria-live", "polite");
    await user.click(big.getByRole("button", { name: "Dismiss" }));
    expect(big.queryByText("2 of 3 replicas did not answer.")).not.toBeInTheDocument();
  });

  it("adds a team server: tests it first, posts the replicas in the API's shape, and never shows the key again", async () => {
    const user = userEvent.setup();
    let models: RemoteModel[] = [];
    const tested: RemoteModelTest = {
      object: "remote_model.test",
      ok: true,
      upstreams: [
        { id: "r1", url: "https://gpu1.example:8000/v1", ok: true, ms: 18, models: ["bge-m3"], serves_model: true, error: null },
        { id: "r2", url: "https://gpu2.example:8000/v1", ok: true, ms: 25, models: ["team-embed"], serves_model: true, error: null },
      ],
    };
    const test = vi.fn<Handler>(() => json(tested));
    const created = remote({ id: "team-embed", type: "embedding", source: "admin", created_at: 1_790_000_000, upstreams: [replica({ model: "bge-m3", api_key: true, health: "unknown" }), replica({ id: "r2", url: "https://gpu2.example:8000/v1", model: "team-embed", health: "unknown" })] });
    const create = vi.fn<Handler>(() => {
      models = [created];
      return json(created, 201);
    });
    setup({ [`GET ${BASE}`]: () => list(models), [`POST ${BASE}/test`]: test, [`POST ${BASE}`]: create });
    const opener = await screen.findByRole("button", { name: "Add a team server" });
    await user.click(opener);
    const dialog = await screen.findByRole("dialog", { name: "Add a team server" });
    const form = within(dialog);
    expect(form.getByLabelText("Model id")).toHaveFocus();
    await user.type(form.getByLabelText("Model id"), "team-embed");
    await user.click(form.getByRole("radio", { name: "Embedding" }));
    await user.type(form.getByLabelText("Server URL, replica 1"), "https://gpu1.example:8000/v1");
    await user.type(form.getByLabelText("Upstream model, replica 1"), "bge-m3");
    const key = form.getByLabelText("API key, replica 1");
    expect(key).toHaveAttribute("type", "password");
    await user.type(key, "sk-very-secret-key");
    await user.click(form.getByRole("button", { name: "Add another replica" }));
    // The new replica's URL has the focus.
    expect(form.getByLabelText("Server URL, replica 2")).toHaveFocus();
    await user.keyboard("https://gpu2.example:8000/v1");

    await user.click(form.getByRole("button", { name: "Test connection" }));
    const body = {
      id: "team-embed",
      type: "embedding",
      upstreams: [{ url: "https://gpu1.example:8000/v1", model: "bge-m3", api_key: "sk-very-secret-key" }, { url: "https://gpu2.example:8000/v1" }],
    };
    await waitFor(() => expect(test).toHaveBeenCalledTimes(1));
    expect(test.mock.calls[0]![0].body).toEqual(body);
    expect(await form.findByText("Every replica answered.")).toBeInTheDocument();
    expect(form.getByText("Answered in 18 ms")).toBeInTheDocument();
    expect(form.getByText("Every replica answered.").closest("[aria-live]")).toHaveAttribute("aria-live", "polite");

    await user.click(form.getByRole("button", { name: "Add" }));
    await waitFor(() => expect(create).toHaveBeenCalledTimes(1));
    expect(create.mock.calls[0]![0].body).toEqual(body);
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    expect(await screen.findByRole("status")).toHaveTextContent("team-embed was added and is being served.");
    const card = within(await screen.findByRole("listitem", { name: "team-embed" }));
    expect(card.getByText("Added here")).toBeInTheDocument();
    expect(card.getByText("API key")).toBeInTheDocument();
    expect(document.body.innerHTML).not.toContain("sk-very-secret-key");
    // The opener (the empty state's button) is gone: the focus goes to the section's heading.
    await waitFor(() => expect(screen.getByRole("heading", { name: "Team servers" })).toHaveFocus());
  });

  it("shows the server's refusal at the field it concerns, and moves the focus there", async () => {
    const user = userEvent.setup();
    const message = "collector.example is not an allowed upstream: an administrator of this machine must list it in the configuration (upstreams.allowed) before a model can be pointed at it";
    const answers = [
      () => json({ error: { message, type: "permission_error", param: "upstreams.1.url", code: "upstream_not_allowed" } }, 403),
      // The server names no field for a taken id; it is still the id's.
      () => apiError(409, "model_id_taken", "the id 'exfil' is already in use", "conflict_error"),
    ];
    const create = vi.fn<Handler>(() => answers.shift()!());
    setup({ [`GET ${BASE}`]: () => list([configured]), [`POST ${BASE}`]: create });
    await user.click(await screen.findByRole("button", { name: "Add a team server" }));
    const form = within(await screen.findByRole("dialog", { name: "Add a team server" }));
    await user.type(form.getByLabelText("Model id"), "exfil");
    await user.type(form.getByLabelText("Server URL, replica 1"), "https://gpu1.example:8000/v1");
    await user.click(form.getByRole("button", { name: "Add another replica" }));
    await user.keyboard("https://collector.example/v1");
    await user.click(form.getByRole("button", { name: "Add" }));

    const url = form.getByLabelText("Server URL, replica 2");
    const alert = await form.findByRole("alert");
    expect(alert).toHaveTextContent("This server is not on this machine's list of allowed upstream servers.");
    expect(alert).toHaveTextContent(message);
    expect(url).toHaveAttribute("aria-invalid", "true");
    expect(url).toHaveAccessibleDescription(expect.stringContaining("collector.example is not an allowed upstream"));
    expect(url).toHaveFocus();
    expect(form.getByLabelText("Server URL, replica 1")).not.toHaveAttribute("aria-invalid");
    expect(screen.getByRole("dialog")).toBeInTheDocument();

    // Editing clears it; the next refusal (the id) is shown at the id.
    await user.clear(url);
    expect(form.queryByRole("alert")).not.toBeInTheDocument();
    await user.type(url, "https://gpu2.example:8000/v1");
    await user.click(form.getByRole("button", { name: "Add" }));
    const taken = await form.findByRole("alert");
    expect(taken).toHaveTextContent("A model with this id already exists. Choose another id. the id 'exfil' is already in use");
    expect(form.getByLabelText("Model id")).toHaveAttribute("aria-invalid", "true");
    expect(form.getByLabelText("Model id")).toHaveFocus();
    expect(create).toHaveBeenCalledTimes(2);
  });

  it("shows a refusal without a field below the form", async () => {
    const user = userEvent.setup();
    setup({ [`GET ${BASE}`]: () => list([]), [`POST ${BASE}/test`]: () => apiError(500, "internal_error", "the key provider is locked", "server_error") });
    await user.click(await screen.findByRole("button", { name: "Add a team server" }));
    const form = within(await screen.findByRole("dialog", { name: "Add a team server" }));
    await user.type(form.getByLabelText("Model id"), "team-chat");
    await user.type(form.getByLabelText("Server URL, replica 1"), "https://gpu1.example:8000/v1");
    await user.click(form.getByRole("button", { name: "Test connection" }));
    const alert = await form.findByRole("alert");
    expect(alert).toHaveTextContent("the key provider is locked");
    expect(form.getByLabelText("Server URL, replica 1")).not.toHaveAttribute("aria-invalid");
  });

  it("removes a model added here after asking, and offers no Remove for a configured one", async () => {
    const user = userEvent.setup();
    let models = [configured, added];
    const remove = vi.fn<Handler>(() => {
      models = [configured];
      return json({ id: "gpu-70b", object: "remote_model", deleted: true });
    });
    setup({ [`GET ${BASE}`]: () => list(models), [`DELETE ${BASE}/gpu-70b`]: remove });
    await screen.findByRole("listitem", { name: "gpu-70b" });
    expect(screen.queryByRole("button", { name: "Remove team-chat" })).not.toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Remove gpu-70b" }));
    const confirm = await screen.findByRole("alertdialog", { name: "Remove the team server “gpu-70b”?" });
    expect(confirm).toHaveTextContent("Requests for gpu-70b will fail until it is added again.");
    expect(remove).not.toHaveBeenCalled();
    await user.click(within(confirm).getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(remove).toHaveBeenCalledTimes(1));
    await waitFor(() => expect(screen.queryByRole("listitem", { name: "gpu-70b" })).not.toBeInTheDocument());
    expect(screen.getByRole("status")).toHaveTextContent("gpu-70b was removed.");
    expect(screen.getByRole("listitem", { name: "team-chat" })).toBeInTheDocument();
  });

  it("is not there for a key without workspaces.manage, and asks nothing of the admin API", () => {
    const { server } = setup({}, principal);
    expect(screen.queryByRole("region", { name: "Team servers" })).not.toBeInTheDocument();
    expect(server.calls.filter((c) => c.path.startsWith(BASE))).toHaveLength(0);
  });

  it("disappears, without an error, when the server refuses the admin API (403)", async () => {
    const get = vi.fn<Handler>(() => apiError(403, "insufficient_scope", "this API key lacks the 'workspaces.manage' scope", "permission_error"));
    setup({ [`GET ${BASE}`]: get });
    await waitFor(() => expect(get).toHaveBeenCalled());
    await waitFor(() => expect(screen.queryByRole("region", { name: "Team servers" })).not.toBeInTheDocument());
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Add a team server|Test connection|Remove/ })).not.toBeInTheDocument();
  });
});

describe("ModelsPage for a user without workspaces.manage", () => {
  it("still lists remote models with their replicas' health, without the team servers' controls", async () => {
    const remoteModel: Model = {
      id: "team-chat",
      object: "model",
      created: 1_790_000_000,
      owned_by: "pustaka",
      type: "chat",
      root: "team-chat",
      aliases: [],
      context_length: 8192,
      max_context_length: null,
      languages: [],
      license: null,
      is_default: true,
      backing: { kind: "remote", architecture: "remote", upstreams: [{ id: "r1", url: null, model: "llama", health: "healthy", in_flight: 0, last_error: null }] },
    };
    const admin = vi.fn<Handler>(() => apiError(403, "insufficient_scope", "this API key lacks the 'workspaces.manage' scope", "permission_error"));
    renderWithApp(<ModelsPage />, {
      principal,
      routes: {
        "GET /v1/models": () => json({ object: "list", data: [remoteModel] }),
        "GET /healthz": () => json({ status: "ok", version: "0.1.0", engine: { backend: "llama.cpp", gpu: false, threads: 2, build: null, loadedModels: [] } }),
        [`GET ${BASE}`]: admin,
      },
    });
    const installed = await screen.findByRole("region", { name: "Installed" });
    expect(await within(installed).findByText("team-chat")).toBeInTheDocument();
    expect(within(installed).getByText("1 of 1 healthy")).toBeInTheDocument();
    expect(screen.getByRole("heading", { name: "Models", level: 1 })).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Team servers" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Add a team server|Test connection/ })).not.toBeInTheDocument();
    expect(admin).not.toHaveBeenCalled();
  });
});
