/**
 * The Ollama-compatible listener's HTTP side: an Express app that serves only Ollama's API
 * (`/api/*`, and `/` saying "Ollama is running" as Ollama does for clients that probe it) with
 * no key, every request acting as the bound API key, and the server that listens on 127.0.0.1.
 *
 * No secret protects it, so what stands between it and the rest of the world is: it binds
 * 127.0.0.1 only; the `Host` must be a loopback name (DNS rebinding); and a request a web page
 * made is refused (a web `Origin`, or `Sec-Fetch-Site` saying another site, when there is no
 * Origin). Everything else is as on the main port: the route module, the key's scopes and rate
 * limits, the audit trail (each entry with `via: "ollama_listener"`), errors in Ollama's shape.
 */
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from "express";
import { RateLimitExceeded } from "../admin/rate-limit-service.js";
import { OLLAMA_LISTENER_HOST, type BoundListener } from "../admin/ollama-listener-service.js";
import type { AppDeps } from "../app.js";
import type { Principal } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import { recordCoalescedSafely, trailOf, type Trail } from "./audit-trail.js";
import { streamError, toWireError } from "./error-handler.js";
import { hostGuard } from "./host-guard.js";
import { createHttpListener, drainServer } from "./http-listener.js";
import "./locals.js";
import { costly, rateLimitHeaders, setRateLimitHeaders } from "./rate-limit.js";
import { requestContext } from "./request-context.js";
import { ollamaRoutes } from "./routes/ollama-routes.js";
import { OLLAMA_PATHS, ollamaError } from "./wire/ollama-wire.js";

/** What the listener's audit entries say about where a request came in. */
export const LISTENER_VIA = "ollama_listener";

export type OllamaListenerAppDeps = Pick<AppDeps, "logger" | "metrics" | "chat" | "embeddings" | "registry" | "engine" | "rateLimits" | "audit" | "http" | "idleUnloadSeconds">;

/**
 * The listener's app: built from the same route module and middlewares as the main app;
 * `bindPrincipal` says who each request acts as (it throws to refuse, e.g. a revoked key).
 */
export function createOllamaListenerApp(deps: OllamaListenerAppDeps, bindPrincipal: () => Promise<Principal>): Express {
  const app = express();
  const startedAt = Math.floor(Date.now() / 1000);
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  // Its access lines say which listener a request came in on.
  app.use(requestContext(deps.logger.child({ via: LISTENER_VIA })));
  app.use(deps.metrics.middleware());
  // Only Ollama's URLs exist here: nothing else of the API is reachable without a key.
  app.use((req, _res, next) => next(req.path === "/" || OLLAMA_PATHS.test(req.path) ? undefined : unknownUrl(req.method, req.path)));
  app.use(hostGuard(OLLAMA_LISTENER_HOST, []));
  app.use(refuseWebPages);
  app.use(actAs(bindPrincipal, deps));
  app.use(rateLimitHeaders(deps.rateLimits));
  app.get("/", (_req, res) => {
    res.type("text/plain").send("Ollama is running");
  });
  app.use(
    ollamaRoutes({
      chat: deps.chat,
      embeddings: deps.embeddings,
      registry: deps.registry,
      engine: deps.engine,
      costly: costly(deps.rateLimits),
      trail: throughListener(trailOf(deps.audit)),
      maxJsonBodyBytes: deps.http.maxJsonBodyBytes,
      idleUnloadSeconds: deps.idleUnloadSeconds,
      startedAt,
    }),
  );
  app.use((req, _res, next) => next(unknownUrl(req.method, req.path)));
  app.use(answerInOllamaShape);
  return app;
}

export interface ListenerLimits {
  /** Milliseconds a client has to send a whole request (0 = no limit), as on the main port. */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  /** How long requests in flight may finish when the listener closes, before they are cut. */
  drainMs: number;
}

/**
 * Listens with `app` on 127.0.0.1:`port` (and nowhere else). Rejects with the system's error
 * (`EADDRINUSE`, `EACCES`) when the port cannot be taken.
 */
