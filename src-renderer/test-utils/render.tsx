/** Test helpers: a fake server (route table → responses) and the providers around a component. */
import { QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { ApiProvider } from "../api/api-context.js";
import { ApiClient } from "../api/client.js";
import type { Principal } from "../api/contract.js";
import { createQueryClient } from "../App.js";
import { AuthContext } from "../auth/principal-context.js";
import { I18nProvider, type Locale } from "../i18n/i18n.js";

export type Handler = (req: { method: string; path: string; body: unknown; headers: Headers }) => Response | Promise<Response>;

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

export const apiError = (status: number, code: string, message = code, type = "invalid_request_error") => json({ error: { message, type, param: null, code } }, status);

/** A fetch that answers from `routes` ("GET /v1/me" → handler) and records every call. */
export function fakeFetch(routes: Record<string, Handler>) {
  const calls: { method: string; path: string; body: unknown; headers: Headers }[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString(), "http://127.0.0.1:7780");
    const method = init?.method ?? "GET";
    const headers = new Headers(init?.headers);
    let body: unknown = init?.body;
    if (typeof body === "string" && headers.get("content-type") === "application/json") body = JSON.parse(body);
    const call = { method, path: url.pathname + url.search, body, headers };
    calls.push(call);
    const handler = routes[`${method} ${url.pathname}`];
    if (!handler) return apiError(404, "unknown_url", `Unknown request URL: ${method} ${url.pathname}`, "not_found_error");
    return handler(call);
  };
  return { fetch: fetchImpl, calls };
}

const limit = { tier: "default", requests_per_minute: 60, tokens_per_minute: 100_000, remaining_requests: 60, remaining_tokens: 100_000, resets_at: 1 };
export const principal: Principal = {
  object: "principal",
  workspace_id: "ws_default",
  key_id: "key_1",
  key_name: "workbench",
  scopes: ["inference", "rag.read", "rag.write", "keys.manage"],
  rate_limits: { key: limit, workspace: limit },
};

/** The test principal with every scope (an administrator's session). */
export const adminPrincipal: Principal = { ...principal, scopes: ["inference", "rag.read", "rag.write", "keys.manage", "workspaces.manage", "audit.read", "metrics.read"] };

/** Renders `ui` inside the workbench's providers with a fake server. */
export function renderWithApp(ui: ReactElement, options: { routes?: Record<string, Handler>; locale?: Locale; credential?: string | null; principal?: Principal } = {}) {
  const server = fakeFetch(options.routes ?? {});
  const client = new ApiClient({ origin: "", credential: options.credential ?? null, fetch: server.fetch });
  const queryClient = createQueryClient();
  queryClient.setDefaultOptions({ queries: { retry: false, refetchOnWindowFocus: false } });
  const result = render(
    <I18nProvider initial={options.locale ?? "en"}>
      <ApiProvider client={client}>
        <QueryClientProvider client={queryClient}>
          <AuthContext.Provider value={{ principal: options.principal ?? principal, signOut: null }}>{ui}</AuthContext.Provider>
        </QueryClientProvider>
      </ApiProvider>
    </I18nProvider>,
  );
  return { ...result, server, client, queryClient };
}

/** An SSE response whose body arrives in the given pieces. */
export function sseResponse(pieces: string[]): Response {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
  return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
}
