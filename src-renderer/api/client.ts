/**
 * The workbench's HTTP client: one place that knows how requests authenticate.
 *
 * - Desktop (Electron bridge): `Authorization: Bearer <credential>` to the bridge's base URL.
 * - Browser: same origin, the HttpOnly session cookie, and `x-pustaka-csrf: 1`.
 *
 * Every non-2xx answer becomes an {@link ApiError}; a network failure too (status 0).
 */
import { ApiError, isAbort } from "./api-error.js";
import { readSse } from "./sse.js";

export interface ClientOptions {
  /** Server origin (`http://127.0.0.1:7780`); empty string for the page's own origin. */
  origin: string;
  /** Bearer credential (desktop); null in browser mode (cookie session). */
  credential: string | null;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  json?: unknown;
  body?: BodyInit;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export class ApiClient {
  readonly origin: string;
  readonly credential: string | null;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions) {
    this.origin = options.origin.replace(/\/+$/, "");
    this.credential = options.credential;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** The OpenAI-compatible base URL other tools use (`<origin>/v1`). */
  get apiBase(): string {
    return `${this.origin || window.location.origin}/v1`;
  }

  /** The headers every request authenticates with (for a request made without `fetch`, such as an upload with progress). */
  authHeaders(): Record<string, string> {
    const headers: Record<string, string> = { "x-pustaka-csrf": "1" };
    if (this.credential) headers.authorization = `Bearer ${this.credential}`;
    return headers;
  }

  /** Sends a request; resolves with the response only when it is 2xx. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { "x-pustaka-csrf": "1", ...options.headers, ...this.authHeaders() };
    let body = options.body;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    }
    let res: Response;
    try {
      res = await this.fetchImpl(this.origin + path, { method, headers, body, signal: options.signal, credentials: "same-origin" });
    } catch (error) {
      if (isAbort(error)) throw error;
      throw ApiError.network(error);
    }
    if (!res.ok) throw await ApiError.fromResponse(res);
    return res;
  }

  /** A JSON request and its JSON answer. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.request(method, path, { ...options, headers: { accept: "application/json", ...options.headers } });
    return (await res.json()) as T;
  }

  /**
   * An SSE request (GET, or POST with a JSON body): `onData` gets each event's data until
   * the stream ends or it returns `"stop"`. Rejects with AbortError when `signal` aborts.
   */
  async sse(method: "GET" | "POST", path: string, onData: (data: string) => void | "stop", options: RequestOptions = {}): Promise<void> {
    const res = await this.request(method, path, { ...options, headers: { accept: "text/event-stream", ...options.headers } });
    if (!res.body) throw new ApiError({ status: res.status, message: "the server sent an empty stream", code: "empty_stream" });
    try {
      await readSse(res.body, (data) => onData(data));
    } catch (error) {
      if (isAbort(error) || options.signal?.aborted) throw new DOMException("aborted", "AbortError");
      if (error instanceof ApiError) throw error;
      throw ApiError.network(error);
    }
  }
}