export async function listenOnLoopback(app: Express, port: number, limits: ListenerLimits, onError: (error: Error) => void): Promise<BoundListener> {
  const server = createHttpListener(app, { tls: null, requestTimeoutMs: limits.requestTimeoutMs, headersTimeoutMs: limits.headersTimeoutMs });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: OLLAMA_LISTENER_HOST, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // A listening server's later errors are reported, never left to crash the process.
  server.on("error", onError);
  let closing: Promise<void> | undefined;
  return { close: () => (closing ??= drainServer(server, limits.drainMs)) };
}

const unknownUrl = (method: string, path: string) =>
  new ServiceError("not_found", `Unknown request URL: ${method} ${path.slice(0, 200)}. This listener serves only Ollama's API (/api/…); the rest of Pustaka's API is on its main port, with a key.`, { code: "unknown_url" });

/**
 * Refuses what a web page made: no key protects this listener, so a page must not be able to
 * use it through the visitor's browser. An `Origin` of the web (http, https, or `null` from a
 * sandboxed frame or a file) is refused; so, when no Origin was sent (a GET from a tag), is a
 * `Sec-Fetch-Site` naming another site. Origins of installed software (`app://`, `tauri://`,
 * `vscode-webview://`, extensions), which Ollama allows too, are programs on this computer.
 */
const refuseWebPages: RequestHandler = (req, _res, next) => {
  const origin = req.get("origin");
  const site = req.get("sec-fetch-site");
  const own = `http://${req.get("host") ?? ""}`;
  const webOrigin = origin !== undefined && origin !== own && (origin.trim().toLowerCase() === "null" || /^https?:/i.test(origin.trim()));
  const crossSite = origin === undefined && site !== undefined && site !== "same-origin" && site !== "none";
  if (!webOrigin && !crossSite) {
    next();
    return;
  }
  const from = webOrigin ? `the web page at ${String(origin).slice(0, 200)}` : "a web page of another site";
  next(new ServiceError("permission", `the Ollama listener refuses requests made by ${from}: it needs no key, so only programs on this computer may use it (a web page can use Pustaka's main port with a key)`, { code: "cross_origin_request" }));
};

/** Every request acts as the bound key; a refusal (a revoked key) is audited as a failed authentication would be on the main port. */
function actAs(bindPrincipal: () => Promise<Principal>, deps: Pick<AppDeps, "audit">): RequestHandler {
  return (req, res, next) => {
    bindPrincipal().then(
      (principal) => {
        res.locals.principal = principal;
        next();
      },
      (error: unknown) => {
        const reason = toWireError(error).body.error.code ?? "unknown";
        const data = { reason, via: LISTENER_VIA, method: req.method, path: req.path.slice(0, 200), remote: req.socket.remoteAddress ?? null };
        recordCoalescedSafely(deps.audit, res, `auth.failed\0${LISTENER_VIA}\0${reason}`, { type: "auth.failed", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: res.locals.requestId, data });
        next(error);
      },
    );
  };
}

/** The route module's trail, each entry saying it came through the listener. */
function throughListener(trail: Trail): Trail {
  return (type, options) => {
    const audited = trail(type, options);
    return (req, res, next) =>
      audited(req, res, (error?: unknown) => {
        if (res.locals.audit) res.locals.audit.data.via = LISTENER_VIA;
        next(error);
      });
  };
}

/** Every error in Ollama's shape, `{"error":"…"}`, whatever the path (this listener speaks nothing else). */
const answerInOllamaShape: ErrorRequestHandler = (error, _req, res, _next) => {
  const { status, retryAfter } = toWireError(error);
  // Notes the code for the access log and the audit entry, as the main port's handler does.
  const body = ollamaError(streamError(res, error));
  if (res.headersSent) {
    res.end();
    return;
  }
  if (status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="pustaka"');
  if (error instanceof RateLimitExceeded) setRateLimitHeaders(res, error.states);
  if (retryAfter !== undefined) res.setHeader("Retry-After", String(retryAfter));
  res.status(status).json(body);
};
