import { describe, expect, it } from "vitest";
import { fakeFetch, json, apiError } from "../test-utils/render.js";
import { ApiError, isMissingEndpoint } from "./api-error.js";
import { ApiClient } from "./client.js";
import { describeError } from "../i18n/describe-error.js";
import { translate } from "../i18n/i18n.js";

describe("ApiClient", () => {
  it("sends the bearer credential in desktop mode", async () => {
    const server = fakeFetch({ "GET /v1/me": () => json({ ok: 1 }) });
    const client = new ApiClient({ origin: "http://127.0.0.1:7780", credential: "psk-secret", fetch: server.fetch });
    await client.json("GET", "/v1/me");
    expect(server.calls[0]!.headers.get("authorization")).toBe("Bearer psk-secret");
  });

  it("relies on the cookie and sends the CSRF header in browser mode", async () => {
    const server = fakeFetch({ "GET /v1/me": () => json({ ok: 1 }) });
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    await client.json("GET", "/v1/me");
    expect(server.calls[0]!.headers.get("authorization")).toBeNull();
    expect(server.calls[0]!.headers.get("x-pustaka-csrf")).toBe("1");
  });

  it("turns an error body into an ApiError with code, type, param and Retry-After", async () => {
    const server = fakeFetch({
      "POST /v1/chat/completions": () =>
        json({ error: { message: "slow down", type: "rate_limit_error", param: null, code: "rate_limit_exceeded" } }, 429, { "retry-after": "7" }),
    });
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    const error = await client.json("POST", "/v1/chat/completions", { json: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    const e = error as ApiError;
    expect([e.status, e.code, e.type, e.retryAfter, e.message]).toEqual([429, "rate_limit_exceeded", "rate_limit_error", 7, "slow down"]);
  });

  it("maps a non-JSON failure by its status", async () => {
    const client = new ApiClient({ origin: "", credential: null, fetch: (async () => new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway" })) });
    const e = (await client.json("GET", "/v1/models").catch((x: unknown) => x)) as ApiError;
    expect(e.status).toBe(502);
    expect(e.type).toBe("server_error");
    expect(e.message).toBe("Bad Gateway");
  });

  it("reports an unreachable server as a network error (status 0)", async () => {
    const client = new ApiClient({ origin: "", credential: null, fetch: (async () => Promise.reject(new TypeError("Failed to fetch"))) });
    const e = (await client.json("GET", "/v1/me").catch((x: unknown) => x)) as ApiError;
    expect(e.status).toBe(0);
    expect(e.code).toBe("network_error");
  });

  it("recognises endpoints the server does not have yet", async () => {
    const server = fakeFetch({});
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    const e = await client.json("GET", "/v1/conversations").catch((x: unknown) => x);
    expect(isMissingEndpoint(e)).toBe(true);
    expect(isMissingEndpoint(new ApiError({ status: 404, message: "x", code: "corpus_not_found" }))).toBe(false);
  });
});

describe("describeError", () => {
  const en = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("en", k, v);
  const ms = (k: Parameters<typeof translate>[1], v?: Record<string, string | number>) => translate("ms", k, v);

  it("words known codes for a person and keeps the server message as detail", async () => {
    const server = fakeFetch({ "POST /v1/rag/corpora/c/query": () => apiError(409, "corpus_not_ready", "corpus 'c' is indexing", "conflict_error") });
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    const error = await client.json("POST", "/v1/rag/corpora/c/query", { json: {} }).catch((e: unknown) => e);
    const d = describeError(en, error);
    expect(d.title).toMatch(/still indexing/);
    expect(d.detail).toBe("corpus 'c' is indexing");
    expect(describeError(ms, error).title).toMatch(/masih diindeks/);
  });

  it("adds the wait from Retry-After and falls back by error type", () => {
    const busy = new ApiError({ status: 503, message: "queue full", type: "service_unavailable_error", code: "server_busy", retryAfter: 4 });
    expect(describeError(en, busy).title).toBe("The server is busy with other requests. Try again in 4 s.");
    const odd = new ApiError({ status: 403, message: "nope", type: "permission_error", code: "some_new_code" });
    expect(describeError(en, odd).title).toBe("You are not allowed to do that.");
  });
});
