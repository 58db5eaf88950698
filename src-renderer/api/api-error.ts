/** One error type for every failure the API client reports: HTTP errors, stream errors, network loss. */
import type { ApiErrorBody } from "./contract.js";

export class ApiError extends Error {
  /** HTTP status; 0 when the server could not be reached. */
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  /** Seconds to wait, from `Retry-After` (429/503). */
  readonly retryAfter: number | null;
  /** The whole parsed body, for responses that carry more than the error (a refused upload lists its files). */
  readonly body: unknown;

  constructor(init: { status: number; message: string; type?: string; code?: string | null; param?: string | null; retryAfter?: number | null; body?: unknown }) {
    super(init.message);
    this.name = "ApiError";
    this.status = init.status;
    this.type = init.type ?? "server_error";
    this.code = init.code ?? null;
    this.param = init.param ?? null;
    this.retryAfter = init.retryAfter ?? null;
    this.body = init.body ?? null;
  }

  /** Reads an error response: the `{"error":{...}}` body when there is one, else a stand-in from the status. */
  static async fromResponse(res: Response): Promise<ApiError> {
    const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
    let body: unknown = null;
    try {
      body = JSON.parse(await res.text());
    } catch {
      body = null;
    }
    if (isErrorBody(body)) {
      const { message, type, code, param } = body.error;
      return new ApiError({ status: res.status, message, type, code, param, retryAfter, body });
    }
    return new ApiError({ status: res.status, message: res.statusText || `HTTP ${res.status}`, type: typeForStatus(res.status), code: res.status === 404 ? "not_found" : null, retryAfter, body });
  }

  /** An error event inside an SSE stream. */
  static fromStreamBody(body: ApiErrorBody): ApiError {
    const { message, type, code, param } = body.error;
    return new ApiError({ status: 200, message, type, code, param, body });
  }

  /** The server could not be reached at all. */
  static network(cause: unknown): ApiError {
    const message = cause instanceof Error ? cause.message : String(cause);
    return new ApiError({ status: 0, message, type: "network_error", code: "network_error" });
  }
}

export function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== "object" || value === null || !("error" in value)) return false;
  const error = (value).error;
  return typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string";
}

/** True for a user's abort (the stop button), which is not an error to show. */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException ? error.name === "AbortError" : error instanceof Error && error.name === "AbortError";
}

/**
 * True when the server does not offer this endpoint (yet): a 404 `unknown_url`, or one of
 * `alsoCodes` (e.g. `model_not_found` when `/v1/models/{id}` caught `/v1/models/catalog`).
 */
export function isMissingEndpoint(error: unknown, alsoCodes: readonly string[] = []): boolean {
  if (!(error instanceof ApiError) || error.status !== 404) return false;
  return error.code === null || error.code === "not_found" || error.code === "unknown_url" || alsoCodes.includes(error.code);
}

function parseRetryAfter(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.round((date - Date.now()) / 1000));
}

function typeForStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 429) return "rate_limit_error";
  if (status === 503) return "service_unavailable_error";
  if (status >= 400 && status < 500) return "invalid_request_error";
  return "server_error";
}
