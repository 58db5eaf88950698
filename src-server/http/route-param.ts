import type { Request } from "express";

/**
 * A path parameter as a string. Express's types loosen `req.params` once middleware
 * precedes the handler; routes read parameters through this one helper instead.
 */
export function routeParam(req: Request, name: string): string {
  return String((req.params as Record<string, string | undefined>)[name]);
}
