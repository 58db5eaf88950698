/**
 * HTTP to one upstream replica (an OpenAI-compatible server): JSON requests and
 * server-sent-event streams over a keep-alive connection pool (undici), with the
 * upstream's API key and client certificate, bounded in time (connect, first byte,
 * silence between stream events) and in size. Every failure is an `UpstreamFailure` that
 * says whether another replica may be tried and whether it counts against this one's
 * health; what a client sees is decided by the engine (`remote-engine.ts`).
 */
import { readFileSync } from "node:fs";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { createRequire } from "node:module";
import type { Agent, Dispatcher } from "undici";
import type * as Undici from "undici";
import { isAbortError } from "../../errors.js";
import type { UpstreamTarget } from "../../models/remote-binding.js";

/** undici (about 10 MB of memory) loads with the first remote model, not with every server. */
let undiciModule: typeof Undici | undefined;
const undici = () => (undiciModule ??= createRequire(import.meta.url)("undici") as typeof Undici);

export interface UpstreamTimeouts {
  /** TCP and TLS connection. */
  connectMs: number;
  /** From sending the request to the response's headers (a streamed response sends them with its first event). */
  firstByteMs: number;
  /** Longest silence inside a response body (between stream events). */
  idleMs: number;
}

/** Largest JSON body read from an upstream (embeddings of 2048 inputs × 4096 floats fit). */
const MAX_JSON_BYTES = 256 * 1024 * 1024;
/** Largest single event of a stream. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;
/** Bytes of an error body kept for the message. */
const ERROR_SNIPPET = 300;

export type FailureKind =
  /** Could not connect (refused, reset, DNS, TLS). */
  | "connect"
  /** No answer, or silence mid-stream, beyond the timeout. */
  | "timeout"
  /** An HTTP error status. */
  | "status"
  /** A 2xx answer that is not what the protocol says (HTML, truncated JSON, a stream cut short). */
  | "protocol";

/** One attempt on one replica failed. */
export class UpstreamFailure extends Error {
  override name = "UpstreamFailure";

  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly options: {
      /** HTTP status, for `status`. */
      status?: number;
      /** The request itself is at fault (4xx other than auth, 404, 408 and 429): no retry, no blame on the replica. */
      clientFault?: boolean;
      /** The upstream's own error code, when it gave one. */
      upstreamCode?: string;
      /** The upstream asked to wait (Retry-After). */
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }

  /** Another replica may be tried (nothing has reached the client yet). */
  get retryable(): boolean {
    return !this.options.clientFault;
  }
}

/** A response whose status was 2xx: its events, read as they arrive. */
export interface UpstreamStream {
  /** Parsed `data:` payloads in order; ends at `[DONE]` (a body that ends without it is a `protocol` failure). */
  events: AsyncGenerator<unknown, void, undefined>;
}

export class UpstreamClient {
  private readonly agent: Agent;
  /** The server's root (the base URL without its trailing `/v1`), where llama-server and vLLM serve /health and /tokenize. */
  readonly root: string;

  constructor(
    readonly target: UpstreamTarget,
    private readonly timeouts: UpstreamTimeouts,
  ) {
    this.root = target.baseUrl.replace(/\/v\d+$/, "");
    this.agent = new (undici().Agent)({
      connect: { timeout: timeouts.connectMs, ...tlsOptions(target) },
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
      keepAliveTimeout: 30_000,
      // Requests to one replica are bounded by the pool's in-flight cap.
      pipelining: 1,
    });
  }

  /** POSTs JSON to `path` (under the base URL, or the root when `root`) and returns the JSON answer. */
  async postJson(path: string, body: unknown, signal: AbortSignal, options: { root?: boolean } = {}): Promise<unknown> {
    const response = await this.send("POST", path, body, signal, options.root === true);
    return await readJson(response, this.describe(path), this.timeouts);
  }

  /** GETs JSON, with its own overall deadline (health checks). */
  async getJson(path: string, signal: AbortSignal, options: { root?: boolean } = {}): Promise<unknown> {
    const response = await this.send("GET", path, undefined, signal, options.root === true);
    return await readJson(response, this.describe(path), this.timeouts);
  }

