/**
 * The page the window shows while the server is not serving the workbench: starting,
 * failed, or the workbench not built. Static HTML in a data: URL, no script.
 */
import type { HostState } from "./server-host.js";

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A data: URL of a page with `title`, `message` and optional `detail` (all text, escaped). */
export function splashPage(content: { title: string; message: string; detail?: string }): string {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escape(content.title)}</title>
<style>
  html, body { height: 100%; margin: 0; }
  body { display: grid; place-items: center; background: #0f2a2e; color: #e8f1ef; font: 15px/1.5 system-ui, sans-serif; }
  main { max-width: 34rem; padding: 2rem; text-align: center; }
  h1 { font-size: 1.4rem; font-weight: 600; margin: 0 0 .5rem; letter-spacing: .02em; }
  p { margin: .25rem 0; color: #b9d3cf; }
  pre { white-space: pre-wrap; text-align: left; background: #0a1e21; color: #f3c9b8; padding: .75rem 1rem; border-radius: 6px; font-size: 12px; }
</style></head>
<body><main>
<h1>${escape(content.title)}</h1>
<p>${escape(content.message)}</p>
${content.detail ? `<pre>${escape(content.detail)}</pre>` : ""}
</main></body></html>`;
  return `data:text/html;charset=utf-8,${encodeURIComponent(html)}`;
}

/** The page for a server state when the workbench is not (or cannot be) shown. */
export function statusPage(state: Pick<HostState, "phase" | "url" | "error">): string {
  switch (state.phase) {
    case "failed":
      return splashPage({
        title: "Pustaka could not start its local server",
        message: "Check the models folder (Settings…) or the logs (Help → Open logs folder); changing the settings tries again.",
        ...(state.error ? { detail: state.error } : {}),
      });
    case "ready":
      return splashPage({
        title: "The workbench is not built",
        message: `The local API is running at ${state.url ?? "?"}/v1. Build the interface with npm run build:renderer and start Pustaka again.`,
      });
    case "crashed":
    case "restarting":
      return splashPage({ title: "Pustaka", message: "Restarting the local server…", ...(state.error ? { detail: state.error } : {}) });
    default:
      return splashPage({ title: "Pustaka", message: "Starting the local server…" });
  }
}
