/**
 * First middleware: request id (echoed as `x-request-id`), a child logger, an abort
 * signal that fires when the client disconnects, and one access-log line.
 */
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { newId } from "../ids.js";

const CLIENT_ID = /^[A-Za-z0-9._:-]{8,128}$/;

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
      res.locals.log.info(
        { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10, key: res.locals.principal?.keyId, clientGone },
        "request",
      );
    });
    next();
  };
}
