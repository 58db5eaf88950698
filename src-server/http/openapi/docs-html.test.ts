import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { operationsByTag, renderDocsHtml } from "./docs-html.js";
import { escapeHtml, inlineText, schemaHtml, typeLabel } from "./schema-html.js";

/** The elements and attributes the page writes itself. */
const PAGE_TAGS = new Set("!doctype html head meta title style body a header h1 h2 h3 h4 p div nav ul ol li span code wbr main section dl dt dd article table thead tbody tr th td strong".split(" "));
const PAGE_ATTRIBUTES = new Set(["lang", "charset", "name", "content", "class", "href", "id", "aria-label", "aria-labelledby", "tabindex", "scope"]);

const HOSTILE = `<script>alert(1)</script><img src=x onerror="alert('x')">&amp;`;

/** A small document in the generator's shape. */
function document(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: { title: "Pustaka", version: "0.1.0", description: "Local inference and grounded answers." },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key" } },
      schemas: { Error: { type: "object", properties: { error: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } }, required: ["error"] } },
    },
    paths: {
      "/healthz": { get: { operationId: "getHealthz", summary: "Liveness", tags: ["Discovery"], security: [], responses: { 200: { description: "OK", content: { "application/json": {} } } } } },
      "/v1/rag/corpora/{corpusId}/query": {
        post: {
          operationId: "postV1RagCorporaCorpusIdQuery",
          summary: "Answer a question with `citations`",
          tags: ["Grounded answers"],
          description: "Needs the `rag.read` scope.",
          "x-pustaka-scope": "rag.read",
          parameters: [{ name: "corpusId", in: "path", required: true, schema: { type: "string" } }],
          requestBody: {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    question: { type: "string", minLength: 1, maxLength: 8000 },
                    top_k: { type: "integer", minimum: 1, maximum: 50, default: 5 },
                    max_tokens: { type: "integer", exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER },
                    rerank: { anyOf: [{ type: "boolean" }, { type: "object", properties: { model: { type: "string" } }, required: ["model"] }] },
                    search: { type: "string", enum: ["hybrid", "vector"] },
                  },
                  required: ["question"],
                  additionalProperties: false,
                },
              },
            },
          },
          responses: { 200: { description: "OK", content: { "application/json": {}, "text/event-stream": {} } }, default: { description: "An error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } } },
        },
      },
      ...extra,
    },
  };
}

