/** The parsed JSON body of a request, or a clear 4xx when there is none. */
import type { Request } from "express";
import type { z } from "zod";
import { ServiceError } from "../errors.js";
import { parseWith } from "./validate.js";

export function jsonBody<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  if (req.body === undefined) {
    if (!req.is("application/json") && req.get("content-length") !== "0" && req.get("content-type")) {
      throw new ServiceError("unsupported_media_type", "request bodies must be JSON (Content-Type: application/json)", { code: "unsupported_media_type" });
    }
    throw new ServiceError("invalid_request", "request body must be a JSON object (Content-Type: application/json)", { code: "missing_body" });
  }
  if (typeof req.body !== "object" || req.body === null || Array.isArray(req.body)) {
    throw new ServiceError("invalid_request", "request body must be a JSON object", { code: "invalid_body" });
  }
  return parseWith(schema, req.body);
}
