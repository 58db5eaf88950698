/**
 * Edge validation: parses a request part with a zod schema or throws a 400 that names
 * the offending field.
 */
import type { z } from "zod";
import { invalidRequest, type ServiceError } from "../errors.js";

function pathOf(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

/** The first zod issue as a ServiceError in the API's error shape. */
export function zodToServiceError(error: z.ZodError, what = "request body"): ServiceError {
  const issue = error.issues[0];
  if (!issue) return invalidRequest(`invalid ${what}`, "invalid_request");
  if (issue.code === "unrecognized_keys") {
    const prefix = issue.path.length > 0 ? `${pathOf(issue.path)}.` : "";
    const names = issue.keys.map((k) => prefix + k);
    return invalidRequest(`Unrecognized request argument supplied: ${names.join(", ")}`, "unknown_parameter", names[0] ?? null);
  }
  const param = pathOf(issue.path);
  const message = param ? `${param}: ${issue.message}` : issue.message;
  return invalidRequest(param ? message : `invalid ${what}: ${message}`, "invalid_parameter", param || null);
}

/** Parses `value` or throws a 400 ServiceError. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what?: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw zodToServiceError(result.error, what);
  return result.data;
}