describe("the /docs page's HTML", () => {
  it("lists every operation under its tag, with method, path, summary, credential, parameters, body and responses", () => {
    const { html } = renderDocsHtml(document());
    assert.match(html, /^<!doctype html><html lang="en">/);
    assert.match(html, /<h2 id="tag-discovery">Discovery<\/h2>/);
    assert.match(html, /<h2 id="tag-grounded-answers">Grounded answers<\/h2>/);
    assert.match(html, /<h3 id="op-postv1ragcorporacorpusidquery"><span class="method m-post">POST<\/span> <code class="path">\/v1\/rag\/corpora\/\{corpusId\}\/query<\/code>/);
    assert.match(html, /Answer a question with <code>citations<\/code>/);
    assert.match(html, /with the <code>rag\.read<\/code> scope/);
    assert.match(html, /No credential needed\./, "a public route says so");
    assert.match(html, /<code>corpusId<\/code><\/th><td>path<\/td><td>required<\/td>/);
    assert.match(html, /<code class="field">question<\/code> <span class="type">string<\/span> <span class="required">required<\/span> <span class="bounds">1–8000 characters<\/span>/);
    assert.match(html, /<code class="field">top_k<\/code> <span class="type">integer<\/span> <span class="bounds">1–50 · default <code>5<\/code><\/span>/);
    assert.match(html, /<code class="field">max_tokens<\/code> <span class="type">integer<\/span> <span class="bounds">more than 0<\/span>/, "JavaScript's safe-integer bound is no bound worth saying");
    assert.match(html, /one of <code>&quot;hybrid&quot;<\/code>, <code>&quot;vector&quot;<\/code>/);
    assert.match(html, /one of 2 forms<\/span><ol class="variants"><li><span class="type">boolean<\/span><\/li><li><span class="type">object<\/span>/);
    assert.match(html, /<dt>200<\/dt><dd>OK · <code>application\/json<\/code>, <code>text\/event-stream<\/code><\/dd>/);
    assert.match(html, /<dt>Otherwise<\/dt><dd>An error \(<a href="#errors">the error shape<\/a>\)/);
    // The contents link to every operation and tag.
    for (const id of ["tag-discovery", "op-gethealthz", "tag-grounded-answers", "op-postv1ragcorporacorpusidquery", "using"]) assert.match(html, new RegExp(`<a (class="toc-tag" )?href="#${id}">`), id);
  });

  it("escapes every string the document holds: summaries, tags, paths, names, enum values, descriptions, titles", () => {
    const hostileOp = {
      operationId: `x" onmouseover="alert(1)`,
      summary: HOSTILE,
      description: HOSTILE,
      tags: [HOSTILE],
      "x-pustaka-scope": HOSTILE,
      parameters: [{ name: HOSTILE, in: HOSTILE, required: true, schema: { type: HOSTILE, pattern: HOSTILE, format: HOSTILE, default: HOSTILE }, description: HOSTILE }],
      requestBody: { content: { [HOSTILE]: { schema: { type: "object", description: HOSTILE, properties: { [HOSTILE]: { const: HOSTILE }, e: { enum: [HOSTILE, 1] }, r: { $ref: `#/$defs/${HOSTILE}` } }, additionalProperties: { type: "object", properties: { [HOSTILE]: { type: "string" } } } } } } },
      responses: { [HOSTILE]: { description: HOSTILE, content: { [HOSTILE]: {} } } },
    };
    const doc = document({ [`/v1/${HOSTILE}`]: { post: hostileOp } });
    (doc.info as Record<string, unknown>).title = HOSTILE;
    (doc.info as Record<string, unknown>).version = HOSTILE;
    const { html } = renderDocsHtml(doc);
    // Only the page's own elements and attributes: nothing of the document became markup.
    const body = html.replace(/<style>[\s\S]*?<\/style>/, "<style></style>");
    for (const [, tag, attributes] of body.matchAll(/<\/?([A-Za-z0-9!]+)([^>]*)>/g)) {
      assert.ok(PAGE_TAGS.has(tag!.toLowerCase()), `element <${tag}>`);
      for (const [, name] of attributes!.replace(/"[^"]*"/g, '""').matchAll(/\s([A-Za-z-]+)=/g)) assert.ok(PAGE_ATTRIBUTES.has(name!), `attribute ${name} on <${tag}>`);
    }
    assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"), "shown as text");
    assert.ok(html.includes("&amp;amp;"), "an entity in the text is shown, not decoded");
    // Every id and href target is made of safe characters only.
    for (const [, id] of html.matchAll(/\s(?:id|href)="#?([^"]*)"/g)) assert.match(id!, /^(\/v1\/(openapi\.json|docs)|\/docs|[a-z0-9-]+)$/, id);
  });

  it("gives every operation and tag a unique anchor, even when their names collide", () => {
    const twin = { summary: "a", tags: ["Discovery!"], responses: {} };
    const groups = operationsByTag(document({ "/a": { get: { ...twin, operationId: "same" }, post: { ...twin, operationId: "same" } }, "/b": { get: { ...twin, operationId: "same" } } }));
    const ids = [...groups.values()].flatMap((g) => [g.id, ...g.ops.map((o) => o.id)]);
    assert.equal(new Set(ids).size, ids.length, ids.join(" "));
    assert.deepEqual([...groups.keys()], ["Discovery", "Grounded answers", "Discovery!"]);
    assert.equal(groups.get("Discovery!")!.id, "tag-discovery-2");
  });

  it("survives a malformed document (missing or wrong-typed parts) and renders what there is", () => {
    for (const broken of [{}, { paths: null }, { paths: { "/x": null } }, { paths: { "/x": { get: "nope", trace: {} } } }, { info: 5, components: [], paths: { "/y": { get: { tags: "x", parameters: "p", requestBody: 1, responses: [] } } } }]) {
      const { html } = renderDocsHtml(broken);
      assert.match(html, /<\/html>\n$/);
    }
    assert.match(renderDocsHtml({ paths: { "/y": { get: {} } } }).html, /<h2 id="tag-other">Other<\/h2>/);
  });

  it("renders a huge document, and a schema nested past its depth bound, without running away", () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 3000; i++) paths[`/v1/p${i}`] = { get: { summary: `op ${i}`, tags: [`T${i % 40}`], responses: { 200: { description: "OK" } } } };
    const { html } = renderDocsHtml({ paths });
    assert.equal(html.match(/<article class="op"/g)?.length, 3000);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 500; i++) deep = { type: "object", properties: { [`level${i}`]: deep } };
    const rendered = schemaHtml(deep);
    assert.match(rendered, /nested further/);
    assert.ok(rendered.length < 20_000, `${rendered.length} characters`);
  });

  it("hashes its one style sheet for the CSP", () => {
    const { html, styleHash } = renderDocsHtml(document());
    const css = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    assert.equal(styleHash, `sha256-${createHash("sha256").update(css).digest("base64")}`);
    assert.equal(html.match(/<style>/g)?.length, 1);
    assert.doesNotMatch(html, /<script|<link|<img|url\(|@import|style="/);
  });
});

describe("schema HTML helpers", () => {
  it("escapes text and turns backticked spans into code", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    assert.equal(inlineText("use `<b>` here"), "use <code>&lt;b&gt;</code> here");
  });

  it("names types as a reader needs them", () => {
    assert.equal(typeLabel({ type: "array", items: { type: "string" } }), "array of string");
    assert.equal(typeLabel({ type: ["string", "null"] }), "string or null");
    assert.equal(typeLabel({ anyOf: [{ type: "string" }, { type: "number" }] }), "string or number");
    assert.equal(typeLabel({ type: "object", additionalProperties: { type: "number" } }), "map of number");
    assert.equal(typeLabel({ $ref: "#/$defs/Json" }), "Json");
    assert.equal(typeLabel({ const: "message" }), "<code>&quot;message&quot;</code>");
    assert.equal(typeLabel({}), "any");
  });
});
