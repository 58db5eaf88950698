/**
 * First middleware: request id (echoed as `x-request-id`), a child logger, an abort
 * signal that fires when the client disconnects, and one access-log line.
 */
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { newId } from "../ids.js";
import { runInRequest } from "../domain/request-scope.js";

const CLIENT_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Codes of requests turned away because the server is full: an operator should see them. */
const SHED = new Set(["server_busy", "rate_limit_exceeded"]);

/**
 * The access line's level: a server failure is an error; a shed request (queue full, rate
 * limited) or a stream that failed after its 200 a warning; other client errors and
 * successes info.
 */
export function levelOf(status: number, errorCode: string | undefined): "info" | "warn" | "error" {
  if (status >= 500 && status !== 503) return "error";
  if (status === 503 || status === 429 || (errorCode !== undefined && SHED.has(errorCode))) return "warn";
  if (status < 400 && errorCode !== undefined) return "warn";
  return "info";
}

export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get("x-request-id");
    const requestId = incoming && CLIENT_ID.test(incoming) ? incoming : newId("req_");
    const started = process.hrtime.bigint();
    const controller = new AbortController();
    res.locals.requestId = requestId;
    res.locals.log = logger.child({ reqId: requestId });
    res.locals.signal = controller.signal;
    res.setHeader("x-request-id", requestId);
    res.on("close", () => {
      const clientGone = !res.writableFinished;
      controller.abort(new DOMException(clientGone ? "client disconnected" : "response finished", "AbortError"));
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const { errorCode, errorMessage } = res.locals;
      const line = { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10, key: res.locals.principal?.keyId, clientGone, ...(errorCode || errorMessage ? { error: { code: errorCode ?? null, message: errorMessage ?? null } } : {}) };
      res.locals.log[levelOf(res.statusCode, errorCode)](line, "request");
    });
    // The engine names the request in what it reports (e.g. the work a crash interrupted).
    res.locals.scope = runInRequest(requestId, next);
  };
}
