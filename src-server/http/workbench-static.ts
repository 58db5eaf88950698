/**
 * Browser mode: the built workbench (Vite output) served at `/`, on the API's own origin,
 * with a strict Content-Security-Policy. Unknown non-API paths get `index.html` (the
 * workbench routes in the browser). Nothing here needs a credential: the page holds none.
 */
import path from "node:path";
import express, { Router, type Response } from "express";

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
  router.get(/^\/(?!v1\/|v1$|healthz$|assets\/).*/, (req, res, next) => {
    if (!req.accepts("html")) {
      next();
      return;
    }
    securityHeaders(res);
    res.setHeader("Cache-Control", "no-cache");
    res.sendFile(index);
  });
  return router;
}
