/**
 * The OpenAPI document as one self-contained HTML page (`GET /docs`): grouped by tag, each
 * operation with its method, path, summary, the credential and scope it needs, parameters,
 * request body and responses, behind an in-page table of contents. No script, no font,
 * no image, nothing fetched: one inline style sheet (allowed by its hash in the page's CSP),
 * light and dark by `prefers-color-scheme`. Everything taken from the document is escaped.
 */
import { createHash } from "node:crypto";
import { DOCS_CSS } from "./docs-css.js";
import { escapeHtml, inlineText, schemaHtml } from "./schema-html.js";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const asObject = (value: unknown): Json => (isObject(value) ? value : {});
const text = (value: unknown): string => (typeof value === "string" ? value : "");

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];

/** One operation of the document, with the anchor it is reached by. */
interface Operation {
  method: string;
  path: string;
  op: Json;
  id: string;
}

/** An HTML id from any text: letters, digits and dashes only, so no document string reaches an attribute unescaped. */
const slug = (value: string) => value.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase() || "x";

/** A tag's operations and the anchor of its section. */
interface Group {
  id: string;
  ops: Operation[];
}

/** The operations grouped by their first tag, in the document's order; every anchor unique. */
export function operationsByTag(document: Json): Map<string, Group> {
  const groups = new Map<string, Group>();
  const used = new Set<string>();
  const unique = (base: string) => {
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    return id;
  };
  for (const [path, item] of Object.entries(asObject(document.paths))) {
    for (const [method, value] of Object.entries(asObject(item))) {
      if (!METHODS.includes(method) || !isObject(value)) continue;
      const tags = Array.isArray(value.tags) ? value.tags.map(String) : [];
      const tag = tags[0] ?? "Other";
      if (!groups.has(tag)) groups.set(tag, { id: unique(`tag-${slug(tag)}`), ops: [] });
      groups.get(tag)!.ops.push({ method, path, op: value, id: unique(`op-${slug(text(value.operationId) || `${method} ${path}`)}`) });
    }
  }
  return groups;
}

const methodBadge = (method: string) => `<span class="method m-${slug(method)}">${escapeHtml(method.toUpperCase())}</span>`;

/** Which credential the operation takes: none, any key, or a key with a scope (read from the generator's extension or its description). */
function credentialOf(op: Json): string {
  if (Array.isArray(op.security) && op.security.length === 0) return "No credential needed.";
  const scope = text(op["x-pustaka-scope"]) || /Needs the `([^`]+)` scope/.exec(text(op.description))?.[1];
  return scope ? `An API key, access token or session with the <code>${escapeHtml(scope)}</code> scope.` : "Any valid API key, access token or session (the operation may check more).";
}

function parametersHtml(op: Json): string {
  const params = (Array.isArray(op.parameters) ? op.parameters : []).filter(isObject);
  if (params.length === 0) return "";
  const rows = params.map((p) => {
    const required = p.required === true ? "required" : "optional";
    return `<tr><th scope="row"><code>${escapeHtml(text(p.name))}</code></th><td>${escapeHtml(text(p.in))}</td><td>${required}</td><td>${schemaHtml(p.schema)}${p.description ? `<p>${inlineText(text(p.description))}</p>` : ""}</td></tr>`;
  });
  return `<h4>Parameters</h4><table><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Required</th><th scope="col">Value</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function bodyHtml(op: Json): string {
  const content = asObject(asObject(op.requestBody).content);
  const types = Object.entries(content);
  if (types.length === 0) return "";
  const parts = types.map(([type, media]) => `<p class="content-type">Content type <code>${escapeHtml(type)}</code></p><div class="schema">${schemaHtml(asObject(media).schema)}</div>`);
  return `<h4>Request body</h4>${parts.join("")}`;
}

function responsesHtml(op: Json): string {
  const entries = Object.entries(asObject(op.responses));
  if (entries.length === 0) return "";
  const items = entries.map(([status, value]) => {
    const response = asObject(value);
    const types = Object.keys(asObject(response.content)).map((t) => `<code>${escapeHtml(t)}</code>`);
    const label = status === "default" ? "Otherwise" : escapeHtml(status);
    const error = JSON.stringify(response.content ?? {}).includes("#/components/schemas/Error") ? ` (<a href="#errors">the error shape</a>)` : "";
    return `<dt>${label}</dt><dd>${inlineText(text(response.description))}${error}${types.length ? ` · ${types.join(", ")}` : ""}</dd>`;
  });
  return `<h4>Responses</h4><dl class="responses">${items.join("")}</dl>`;
}

