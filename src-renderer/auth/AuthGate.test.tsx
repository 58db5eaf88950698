import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ApiProvider } from "../api/api-context.js";
import { ApiClient } from "../api/client.js";
import { createQueryClient } from "../App.js";
import { I18nProvider } from "../i18n/i18n.js";
import { apiError, fakeFetch, json, principal, type Handler } from "../test-utils/render.js";
import { AuthGate } from "./AuthGate.js";
import { useAuth } from "./principal-context.js";

function Who() {
  return <p>signed in as {useAuth().principal.key_name}</p>;
}

function mount(routes: Record<string, Handler>) {
  const server = fakeFetch(routes);
  const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
  const queryClient = createQueryClient();
  queryClient.setDefaultOptions({ queries: { retry: false } });
  render(
    <I18nProvider initial="en">
      <ApiProvider client={client}>
        <QueryClientProvider client={queryClient}>
          <AuthGate>
            <Who />
          </AuthGate>
        </QueryClientProvider>
      </ApiProvider>
    </I18nProvider>,
  );
  return server;
}

describe("AuthGate", () => {
  it("signs in with the link's token, then drops it from the address bar", async () => {
    window.history.replaceState(null, "", "/#signin=psi-token123");
    let signedIn = false;
    const server = mount({
      "POST /v1/session": () => {
        signedIn = true;
        return json({ object: "session", expires_at: 9, principal }, 201);
      },
      "GET /v1/me": () => (signedIn ? json(principal) : apiError(401, "missing_api_key", "no key", "authentication_error")),
    });
    expect(await screen.findByText("signed in as workbench")).toBeInTheDocument();
    const post = server.calls.find((c) => c.method === "POST")!;
    expect(post.body).toEqual({ token: "psi-token123" });
    expect(post.headers.get("x-pustaka-csrf")).toBe("1");
    expect(window.location.hash).not.toContain("signin");
  });

  it("explains how to sign in when there is no session", async () => {
    window.history.replaceState(null, "", "/");
    mount({ "GET /v1/me": () => apiError(401, "invalid_session", "session expired", "authentication_error") });
    expect(await screen.findByRole("heading", { name: /sign in to pustaka/i })).toBeInTheDocument();
    expect(screen.getByText(/npm start/)).toBeInTheDocument();
    expect(screen.queryByText(/signed in as/)).not.toBeInTheDocument();
  });

  it("shows why a used sign-in link failed", async () => {
    window.history.replaceState(null, "", "/#signin=psi-used");
    mount({
      "POST /v1/session": () => apiError(401, "invalid_sign_in_token", "unknown or used token", "authentication_error"),
      "GET /v1/me": () => apiError(401, "missing_api_key", "no key", "authentication_error"),
    });
    expect(await screen.findByText(/not valid any more/)).toBeInTheDocument();
    await waitFor(() => expect(window.location.hash).not.toContain("signin"));
  });
});
