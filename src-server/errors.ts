/**
 * The one error hierarchy of the service. Services throw these; `http/error-handler.ts`
 * maps them once to the OpenAI wire shape. Nothing here knows about HTTP beyond the
 * `kind`, which the HTTP layer translates into a status and an error `type`.
 */

/** The category of a failure; each maps to one HTTP status and OpenAI error type. */
export type ErrorKind =
  | "invalid_request"
  | "payload_too_large"
  | "unsupported_media_type"
  | "authentication"
  | "permission"
  | "not_found"
  | "conflict"
  | "rate_limit"
  | "unavailable"
  | "server"
  /** An upstream inference server (a remote model's replica) failed or answered nonsense. */
  | "bad_gateway"
  /** An upstream inference server did not answer in time. */
  | "gateway_timeout";

/**
 * Where in the caller's input a problem lies, in the service's own terms. Layers below
 * HTTP (the engine above all) say *what* is wrong with *which* input; each wire format
 * names that place its own way (OpenAI's `messages.2.content`, Anthropic's own, ...).
 */
export type InputLocation =
  | { in: "messages"; message?: number; toolCall?: number; field?: "arguments" | "toolCallId" }
  | { in: "maxTokens" }
  | { in: "responseFormat"; schema?: boolean }
  | { in: "tools"; tool: number }
  | { in: "toolChoice" }
  | { in: "inputs"; index: number; count: number }
  /** Reranking: the query (the documents are `inputs`). */
  | { in: "query" }
  /** Text completions: the prompt (one of several when `index` is set) and the FIM suffix. */
  | { in: "prompt"; index?: number }
  | { in: "suffix" };

export interface ServiceErrorOptions {
  /** Stable snake_case code clients can branch on, e.g. `model_not_found`. */
  code: string;
  /** The request field at fault, dotted (`messages.0.content`), or null. Set by the HTTP layer. */
  param?: string | null;
  /** Below HTTP: the input at fault, which the wire format turns into its `param`. */
  location?: InputLocation;
  /** Seconds a client should wait before retrying (rate limits, busy queues). */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly param: string | null;
  readonly location: InputLocation | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: ErrorKind, message: string, options: ServiceErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ServiceError";
    this.kind = kind;
    this.code = options.code;
    this.param = options.param ?? null;
    this.location = options.location;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** 400: the request is malformed or asks for something impossible. */
export function invalidRequest(message: string, code = "invalid_request", param: string | null = null): ServiceError {
  return new ServiceError("invalid_request", message, { code, param });
}

/** 400 about an input named by its place in the service's terms (the engine's errors). */
export function invalidInput(message: string, code: string, location: InputLocation): ServiceError {
  return new ServiceError("invalid_request", message, { code, location });
}

/** 404 with a stable code such as `model_not_found`. */
export function notFound(message: string, code: string, param: string | null = null): ServiceError {
  return new ServiceError("not_found", message, { code, param });
}

/** 409: the resource is in a state that forbids the operation. */
export function conflict(message: string, code: string): ServiceError {
  return new ServiceError("conflict", message, { code });
}

/** 503: a resource (a model slot, a queue) is temporarily exhausted. */
export function unavailable(message: string, code: string, retryAfterSeconds?: number): ServiceError {
  return new ServiceError("unavailable", message, { code, retryAfterSeconds });
}

/** 502 `upstream_error`: a remote model's server failed, refused Pustaka, or answered something unreadable. */
export function upstreamError(message: string, cause?: unknown): ServiceError {
  return new ServiceError("bad_gateway", message, { code: "upstream_error", cause });
}

/** 504 `upstream_timeout`: a remote model's server did not answer (or went silent) in time. */
export function upstreamTimeout(message: string, cause?: unknown): ServiceError {
  return new ServiceError("gateway_timeout", message, { code: "upstream_timeout", cause });
}

/** `value` as an Error (abort reasons and rejections can be anything). */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === "string" ? value : "operation failed", { cause: value });
}

/** True when `error` is an abort triggered through an AbortSignal. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}