function operationHtml({ method, path, op, id }: Operation): string {
  const summary = text(op.summary);
  const description = text(op.description).replace(/^Needs the `[^`]+` scope\.\s*/, "");
  return (
    `<article class="op" aria-labelledby="${id}">` +
    `<h3 id="${id}">${methodBadge(method)} <code class="path">${escapeHtml(path)}</code> <a class="anchor" href="#${id}" aria-label="Link to ${escapeHtml(method.toUpperCase())} ${escapeHtml(path)}">#</a></h3>` +
    (summary ? `<p class="summary">${inlineText(summary)}</p>` : "") +
    (description ? `<p>${inlineText(description)}</p>` : "") +
    `<p class="credential"><strong>Needs:</strong> ${credentialOf(op)}</p>` +
    parametersHtml(op) +
    bodyHtml(op) +
    responsesHtml(op) +
    `</article>`
  );
}

function contentsHtml(groups: Map<string, Group>): string {
  const tags = [...groups].map(([tag, { id, ops }]) => {
    // A long path breaks after its slashes, never inside a word.
    const links = ops.map((o) => `<li><a href="#${o.id}">${methodBadge(o.method)} <code>${escapeHtml(o.path).replace(/\//g, "/<wbr>")}</code></a></li>`);
    return `<li><a class="toc-tag" href="#${id}">${escapeHtml(tag)}</a> <span class="count">${ops.length}</span><ul>${links.join("")}</ul></li>`;
  });
  return `<nav class="toc" aria-labelledby="contents"><h2 id="contents">Contents</h2><ul><li><a class="toc-tag" href="#using">Using the API</a></li>${tags.join("")}</ul></nav>`;
}

/** The security schemes and the error shape, before the operations. */
function usingHtml(document: Json): string {
  const components = asObject(document.components);
  const schemes = Object.entries(asObject(components.securitySchemes)).map(([name, value]) => {
    const s = asObject(value);
    const how = s.type === "http" ? `HTTP <code>Authorization: ${escapeHtml(text(s.scheme).replace(/^bearer$/i, "Bearer"))} …</code>` : s.in ? `${escapeHtml(text(s.in))} <code>${escapeHtml(text(s.name))}</code>` : escapeHtml(text(s.type));
    return `<dt>${escapeHtml(name)}</dt><dd>${how}${s.description ? ` — ${inlineText(text(s.description))}` : ""}</dd>`;
  });
  const error = asObject(components.schemas).Error;
  return (
    `<section aria-labelledby="using"><h2 id="using">Using the API</h2>` +
    `<p>Every operation below is served by this server; the page is generated from its <a href="/v1/openapi.json">OpenAPI 3.1 document</a>, which is generated from the routes and the schemas they validate with.</p>` +
    (schemes.length ? `<h3 id="credentials">Credentials</h3><dl>${schemes.join("")}</dl>` : "") +
    (error ? `<h3 id="errors">Errors</h3><p>A failed request answers an HTTP status and this body (Anthropic's shape on <code>/v1/messages</code>, Ollama's under <code>/api</code>, JSON-RPC under <code>/mcp</code>, OAuth's on the token endpoint).</p><div class="schema">${schemaHtml(error)}</div>` : "") +
    `</section>`
  );
}

/** The page and the hash of its one style sheet (for `style-src` in the CSP). */
export function renderDocsHtml(document: Json): { html: string; styleHash: string } {
  const info = asObject(document.info);
  const title = text(info.title) || "API";
  const groups = operationsByTag(document);
  const sections = [...groups].map(([tag, { id, ops }]) => `<section aria-labelledby="${id}"><h2 id="${id}">${escapeHtml(tag)}</h2>${ops.map(operationHtml).join("")}</section>`);
  const count = [...groups.values()].reduce((n, g) => n + g.ops.length, 0);
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} API reference</title><style>${DOCS_CSS}</style></head>` +
    `<body><a class="skip" href="#main">Skip to the reference</a>` +
    `<header><h1>${escapeHtml(title)} API reference</h1><p class="meta">Version ${escapeHtml(text(info.version))} · OpenAPI ${escapeHtml(text(document.openapi))} · ${count} operations</p>` +
    (info.description ? `<p>${inlineText(text(info.description))}</p>` : "") +
    `</header><div class="layout">${contentsHtml(groups)}<main id="main" tabindex="-1">${usingHtml(document)}${sections.join("")}</main></div></body></html>\n`;
  return { html, styleHash: `sha256-${createHash("sha256").update(DOCS_CSS).digest("base64")}` };
}