  /**
   * POSTs a streamed request and resolves once the upstream answered 2xx (the first byte):
   * failures before that reject here, so the caller may still try another replica.
   */
  async openStream(path: string, body: unknown, signal: AbortSignal): Promise<UpstreamStream> {
    const response = await this.send("POST", path, body, signal, false);
    const type = String(response.headers["content-type"] ?? "");
    if (!type.includes("text/event-stream")) {
      // An upstream that ignores `stream: true` answers JSON; anything else is not a stream.
      const text = await readText(response, MAX_JSON_BYTES, this.describe(path));
      throw new UpstreamFailure(`${this.describe(path)} answered ${type || "no content type"} instead of an event stream: ${snippet(text)}`, "protocol");
    }
    return { events: this.readEvents(response, path) };
  }

  private async *readEvents(response: Dispatcher.ResponseData, path: string): AsyncGenerator<unknown, void, undefined> {
    const what = this.describe(path);
    const queue: EventSourceMessage[] = [];
    let oversized = false;
    const parser = createParser({
      onEvent: (event) => queue.push(event),
      onError: () => {
        oversized = true;
      },
      maxEventSize: MAX_EVENT_BYTES,
    } as Parameters<typeof createParser>[0]);
    let done = false;
    // One decoder for the whole body: a character split between two chunks stays whole.
    const utf8 = new TextDecoder("utf-8");
    try {
      for await (const chunk of response.body) {
        parser.feed(typeof chunk === "string" ? chunk : utf8.decode(chunk as Buffer, { stream: true }));
        if (oversized) throw new UpstreamFailure(`${what} sent an event larger than ${MAX_EVENT_BYTES} bytes`, "protocol");
        while (queue.length > 0) {
          const event = queue.shift()!;
          if (event.data === "[DONE]") {
            done = true;
            return;
          }
          if (event.event === "error") throw new UpstreamFailure(`${what} reported an error mid-stream: ${snippet(event.data)}`, "status", { status: 500 });
          let data: unknown;
          try {
            data = JSON.parse(event.data);
          } catch (error) {
            throw new UpstreamFailure(`${what} sent an event that is not JSON: ${snippet(event.data)}`, "protocol", { cause: error });
          }
          const failure = streamedError(data, what);
          if (failure) throw failure;
          yield data;
        }
      }
      throw new UpstreamFailure(`${what} ended its stream before it finished (no [DONE])`, "protocol");
    } catch (error) {
      throw asFailure(error, what, this.timeouts);
    } finally {
      // Leaving early (the client went away, or [DONE]) releases the connection.
      if (!done || !response.body.readableEnded) response.body.destroy();
    }
  }

  private async send(method: "GET" | "POST", path: string, body: unknown, signal: AbortSignal, root: boolean): Promise<Dispatcher.ResponseData> {
    const url = `${root ? this.root : this.target.baseUrl}${path}`;
    const headers: Record<string, string> = { accept: "application/json, text/event-stream" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const key = this.target.apiKey?.();
    if (key) headers.authorization = `Bearer ${key}`;
    let response: Dispatcher.ResponseData;
    try {
      response = await undici().request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, dispatcher: this.agent });
    } catch (error) {
      throw asFailure(error, this.describe(path), this.timeouts);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    throw await statusFailure(response, this.describe(path));
  }

