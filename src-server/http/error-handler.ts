/**
 * Maps every error to the OpenAI error shape, once: `{"error":{message,type,param,code}}`.
 * No stack traces leave the process; unexpected errors are logged with the request id.
 */
import { isStoreUnavailable } from "../store/sql-database.js";
import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import { RateLimitExceeded } from "../admin/rate-limit-service.js";
import { ServiceError, type ErrorKind, type InputLocation } from "../errors.js";
import { setRateLimitHeaders } from "./rate-limit.js";
import { ANTHROPIC_PATHS, anthropicError } from "./wire/anthropic-wire.js";
import { OLLAMA_PATHS, ollamaError } from "./wire/ollama-wire.js";
import { MCP_PATHS, mcpChallenge, mcpError } from "./wire/mcp-wire.js";

const STATUS: Record<ErrorKind, { status: number; type: string }> = {
  invalid_request: { status: 400, type: "invalid_request_error" },
  payload_too_large: { status: 413, type: "invalid_request_error" },
  unsupported_media_type: { status: 415, type: "invalid_request_error" },
  authentication: { status: 401, type: "authentication_error" },
  permission: { status: 403, type: "permission_error" },
  not_found: { status: 404, type: "not_found_error" },
  conflict: { status: 409, type: "conflict_error" },
  rate_limit: { status: 429, type: "rate_limit_error" },
  unavailable: { status: 503, type: "service_unavailable_error" },
  server: { status: 500, type: "server_error" },
  bad_gateway: { status: 502, type: "upstream_error" },
  gateway_timeout: { status: 504, type: "upstream_timeout_error" },
};

export interface WireError {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's name for an input the service located (`messages.1.tool_call_id`, `input.3`, ...). */
export function openAiParam(location: InputLocation): string {
  switch (location.in) {
    case "messages": {
      if (location.message === undefined) return "messages";
      const base = `messages.${location.message}`;
      if (location.field === "toolCallId") return `${base}.tool_call_id`;
      if (location.toolCall !== undefined) return `${base}.tool_calls.${location.toolCall}${location.field === "arguments" ? ".function.arguments" : ""}`;
      return base;
    }
    case "maxTokens":
      return "max_tokens";
    case "responseFormat":
      return location.schema ? "response_format.json_schema.schema" : "response_format";
    case "tools":
      return `tools.${location.tool}.function.parameters`;
    case "toolChoice":
      return "tool_choice";
    case "inputs":
      return location.count === 1 ? "input" : `input.${location.index}`;
    case "query":
      return "query";
    case "prompt":
      return location.index === undefined ? "prompt" : `prompt.${location.index}`;
    case "suffix":
      return "suffix";
  }
}

/** The wire body and status for any thrown value. */
export function toWireError(error: unknown): { status: number; body: WireError; retryAfter?: number } {
  const known = asServiceError(error);
  const { status, type } = STATUS[known.kind];
  const param = known.param ?? (known.location ? openAiParam(known.location) : null);
  return {
    status,
    body: { error: { message: known.message, type, param, code: known.code } },
    ...(known.retryAfterSeconds !== undefined ? { retryAfter: known.retryAfterSeconds } : {}),
  };
}

/** Errors from body parsing (express.json) and other middleware, as ServiceErrors. */
function asServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  const e = error as { type?: string; status?: number; message?: string; limit?: number };
  if (e?.type === "entity.too.large") {
    return new ServiceError("payload_too_large", `request body is larger than the ${e.limit ?? "allowed"} byte limit`, { code: "request_too_large" });
  }
  if (e?.type === "entity.parse.failed") return new ServiceError("invalid_request", "request body is not valid JSON", { code: "invalid_json" });
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") {
    return new ServiceError("unsupported_media_type", e.message ?? "unsupported body encoding", { code: "unsupported_encoding" });
  }
  if (e?.type === "request.aborted") return new ServiceError("invalid_request", "request aborted by the client", { code: "request_aborted" });
  // A body whose Content-Encoding does not match its bytes fails inside zlib while being read.
  const code = (error as { code?: unknown })?.code;
  if ((typeof code === "string" && /^(Z_|ERR_ZLIB|ERR_BROTLI|ERR__ERROR)/.test(code)) || /decompression failed/i.test(e?.message ?? "")) {
    return new ServiceError("invalid_request", "the request body could not be decompressed: it does not match its Content-Encoding", { code: "invalid_content_encoding" });
  }
  // The shared database is unreachable or restarting: the request may succeed in a moment.
  if (isStoreUnavailable(error)) return new ServiceError("unavailable", "the database is unavailable right now; retry shortly", { code: "store_unavailable", retryAfterSeconds: 2, cause: error });
  // Router and body-parser errors carry their status (a path with malformed percent-encoding: 400).
  const status = typeof e?.status === "number" ? e.status : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    const kind: ErrorKind = status === 413 ? "payload_too_large" : status === 415 ? "unsupported_media_type" : "invalid_request";
    const message = /decode param/i.test(e.message ?? "") ? "the URL has malformed percent-encoding" : (e.message ?? "invalid request");
    return new ServiceError(kind, message, { code: /decode param/i.test(e.message ?? "") ? "invalid_url" : "invalid_request" });
  }
  return new ServiceError("server", "The server had an error while processing your request.", { code: "internal_error", cause: error });
}

/** Notes the error on the response, for the access log and the audit trail (5xx: logged with its stack now). */
function noteError(res: Response, error: unknown, wire: { status: number; body: WireError }): void {
  if (wire.body.error.code) res.locals.errorCode = wire.body.error.code;
  res.locals.errorMessage = wire.body.error.message;
  if (wire.status >= 500 && wire.status !== 503) res.locals.log?.error({ err: error }, "request failed");
}

/** The error event a stream sends when it fails after the headers went out (noted like any error). */
export function streamError(res: Response, error: unknown): WireError {
  const wire = toWireError(error);
  noteError(res, error, wire);
  return wire.body;
}

/** Sends an error response (JSON) unless headers already went out. */
export function sendError(res: Response, error: unknown): void {
  const wire = toWireError(error);
  const { status, body, retryAfter } = wire;
  noteError(res, error, wire);
  if (res.headersSent) {
    res.end();
    return;
  }
  const mcp = MCP_PATHS.test(res.req?.path ?? "");
  // The public URL (the OAuth issuer: what clients reach, set behind a proxy), else where this request came in.
  const publicUrl = () => (res.app?.locals.publicUrl as (() => string) | undefined)?.() ?? `${res.req.protocol}://${res.req.get("host") ?? ""}`;
  const challenge = mcp ? mcpChallenge(status, body, publicUrl()) : status === 401 ? 'Bearer realm="pustaka"' : null;
  if (challenge) res.setHeader("WWW-Authenticate", challenge);
  if (error instanceof RateLimitExceeded) setRateLimitHeaders(res, error.states);
  if (retryAfter !== undefined) res.setHeader("Retry-After", String(retryAfter));
  if (mcp) {
    res.status(status).json(mcpError(status, body));
    return;
  }
  // Each API family answers in its own error shape: Anthropic's on its Messages routes, Ollama's under /api.
  const path = res.req?.path ?? "";
  res.status(status).json(ANTHROPIC_PATHS.test(path) ? anthropicError(status, body) : OLLAMA_PATHS.test(path) ? ollamaError(body) : body);
}

export const errorHandler: ErrorRequestHandler = (error, _req, res, _next) => sendError(res, error);

/** Unknown routes get a 404 in the same shape. */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new ServiceError("not_found", `Unknown request URL: ${req.method} ${req.path}`, { code: "unknown_url" }));
};
