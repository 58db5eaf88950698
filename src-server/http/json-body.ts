/** The parsed JSON body of a request, or a clear 4xx when there is none. */
import type { Request } from "express";
import type { z } from "zod";
import { ServiceError } from "../errors.js";
import { parseWith } from "./validate.js";

/** Deepest nesting a JSON body may have: far beyond any real request (tool schemas included), far below what recursive code (validation, canonical hashing, logging) survives. */
export const MAX_JSON_DEPTH = 128;

/** How deeply `[` and `{` nest in JSON text, outside strings; stops counting once past `limit`. */
export function jsonNestingDepth(text: Buffer | string, limit = Number.POSITIVE_INFINITY): number {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** `verify` for express.json: refuses, before parsing, a body nested deeper than MAX_JSON_DEPTH. */
export function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  if (jsonNestingDepth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new ServiceError("invalid_request", `request body is nested more than ${MAX_JSON_DEPTH} levels deep`, { code: "json_too_deep" });
  }
}

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
