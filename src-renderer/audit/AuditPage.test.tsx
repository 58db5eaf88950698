import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AuditEvent, AuditVerification } from "../api/contract.js";
import { adminPrincipal, apiError, json, principal, renderWithApp, type Handler } from "../test-utils/render.js";
import { AuditPage } from "./AuditPage.js";

const event = (seq: number, patch: Partial<AuditEvent> = {}): AuditEvent => ({
  object: "audit.event",
  id: `aud_${seq}`,
  chain: "ws_default",
  seq,
  time: new Date(Date.UTC(2026, 10, 22, 10, seq)).toISOString(),
  type: "chat.completion",
  actor: "api_key:key_1",
  outcome: "success",
  request_id: `req_${seq}`,
  data: { model: "svc-merlion-13b", prompt_sha256: "ab".repeat(32), prompt_tokens: 12, completion_tokens: 30, status: 200, latency_ms: 812 },
  prev_hash: `${seq - 1}`.padStart(64, "0"),
  hash: `${seq}`.padStart(64, "f"),
  ...patch,
});

const page = (data: AuditEvent[], hasMore = false) => json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
const key = { object: "audit.signing_key", key_id: "ak_1234", public_key: "MCow", public_key_pem: "-----BEGIN PUBLIC KEY-----\nMCow\n-----END PUBLIC KEY-----\n" };
const routes = (extra: Record<string, Handler> = {}): Record<string, Handler> => ({
  "GET /v1/audit/events": () => page([event(2), event(1, { type: "document.upload", outcome: "failure", data: { corpus_id: "corp_1", reason: "unsupported_file_type", status: 415 } })]),
  "GET /v1/audit/signing-key": () => json(key),
  ...extra,
});
const adminOf = { principal: adminPrincipal };

