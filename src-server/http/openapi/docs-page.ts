/**
 * `GET /docs` (and `GET /v1/docs`): the API reference as one server-rendered page, built
 * from the OpenAPI document the server generates (`GET /v1/openapi.json`) and readable
 * offline. It takes the credentials that document takes: an API key or access token, or —
 * in a browser — the workbench's session. That session's cookie is scoped to `/v1`, so a
 * browser asking for `/docs` without a key is sent to `/v1/docs`, where its cookie goes.
 * The page's CSP allows no source at all but its own inline style sheet.
 */
import { createHash } from "node:crypto";
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { CSRF_HEADER, presentedCredential } from "../authenticate.js";
import { toWireError } from "../error-handler.js";
import { renderDocsHtml } from "./docs-html.js";
import { doc } from "./route-doc.js";
import { escapeHtml } from "./schema-html.js";

export interface DocsPageDeps {
  /** The OpenAPI document as served (built once the app's routes are all in place). */
  document: () => Record<string, unknown>;
  /** The same authentication the API's routes use (keys, tokens, the workbench's session). */
  authenticate: RequestHandler;
  /** Runs once the caller is known, as after authentication on the API's routes (the rate-limit headers). */
  authenticated?: RequestHandler;
}

/** The page's CSP: nothing from anywhere (no script, image, font or connection), but the one style sheet, by hash. */
export function docsCsp(styleHash: string): string {
  return [`default-src 'none'`, `style-src '${styleHash}'`, `base-uri 'none'`, `form-action 'none'`, `frame-ancestors 'none'`].join("; ");
}

function securityHeaders(res: Response, csp: string): void {
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cache-Control", "no-store");
}

/** A page load the browser itself marks as a navigation to a document (typed, a bookmark, a link). */
const isNavigation = (req: Request) => req.get("sec-fetch-mode") === "navigate" && req.get("sec-fetch-dest") === "document";

/**
 * The workbench's session is refused without the header its own scripts send
 * (`x-pustaka-csrf`), which a navigation cannot carry. A GET navigation the browser marks
 * as same-origin or typed (`Sec-Fetch-Site`) changes nothing and its answer cannot be read
 * by another origin, so it counts as the workbench's own.
 */
const sessionNavigation: RequestHandler = (req, _res, next) => {
  const site = req.get("sec-fetch-site");
  if (isNavigation(req) && (site === "same-origin" || site === "none")) req.headers[CSRF_HEADER] = "1";
  next();
};

/** A browser at `/docs` with no key: its session cookie only travels to `/v1`, so the page is read there. */
const toSessionPath: RequestHandler = (req, res, next) => {
  if (req.path.toLowerCase().startsWith("/docs") && presentedCredential(req).kind !== "bearer" && (isNavigation(req) || req.accepts(["json", "html"]) === "html")) {
    res.redirect(303, "/v1/docs");
    return;
  }
  next();
};

const REFUSAL_CSS = "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}";
const REFUSAL_CSP = docsCsp(`sha256-${createHash("sha256").update(REFUSAL_CSS).digest("base64")}`);

/** The refusal as a short page that says how to get in (the message is the API's own, escaped). */
function refusalPage(message: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">` +
    `<title>Pustaka API reference</title><style>${REFUSAL_CSS}</style></head>` +
    `<body><main><h1>The API reference needs you signed in</h1><p>${escapeHtml(message)}</p>` +
    `<p>Open the workbench with the sign-in link the server printed, then open <a href="/docs">/docs</a> again; ` +
    `or ask for the page with an API key (<code>Authorization: Bearer psk-…</code>).</p></main></body></html>\n`
  );
}

/** Browsers get a refusal as that page; other clients get the API's JSON error. */
const refusal: ErrorRequestHandler = (error, req: Request, res, next) => {
  if (res.headersSent || req.accepts(["json", "html"]) !== "html") {
    next(error);
    return;
  }
  const wire = toWireError(error);
  securityHeaders(res, REFUSAL_CSP);
  if (wire.retryAfter !== undefined) res.setHeader("Retry-After", String(wire.retryAfter));
  if (wire.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="pustaka"');
  // For the access log line, as the API's error handler notes it.
  res.locals.errorCode = wire.body.error.code ?? undefined;
  res.locals.errorMessage = wire.body.error.message;
  res.status(wire.status).type("html").send(refusalPage(wire.body.error.message));
};

const PATHS = ["/docs", "/v1/docs"];

const passThrough: RequestHandler = (_req, _res, next) => next();

/** The page's routes: authenticated like the document it shows, rendered once per document. */
export function docsPage(deps: DocsPageDeps): Router {
  const router = Router();
  let rendered: { source: Record<string, unknown>; html: string; csp: string } | undefined;
  const summary = "This API reference as one HTML page (also at /docs), generated from the OpenAPI document; readable offline";
  router.get(PATHS, doc({ summary, tag: "Discovery", response: { contentType: "text/html" } }), toSessionPath, sessionNavigation, deps.authenticate, deps.authenticated ?? passThrough, (_req, res) => {
    const source = deps.document();
    if (rendered?.source !== source) {
      const { html, styleHash } = renderDocsHtml(source);
      rendered = { source, html, csp: docsCsp(styleHash) };
    }
    securityHeaders(res, rendered.csp);
    res.type("html").send(rendered.html);
  });
  router.use(PATHS, refusal);
  return router;
}