  /**
   * `upstream r1 (/chat/completions)`: for messages, which may reach clients and every key's
   * view of the model, so neither the upstream's address nor its key is in them (logs add the URL).
   */
  private describe(path: string): string {
    return `upstream ${this.target.id} (${path})`;
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

function tlsOptions(target: UpstreamTarget): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const tls = target.tls;
  if (!tls) return {};
  const pem = (text: string | undefined, file: string | undefined) => (text !== undefined ? Buffer.from(text) : file ? readFileSync(file) : undefined);
  const ca = pem(tls.ca, tls.caFile);
  const cert = pem(tls.cert, tls.certFile);
  const key = pem(tls.key, tls.keyFile);
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/** An `{"error": …}` object sent as a stream event (llama-server and vLLM do so for errors mid-generation). */
function streamedError(data: unknown, what: string): UpstreamFailure | null {
  if (typeof data !== "object" || data === null || !("error" in data)) return null;
  const error = data.error;
  const message = typeof error === "string" ? error : typeof error === "object" && error !== null && "message" in error ? String(error.message) : JSON.stringify(error);
  return new UpstreamFailure(`${what} failed mid-stream: ${snippet(message)}`, "status", { status: 500 });
}

async function readText(response: Dispatcher.ResponseData, limit: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      response.body.destroy();
      throw new UpstreamFailure(`${what} answered more than ${limit} bytes`, "protocol");
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readJson(response: Dispatcher.ResponseData, what: string, timeouts: UpstreamTimeouts): Promise<unknown> {
  let text: string;
  try {
    text = await readText(response, MAX_JSON_BYTES, what);
  } catch (error) {
    throw asFailure(error, what, timeouts);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UpstreamFailure(`${what} answered something that is not JSON (${text.length} bytes): ${snippet(text)}`, "protocol", { cause: error });
  }
}

/** A non-2xx answer: who is at fault, and the upstream's own message. */
async function statusFailure(response: Dispatcher.ResponseData, what: string): Promise<UpstreamFailure> {
  const status = response.statusCode;
  let text = "";
  try {
    text = await readText(response, 64 * 1024, what);
  } catch {
    // The message is a courtesy; the status decides.
  }
  const { message, code } = errorOf(text);
  const retryAfter = Number(response.headers["retry-after"]);
  const clientFault = status >= 400 && status < 500 && ![401, 403, 404, 408, 429].includes(status);
  return new UpstreamFailure(`${what} answered HTTP ${status}: ${message}`, "status", {
    status,
    clientFault,
    ...(code ? { upstreamCode: code } : {}),
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: Math.ceil(retryAfter) } : {}),
  });
}

/** The message and code of an OpenAI-shaped (or llama-server-shaped) error body, or a snippet of whatever it was. */
export function errorOf(text: string): { message: string; code: string | null } {
  try {
    const body = JSON.parse(text) as { error?: unknown; detail?: unknown; message?: unknown };
    const error = body.error ?? body.detail ?? body;
    if (typeof error === "string") return { message: snippet(error), code: null };
    if (typeof error === "object" && error !== null) {
      const e = error as { message?: unknown; code?: unknown; type?: unknown };
      const message = typeof e.message === "string" ? e.message : JSON.stringify(error);
      const code = typeof e.code === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(e.code) ? e.code : typeof e.type === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(e.type) ? e.type : null;
      return { message: snippet(message), code };
    }
  } catch {
    // Not JSON: an HTML error page from a proxy, plain text, nothing.
  }
  return { message: text.trim() ? snippet(text) : "(no body)", code: null };
}

/** Keeps error messages short and on one line (HTML pages are long). */
function snippet(text: string): string {
  const flat = text
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > ERROR_SNIPPET ? `${flat.slice(0, ERROR_SNIPPET)}…` : flat;
}

const seconds = (ms: number | undefined) => String(Math.round((ms ?? 0) / 100) / 10);

/** Any error of a request as an `UpstreamFailure` (aborts by the caller pass through untouched). */
function asFailure(error: unknown, what: string, timeouts: UpstreamTimeouts | null): unknown {
  if (error instanceof UpstreamFailure) return error;
  if (isAbortError(error) || error instanceof undici().errors.RequestAbortedError) return error;
  if (error instanceof undici().errors.HeadersTimeoutError) {
    return new UpstreamFailure(`${what} sent no answer within ${seconds(timeouts?.firstByteMs)} s`, "timeout", { cause: error });
  }
  if (error instanceof undici().errors.BodyTimeoutError) {
    return new UpstreamFailure(`${what} went silent for ${seconds(timeouts?.idleMs)} s in the middle of its answer`, "timeout", { cause: error });
  }
  if (error instanceof undici().errors.ConnectTimeoutError) {
    return new UpstreamFailure(`${what} could not be reached within ${seconds(timeouts?.connectMs)} s`, "connect", { cause: error });
  }
  if (error instanceof undici().errors.SocketError || error instanceof undici().errors.ClientDestroyedError) {
    return new UpstreamFailure(`${what} closed the connection: ${error.message}`, "protocol", { cause: error });
  }
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|ETIMEDOUT|CERT_|ERR_TLS|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO)/.test(code)) {
    return new UpstreamFailure(`${what} could not be reached: ${code}`, "connect", { cause: error });
  }
  return new UpstreamFailure(`${what} failed: ${(error as Error)?.message ?? String(error)}`, "protocol", { cause: error });
}
