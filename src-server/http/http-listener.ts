/**
 * The HTTP(S) server around the app: plain HTTP or TLS, time limits on receiving
 * requests (never on writing responses, so long streams keep working), and errors the
 * HTTP parser raises before a request reaches the app (malformed requests, requests
 * too slow to arrive) answered in the API's error shape.
 */
import http, { type RequestListener } from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";

export interface HttpListenerOptions {
  /** PEM certificate and key: serve HTTPS. Null = plain HTTP. */
  tls: { cert: Buffer; key: Buffer } | null;
  /**
   * Milliseconds a client has to send a whole request, headers and body (Node's
   * `requestTimeout`: it ends once the request is received, so responses are not limited).
   * 0 = no limit.
   */
  requestTimeoutMs: number;
  /** Milliseconds a client has to send the headers (capped by `requestTimeoutMs`). */
  headersTimeoutMs: number;
  /** Idle keep-alive connections are closed after this long. Default 65 s (beyond common proxies' 60 s). */
  keepAliveTimeoutMs?: number;
}

/**
 * Creates (does not start) the server. Requests that take too long to arrive get a 408
 * `request_timeout` (when nothing was answered yet) and their connection is closed, whether
 * or not they carried a valid key.
 */
export function createHttpListener(app: RequestListener, options: HttpListenerOptions): http.Server {
  const requestTimeout = Math.max(0, Math.round(options.requestTimeoutMs));
  const headersTimeout = Math.max(1, Math.round(requestTimeout > 0 ? Math.min(options.headersTimeoutMs, requestTimeout) : options.headersTimeoutMs));
  const serverOptions: http.ServerOptions = {
    requestTimeout,
    headersTimeout,
    // Node checks for overdue requests on this interval (30 s by default): check often
    // enough that a short limit is kept to within a quarter of itself.
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(Math.min(headersTimeout, requestTimeout || headersTimeout) / 4))),
  };
  const server = options.tls ? https.createServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, app) : http.createServer(serverOptions, app);
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  // No socket inactivity timeout: a generation may think for a long time between tokens.
  server.timeout = 0;
  server.on("clientError", answerClientError);
  return server;
}

/** The status, code and message for an error the HTTP parser or Node's request timers raised. */
export function describeClientError(error: Error & { code?: string }): { status: number; code: string; message: string } {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, code: "request_timeout", message: "The request was not received in time; the connection is closed." };
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, code: "headers_too_large", message: "The request headers are too large." };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, code: "request_too_large", message: "The request's chunk extensions are too large." };
    default:
      return { status: 400, code: "malformed_request", message: "The request is not valid HTTP." };
  }
}

/**
 * Node's `clientError` default writes a bare status line; this writes the API's error
 * body instead, then closes the connection.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // As Node's default does: answer unless a response to this request has started (the
  // connection may have carried earlier, finished responses).
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, code, message } = describeClientError(error);
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } });
  const head = [`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? "Error"}`, "Content-Type: application/json; charset=utf-8", `Content-Length: ${Buffer.byteLength(body)}`, "Connection: close"];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
  // A client that stopped reading must not keep the socket either.
  setTimeout(() => socket.destroy(), 2000).unref();
}

/** Stops accepting at once; requests in flight may finish within `drainMs` (idle connections close as they fall idle), then are cut. */
export function drainServer(server: http.Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const cut = setTimeout(() => server.closeAllConnections(), drainMs);
    sweep.unref();
    cut.unref();
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
