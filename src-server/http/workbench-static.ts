/**
 * Browser mode: the built workbench (Vite output) served at `/`, on the API's own origin,
 * with a strict Content-Security-Policy. Unknown page paths get `index.html` (the
 * workbench routes in the browser). The API's paths (`api-paths.ts`) are never the
 * workbench's: neither a file of the build nor the page fallback answers them, so they
 * reach their routes or the JSON 404. Nothing here needs a credential: the page holds none.
 */
import path from "node:path";
import express, { Router, type Response } from "express";
import { isApiPath } from "./api-paths.js";

/** The workbench's CSP: its own scripts only, no inline script, no framing, API on the same origin. */
export const WORKBENCH_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // React and the accessible primitives position popovers with style attributes.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  // pdf.js renders in a worker loaded from the app's own files.
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

function securityHeaders(res: Response): void {
  res.setHeader("Content-Security-Policy", WORKBENCH_CSP);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
}

export function workbenchStatic(rendererDir: string): Router {
  const router = Router();
  const index = path.join(rendererDir, "index.html");
  // Before any file is looked up: a build holding `metrics` or `v1/models` must not shadow the API.
  router.use((req, _res, next) => next(isApiPath(req.path) ? "router" : undefined));
  // Hashed asset names never change content: cache them for good.
  router.use(
    "/assets",
    express.static(path.join(rendererDir, "assets"), {
      immutable: true,
      maxAge: "365d",
      setHeaders: (res) => securityHeaders(res),
    }),
  );
  router.use(express.static(rendererDir, { index: false, maxAge: 0, setHeaders: (res) => securityHeaders(res) }));
  // The page fallback is not a route (the OpenAPI document lists routes): any other GET that
  // accepts HTML. A missing asset stays a 404 rather than a page where a script was expected.
  router.use((req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || req.path.startsWith("/assets/") || !req.accepts("html")) {
      next();
      return;
    }
    securityHeaders(res);
    res.setHeader("Cache-Control", "no-cache");
    res.sendFile(index);
  });
  return router;
}