describe("AuditPage", () => {
  it("lists entries with their key facts and opens one in full, hashes included", async () => {
    const user = userEvent.setup();
    renderWithApp(<AuditPage />, { ...adminOf, routes: routes() });
    const table = await screen.findByRole("table", { name: "Audit log" });
    expect(within(table).getByText("chat.completion")).toBeInTheDocument();
    expect(within(table).getByText("svc-merlion-13b")).toBeInTheDocument();
    expect(within(table).getByText("42 tokens")).toBeInTheDocument();
    expect(within(table).getByText("unsupported_file_type")).toHaveClass("fact-bad");
    await user.click(within(table).getAllByRole("button", { name: /Details of chat\.completion/ })[0]!);
    const drawer = await screen.findByRole("dialog", { name: "chat.completion" });
    expect(drawer).toHaveTextContent("f".repeat(63) + "2");
    expect(drawer).toHaveTextContent("0".repeat(63) + "1");
    expect(drawer).toHaveTextContent("prompt_sha256");
    expect(drawer).toHaveTextContent("req_2");
  });

  it("asks the server for what the filters say, and loads more after the last entry", async () => {
    const user = userEvent.setup();
    const { server } = renderWithApp(<AuditPage />, {
      ...adminOf,
      routes: routes({ "GET /v1/audit/events": (req) => (req.path.includes("after=") ? page([event(1)]) : page([event(3), event(2)], true)) }),
    });
    await screen.findByRole("table");
    await user.selectOptions(screen.getByLabelText("Event type"), "Documents");
    await user.selectOptions(screen.getByLabelText("Outcome"), "Failure");
    await user.selectOptions(screen.getByLabelText("Time"), "Last 24 hours");
    await waitFor(() => {
      const last = server.calls.filter((c) => c.path.startsWith("/v1/audit/events")).at(-1)!;
      const params = new URL(last.path, "http://x").searchParams;
      expect(params.get("type")).toBe("document.");
      expect(params.get("outcome")).toBe("failure");
      expect(Date.now() - Date.parse(params.get("since")!)).toBeGreaterThan(23.9 * 3600_000);
      expect(params.get("limit")).toBe("50");
    });
    await user.click(await screen.findByRole("button", { name: "Load more" }));
    await waitFor(() => expect(server.calls.some((c) => c.path.includes("after=aud_2") && c.path.includes("type=document."))).toBe(true));
    expect(await screen.findByText("3 entries shown")).toBeInTheDocument();
  });

  it("shows an intact trail with the count and the time it took", async () => {
    const user = userEvent.setup();
    const valid: AuditVerification = { object: "audit.verification", valid: true, chains: [{ chain: "ws_default", count: 1234, head_seq: 1234, head_hash: "f".repeat(64), signed_head_seq: 1234 }], first_problem: null, problems: [], checked_entries: 1234, ms: 41.6 };
    renderWithApp(<AuditPage />, { ...adminOf, routes: routes({ "GET /v1/audit/verify": () => json(valid) }) });
    await user.click(await screen.findByRole("button", { name: "Verify integrity" }));
    const status = await screen.findByRole("status", { name: "" });
    expect(status).toHaveTextContent("The audit trail is intact");
    expect(status).toHaveTextContent("1,234 entries in 1 chain checked in 42 ms");
  });

  it("shows a broken trail's first broken link and every problem in plain words", async () => {
    const user = userEvent.setup();
    const broken: AuditVerification = {
      object: "audit.verification",
      valid: false,
      chains: [{ chain: "ws_default", count: 20, head_seq: 20, head_hash: "f".repeat(64), signed_head_seq: 20 }],
      first_problem: { chain: "ws_default", seq: 7, id: "aud_7", reason: "hash_mismatch", message: "hash does not match" },
      problems: [
        { chain: "ws_default", seq: 7, id: "aud_7", reason: "hash_mismatch", message: "hash does not match" },
        { chain: "ws_default", seq: 8, id: "aud_8", reason: "broken_link", message: "prev_hash differs" },
        { chain: "ws_default", seq: null, id: null, reason: "append_only_disabled", message: "trigger missing" },
      ],
      checked_entries: 20,
      ms: 3,
    };
    renderWithApp(<AuditPage />, { ...adminOf, routes: routes({ "GET /v1/audit/verify": () => json(broken) }) });
    await user.click(await screen.findByRole("button", { name: "Verify integrity" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The audit trail has been altered or damaged");
    expect(alert).toHaveTextContent("Entry #7 of chain ws_default was changed after it was written");
    expect(alert).toHaveTextContent("All problems found (3)");
    expect(alert).toHaveTextContent("Entry #8 of chain ws_default does not link to the entry before it");
    expect(alert).toHaveTextContent("Chain ws_default: the database's append-only protection has been switched off.");
    expect(alert).not.toHaveTextContent("The audit trail is intact");
  });

  describe("export", () => {
    let clicked: HTMLAnchorElement[];
    beforeEach(() => {
      clicked = [];
      URL.createObjectURL = vi.fn(() => "blob:pustaka/1");
      URL.revokeObjectURL = vi.fn();
      vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
        clicked.push(this);
      });
    });
    afterEach(() => vi.restoreAllMocks());

    it("downloads the JSONL export of the chosen time range under the server's file name", async () => {
      const user = userEvent.setup();
      const exported = vi.fn<Handler>(() => new Response('{"object":"audit.event"}\n', { headers: { "content-type": "application/x-ndjson", "content-disposition": 'attachment; filename="pustaka-audit-2026.jsonl"' } }));
      const { server } = renderWithApp(<AuditPage />, { ...adminOf, routes: routes({ "GET /v1/audit/export": exported }) });
      await screen.findByRole("table");
      await user.selectOptions(screen.getByLabelText("Time"), "Last 7 days");
      await user.click(screen.getByRole("button", { name: "Export JSONL" }));
      await waitFor(() => expect(clicked).toHaveLength(1));
      const call = server.calls.find((c) => c.path.startsWith("/v1/audit/export"))!;
      const params = new URL(call.path, "http://x").searchParams;
      expect(params.get("format")).toBe("jsonl");
      expect(Date.now() - Date.parse(params.get("since")!)).toBeGreaterThan(6.9 * 86_400_000);
      expect(clicked[0]!.download).toBe("pustaka-audit-2026.jsonl");
      expect(clicked[0]!.href).toBe("blob:pustaka/1");
      expect(await screen.findByText("Saved pustaka-audit-2026.jsonl.")).toBeInTheDocument();
    });
  });

  it("explains a 403 from the server instead of showing a blank page", async () => {
    renderWithApp(<AuditPage />, { ...adminOf, routes: { "GET /v1/audit/events": () => apiError(403, "insufficient_scope", "this API key lacks the 'audit.read' scope", "permission_error") } });
    expect(await screen.findByRole("heading", { name: "Audit log needs the audit.read scope" })).toBeInTheDocument();
    expect(screen.getByText("lacks the 'audit.read' scope", { exact: false })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Go to Keys & connection" })).toHaveAttribute("href", "#/keys");
  });

  it("explains, in Malay too, without asking the server, when the key lacks audit.read", async () => {
    const { server } = renderWithApp(<AuditPage />, { locale: "ms", principal, routes: routes() });
    expect(await screen.findByRole("heading", { name: "Log audit memerlukan skop audit.read" })).toBeInTheDocument();
    expect(server.calls).toHaveLength(0);
  });

  it("shows a designed empty state, and a different one when filters match nothing", async () => {
    const user = userEvent.setup();
    renderWithApp(<AuditPage />, { ...adminOf, routes: routes({ "GET /v1/audit/events": () => page([]) }) });
    expect(await screen.findByRole("heading", { name: "No audit entries yet" })).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText("Outcome"), "Failure");
    expect(await screen.findByRole("heading", { name: "No entries match these filters" })).toBeInTheDocument();
  });
});
