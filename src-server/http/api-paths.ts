/**
 * The API's URL space, defined once: every path under these prefixes belongs to the API
 * (JSON, Prometheus text, event streams) and never to the workbench, whose files and page
 * fallback skip them (`workbench-static.ts`); the OpenAPI document lists only routes under
 * them. `/api` is the Ollama API and `/mcp` MCP over Streamable HTTP.
 */
import path from "node:path";

export const API_PREFIXES = ["/v1", "/metrics", "/healthz", "/readyz", "/.well-known", "/api", "/mcp"] as const;

/**
 * Whether `urlPath` (a request's path, or an Express route path) is the API's. Judged as
 * routing and file serving see it, so no spelling slips past: case-insensitive (Express
 * routes are), percent-decoded and dot segments resolved (`send` serves files so), a
 * trailing slash allowed (`/v1/`, `/metrics/`).
 */
export function isApiPath(urlPath: string): boolean {
  let decoded = urlPath;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    // Malformed percent-encoding: judged as written (routing answers it 400 or 404).
  }
  const normal = path.posix.normalize(`/${decoded.replace(/\\/g, "/")}`).toLowerCase();
  return API_PREFIXES.some((prefix) => normal === prefix || normal.startsWith(`${prefix}/`));
}
