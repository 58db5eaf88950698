/**
 * Property-based fuzzing of every route (fast-check, fixed seed, bounded count): random
 * and malformed methods, paths, ids, query strings, headers, content types and bodies,
 * sent over raw HTTP to a real server with a small chat, embedding and rerank model. Whatever
 * comes in: no 5xx, no crash, every error in the route family's error shape, and the
 * server still healthy at the end. FUZZ_RUNS and FUZZ_SEED override the count and seed.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { GGUF_TYPE, header, kvArrayHead, soundGguf } from "../helpers/gguf-builder.js";
import { testModel, tinyModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_250_707);

/** Every route of the app (method, path template with `:params`), as app.ts mounts them. */
const ROUTES: [string, string][] = [
  ["GET", "/healthz"],
  ["POST", "/v1/session"],
  ["DELETE", "/v1/session"],
  ["POST", "/v1/oauth/token"],
  ["GET", "/.well-known/jwks.json"],
  ["GET", "/v1/oauth/jwks"],
  ["GET", "/.well-known/oauth-authorization-server"],
  ["POST", "/v1/rag/corpora"],
  ["GET", "/v1/rag/corpora"],
  ["GET", "/v1/rag/corpora/:corpus"],
  ["PATCH", "/v1/rag/corpora/:corpus"],
  ["DELETE", "/v1/rag/corpora/:corpus"],
  ["POST", "/v1/rag/corpora/:corpus/documents"],
  ["GET", "/v1/rag/corpora/:corpus/documents"],
  ["GET", "/v1/rag/corpora/:corpus/documents/:document"],
  ["DELETE", "/v1/rag/corpora/:corpus/documents/:document"],
  ["GET", "/v1/rag/corpora/:corpus/documents/:document/content"],
  ["GET", "/v1/rag/corpora/:corpus/chunks/:chunk"],
  ["GET", "/v1/rag/corpora/:corpus/events"],
  ["POST", "/v1/rag/corpora/:corpus/query"],
  ["POST", "/v1/rag/corpora/:corpus/search"],
  ["GET", "/v1/models"],
  ["GET", "/v1/models/:model"],
  ["GET", "/v1/models/catalog"],
  ["POST", "/v1/models/pulls"],
  ["GET", "/v1/models/pulls"],
  ["GET", "/v1/models/pulls/events"],
  ["GET", "/v1/models/pulls/:pull"],
  ["DELETE", "/v1/models/pulls/:pull"],
  ["POST", "/v1/models/files"],
  ["POST", "/v1/chat/completions"],
  ["POST", "/v1/inference/chat"],
  ["POST", "/v1/completions"],
  ["POST", "/v1/responses"],
  ["POST", "/v1/messages"],
  ["POST", "/v1/messages/count_tokens"],
  ["POST", "/v1/embeddings"],
  ["POST", "/v1/inference/embeddings"],
  ["POST", "/v1/rerank"],
  ["POST", "/v1/reranking"],
  ["POST", "/v1/admin/workspaces"],
  ["GET", "/v1/admin/workspaces"],
  ["GET", "/v1/admin/workspaces/:workspace"],
  ["PATCH", "/v1/admin/workspaces/:workspace"],
  ["POST", "/v1/admin/workspaces/:workspace/api_keys"],
  ["GET", "/v1/admin/workspaces/:workspace/api_keys"],
  ["PATCH", "/v1/admin/workspaces/:workspace/api_keys/:key"],
  ["DELETE", "/v1/admin/workspaces/:workspace/api_keys/:key"],
  ["POST", "/v1/admin/workspaces/:workspace/service_accounts"],
  ["GET", "/v1/admin/workspaces/:workspace/service_accounts"],
  ["GET", "/v1/admin/workspaces/:workspace/service_accounts/:account"],
  ["PATCH", "/v1/admin/workspaces/:workspace/service_accounts/:account"],
  ["DELETE", "/v1/admin/workspaces/:workspace/service_accounts/:account"],
  ["POST", "/v1/admin/workspaces/:workspace/service_accounts/:account/secret"],
  ["GET", "/v1/me"],
  ["GET", "/v1/audit/events"],
  ["GET", "/v1/audit/export"],
  ["GET", "/v1/audit/verify"],
  ["GET", "/v1/audit/signing-key"],
  ["GET", "/v1/admin/security"],
  ["POST", "/v1/admin/oauth/rotate-signing-key"],
  ["GET", "/v1/admin/tombstones"],
  ["POST", "/v1/admin/tombstones/purge"],
  ["POST", "/v1/conversations"],
  ["GET", "/v1/conversations"],
  ["GET", "/v1/conversations/:conversation"],
  ["PATCH", "/v1/conversations/:conversation"],
  ["DELETE", "/v1/conversations/:conversation"],
  ["POST", "/v1/conversations/:conversation/messages"],
  ["GET", "/v1/conversations/:conversation/export"],
];

/** Fields each JSON route reads, so generated bodies reach past "unknown parameter". */
const FIELDS: Record<string, string[]> = {
  "/v1/session": ["token"],
  "/v1/rag/corpora": ["name", "embedding_model", "chunking", "retention_days", "metadata"],
  "/v1/rag/corpora/:corpus": ["name", "retention_days", "metadata"],
  "/v1/rag/corpora/:corpus/query": ["question", "top_k", "include_citations", "stream", "model", "temperature", "max_tokens", "filter", "search"],
  "/v1/rag/corpora/:corpus/search": ["query", "top_k", "filter", "search"],
  "/v1/models/pulls": ["model"],
  "/v1/models/files": ["path", "id", "type"],
  "/v1/chat/completions": ["model", "messages", "max_tokens", "temperature", "stream", "stream_options", "response_format", "tools", "tool_choice", "stop", "seed", "top_p", "n", "logprobs"],
  "/v1/embeddings": ["model", "input", "encoding_format", "dimensions", "user"],
  "/v1/rerank": ["model", "query", "documents", "top_n", "return_documents"],
  "/v1/admin/workspaces": ["name"],
  "/v1/admin/workspaces/:workspace": ["rate_limit_tier"],
  "/v1/admin/workspaces/:workspace/api_keys": ["name", "scopes", "expires_in_days"],
  "/v1/admin/workspaces/:workspace/api_keys/:key": ["rate_limit_tier"],
  "/v1/admin/workspaces/:workspace/service_accounts": ["name", "scopes", "public_key", "jwks_url", "token_ttl_seconds"],
  "/v1/conversations": ["title", "corpus_id"],
  "/v1/conversations/:conversation": ["title"],
  "/v1/conversations/:conversation/messages": ["messages"],
};
FIELDS["/v1/completions"] = ["model", "prompt", "max_tokens", "temperature", "stream", "stop", "suffix", "echo"];
FIELDS["/v1/responses"] = ["model", "input", "instructions", "max_output_tokens", "stream", "tools", "store"];
FIELDS["/v1/messages"] = ["model", "messages", "max_tokens", "system", "stream", "tools", "temperature"];
FIELDS["/v1/messages/count_tokens"] = ["model", "messages", "system", "tools"];
FIELDS["/v1/inference/chat"] = FIELDS["/v1/chat/completions"]!;
FIELDS["/v1/inference/embeddings"] = FIELDS["/v1/embeddings"]!;
FIELDS["/v1/reranking"] = FIELDS["/v1/rerank"]!;

/** Plausible values per field: fuzzed values mix with these so some requests are nearly valid. */
const SAMPLES: Record<string, unknown[]> = {
  model: ["tiny", "minilm", "rr", "svc-merlion-13b", "svc-embed-1024", "gpt-4o", ""],
  embedding_model: ["minilm", "tiny", "nope"],
  messages: [
    [{ role: "user", content: "Once upon a time" }],
    [{ role: "system", content: "x" }],
    [{ role: "tool", content: "r", tool_call_id: "1" }],
    [{ role: "assistant", content: null }],
    // Token counting: prompts far beyond any context, which must be refused by length, quickly.
    [{ role: "user", content: "word ".repeat(40_000) }],
    [{ role: "user", content: [{ type: "text", text: "x".repeat(200_000) }] }],
    Array.from({ length: 2000 }, () => ({ role: "user", content: "a b c" })),
  ],
  prompt: ["Once upon a time", "", ["a", "b"], [1, 2, 3], "z".repeat(200_000)],
  system: ["Be brief.", "s".repeat(150_000), [{ type: "text", text: "x" }]],
  // Model registration: files that are not models, hostile headers, links, and paths that do not exist.
  path: ["/etc/passwd", "/etc/shadow", "/dev/zero", "/dev/stdin", "/proc/self/mem", "relative/model.gguf", "/nope/missing.gguf", "/", ""],
  max_tokens: [1, 3, 0, -1, 1e9, 2 ** 53 + 1, 3.5],
  input: ["hello", ["a", "b"], [[1, 2]], "", [""]],
  question: ["What is in it?", "", "x".repeat(5000)],
  query: ["harbour", "", " "],
  documents: [["The harbour opens at dawn.", "Boats leave at noon."], [{ text: "harbour" }, ""], [], [1], "harbour", [{ title: "x" }]],
  top_n: [1, 2, 1000, 0, -1, 1.5],
  return_documents: [true, false, "yes"],
  type: ["chat", "embedding", "rerank", "vision"],
  name: ["n", "", " ", "x".repeat(300)],
  scopes: [["inference"], ["rag.read", "rag.write"], ["root"], []],
  chunking: ["paragraph", "fixed", "semantic", "heading", "banana"],
  search: ["hybrid", "vector", "keyword", "psychic"],
  encoding_format: ["float", "base64", "hex"],
  top_k: [1, 5, 50, 51, 0, -3],
  metadata: [{ a: "b" }, { "": 1 }, [], null],
  filter: [{ topic: "x" }, { __proto__: { polluted: true } }, "x"],
  stream: [true, false, "yes"],
  temperature: [0, 1, 2.5, -1],
};

const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "__defineGetter__"];

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  route: string;
}

interface Ids {
  corpus: string[];
  document: string[];
  chunk: string[];
  conversation: string[];
  workspace: string[];
  key: string[];
}

/** Path segments: real ids, near-misses and hostile strings (percent-encoded or raw). */
function idArb(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(real.length ? real : ["none"])) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "x"))) },
    {
      weight: 2,
      arbitrary: fc.constantFrom("%", "%ff", "%00", "%E0%A4%A", "..", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "..%2F..%2F", "corp_", "doc_%20", "ws_default", "%5B%5D", "x".repeat(5000), "🙂", "%F0%9F%99%82", "__proto__", "constructor", "null", "-1", "1e309", "%25"),
    },
  );
}

function jsonValueArb(depth: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: depth }) },
    { weight: 1, arbitrary: fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, 1e-320, Number.MAX_SAFE_INTEGER, -2147483649, "", "\u0000", "\uFEFF", "A".repeat(70_000)) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 50 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...PROTO_KEYS), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) },
  );
}

/** A JSON body for `route`: its fields with plausible or fuzzed values, sometimes with extra and prototype keys. */
function fieldsBodyArb(route: string): fc.Arbitrary<unknown> {
  const fields = FIELDS[route] ?? [];
  if (fields.length === 0) return jsonValueArb(3);
  const valueOf = (field: string) => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(SAMPLES[field] ?? ["x", 1, true, null])) }, { weight: 1, arbitrary: jsonValueArb(3) });
  return fc
    .tuple(
      fc.subarray(fields).chain((chosen) => fc.tuple(...chosen.map((f) => valueOf(f).map((v) => [f, v] as const)))),
      fc.option(fc.tuple(fc.constantFrom(...PROTO_KEYS, "extra", ""), jsonValueArb(2)), { freq: 4 }),
    )
    .map(([entries, extra]) => {
      // JSON text, not an object literal: "__proto__" must travel as a key.
      const parts = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`);
      if (extra) parts.push(`${JSON.stringify(extra[0])}:${JSON.stringify(extra[1]) ?? "null"}`);
      return { raw: `{${parts.join(",")}}` };
    });
}

function bodyArb(route: string): fc.Arbitrary<Buffer | null> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 6, arbitrary: fieldsBodyArb(route).map((b) => Buffer.from(typeof b === "object" && b !== null && "raw" in b ? (b as { raw: string }).raw : (JSON.stringify(b) ?? "null"))) },
    { weight: 2, arbitrary: jsonValueArb(4).map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "{",
        '{"a":',
        "[[[[[[[[[[",
        "[".repeat(20_000) + "]".repeat(20_000),
        '{"a":1}{"b":2}',
        "null",
        '"string"',
        "1e99999",
        "\u0000",
        '{"messages":[{"role":"user","content":"\uD800"}]}',
        `{"x":"${"\\u0000".repeat(100)}"}`,
        "\xEF\xBB\xBF{}",
      ).map((s) => Buffer.from(s, "latin1")),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
  );
}

/** A multipart upload: file parts with odd names and contents, a metadata field, sometimes cut short or mis-bounded. */
function multipartArb(): fc.Arbitrary<{ type: string; body: Buffer }> {
  const part = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        field: fc.constantFrom("file", "file", "file", "files", "metadata", ""),
        filename: fc.constantFrom("a.md", "notes.txt", "../../etc/passwd", "", "x".repeat(300) + ".md", "naïve résumé.txt", "a.pdf", "a.docx", "page.html", "noext", "a.md\u0000.exe"),
        content: fc.oneof(
          fc.constantFrom("# Title\n\nSome text.", "", "%PDF-1.4\n garbage", "PK\x03\x04 not really", "<html><body><p>hi</p></body></html>", "\xff\xfe h\x00i\x00"),
          fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a).toString("latin1")),
        ),
      }).map(({ field, filename, content }) => `Content-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}`),
    },
    { weight: 1, arbitrary: jsonValueArb(2).map((v) => `Content-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(v) ?? ""}`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((v) => `Content-Disposition: form-data; name="${v.replace(/"/g, "")}"\r\n\r\n${v}`) },
  );
  return fc
    .record({ parts: fc.array(part, { minLength: 0, maxLength: 4 }), boundary: fc.constantFrom("xyz", "----b", "a".repeat(70)), cut: fc.option(fc.nat({ max: 400 }), { freq: 4 }), lie: fc.boolean() })
    .map(({ parts, boundary, cut, lie }) => {
      const text = parts.map((p) => `--${boundary}\r\n${p}\r\n`).join("") + `--${boundary}--\r\n`;
      const body = Buffer.from(text, "latin1");
      return { type: `multipart/form-data; boundary=${lie ? "other" : boundary}`, body: cut === null ? body : body.subarray(0, cut) };
    });
}

function queryArb(): fc.Arbitrary<string> {
  const key = fc.constantFrom("limit", "after", "before", "order", "format", "type", "since", "__proto__", "constructor", "x", "limit[]");
  const value = fc.oneof(fc.constantFrom("1", "0", "-1", "100", "101", "1e309", "NaN", "asc", "desc", "sideways", "%", "%ff", "", "markdown", "corp_x"), fc.string({ maxLength: 12 }).map(encodeURIComponent));
  return fc.array(fc.tuple(key, value), { maxLength: 4 }).map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));
}

function requestArb(key: string, ids: Ids): fc.Arbitrary<FuzzRequest> {
  const fill = (template: string): fc.Arbitrary<string> => {
    const names = template.match(/:[a-z]+/g) ?? [];
    const pool: Record<string, string[]> = { ":corpus": ids.corpus, ":document": ids.document, ":chunk": ids.chunk, ":conversation": ids.conversation, ":workspace": ids.workspace, ":key": ids.key };
    return fc.tuple(...names.map((n) => (n === ":model" ? fc.constantFrom("tiny", "minilm", "svc-merlion-13b", "a/b/c", "%2F", "catalog", "pulls") : idArb(pool[n] ?? [])))).map((values) => {
      let path = template;
      names.forEach((n, i) => (path = path.replace(n, values[i]!)));
      return path;
    });
  };
  const known = fc.constantFrom(...ROUTES).chain(([method, template]) =>
    fc.record({
      method: fc.oneof({ weight: 5, arbitrary: fc.constant(method) }, { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "PROPFIND", "M-SEARCH") }),
      path: fill(template),
      query: queryArb(),
      route: fc.constant(template),
      body: bodyArb(template),
      multipart: template.endsWith("/documents") && method === "POST" ? fc.option(multipartArb(), { freq: 3, nil: null }) : fc.constant(null),
    }),
  );
  const unknown = fc.record({
    method: fc.constantFrom("GET", "POST", "DELETE"),
    path: fc.oneof(fc.constantFrom("/", "/v1", "/v1/", "/v2/models", "/v1/models/", "/v1//rag", "/v1/rag/corpora//documents", "/%2e%2e/%2e%2e/etc/passwd", "/v1/%ff", "/.env", "/v1/chat/completions/extra"), fc.webPath()),
    query: queryArb(),
    route: fc.constant("(unknown)"),
    body: bodyArb("(unknown)"),
    multipart: fc.constant(null),
  });
  const headersArb = fc.record({
    authorization: fc.oneof(
      { weight: 8, arbitrary: fc.constant(`Bearer ${key}`) },
      { weight: 1, arbitrary: fc.constantFrom("", "Bearer", "Bearer ", `Bearer ${key} extra`, "Basic dXNlcjpwYXNz", "Bearer psk-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", `bearer ${key}`, "Bearer eyJhbGciOiJub25lIn0.e30.", "Bearer \u00e9") },
      { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")) },
    ),
    "content-type": fc.oneof(
      { weight: 6, arbitrary: fc.constant("application/json") },
      { weight: 2, arbitrary: fc.constantFrom("application/json; charset=utf-8", "application/json; charset=utf-16", "application/json; charset=bogus", "text/plain", "multipart/form-data", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "", "*/*") },
    ),
    "content-encoding": fc.oneof({ weight: 8, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constantFrom("gzip", "deflate", "br", "identity", "bogus", "gzip, br") }),
    "x-request-id": fc.constantFrom("", "", "fuzz-request-0001", "short", "x".repeat(300), "../../etc"),
    accept: fc.constantFrom("", "application/json", "text/html", "text/event-stream", "*/*"),
  });
  return fc.tuple(fc.oneof({ weight: 9, arbitrary: known }, { weight: 1, arbitrary: unknown }), headersArb).map(([r, h]) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(h)) if (value !== "") headers[name] = value;
    if (r.multipart) {
      headers["content-type"] = r.multipart.type;
      delete headers["content-encoding"];
      return { method: r.method, path: r.path + r.query, headers, body: r.multipart.body, route: r.route };
    }
    return { method: r.method, path: r.path + r.query, headers, body: r.method === "GET" && r.body && r.body.length > 0 && r.route !== "(unknown)" ? null : r.body, route: r.route };
  });
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Sends over raw HTTP (any method, any path bytes, a body on any method); event streams are closed once their head arrives. */
function send(base: string, r: FuzzRequest): Promise<Reply | "unsendable"> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    let req: http.ClientRequest;
    try {
      req = http.request({ host: hostname, port, method: r.method, path: r.path, headers: { ...r.headers, ...(r.body ? { "content-length": String(r.body.length) } : {}) }, agent });
    } catch {
      resolve("unsendable"); // Node refuses to send this path or header itself
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer in 30 s to ${r.method} ${r.path.slice(0, 200)}`));
    }, 30_000);
    req.on("response", (res) => {
      const type = String(res.headers["content-type"] ?? "");
      if (type.startsWith("text/event-stream") && res.statusCode === 200) {
        clearTimeout(timer);
        res.destroy();
        req.destroy();
        resolve({ status: 200, type, body: "" });
        return;
      }
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, type, body });
      });
      res.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${r.method} ${r.path.slice(0, 200)}: ${error.message}`));
    });
    req.end(r.body ?? undefined);
  });
}

/** The OpenAI error shape (or OAuth's on the token endpoint). */
function assertErrorShape(r: FuzzRequest, reply: Reply): void {
  const where = `${r.method} ${r.path.slice(0, 150)} → ${reply.status} ${reply.body.slice(0, 300)}`;
  assert.match(reply.type, /^application\/json/, `error responses are JSON: ${where}`);
  const body = JSON.parse(reply.body) as { error?: unknown; error_description?: unknown };
  if (/^\/v1\/messages(\/|$)/.test(r.path.split("?")[0]!)) {
    // Anthropic's shape on its routes.
    const anthropic = body as { type?: unknown; error?: { type?: unknown; message?: unknown } };
    assert.equal(anthropic.type, "error", where);
    assert.equal(typeof anthropic.error?.type, "string", where);
    assert.equal(typeof anthropic.error?.message, "string", where);
    return;
  }
  if (r.method === "POST" && r.path.split("?")[0] === "/v1/oauth/token") {
    assert.equal(typeof body.error, "string", where);
    assert.equal(typeof body.error_description, "string", where);
    return;
  }
  const error = body.error as { message?: unknown; type?: unknown; code?: unknown; param?: unknown } | undefined;
  assert.ok(error && typeof error === "object", `an error object: ${where}`);
  assert.equal(typeof error.message, "string", where);
  assert.ok((error.message as string).length > 0, where);
  assert.match(String(error.type), /^(invalid_request_error|authentication_error|permission_error|not_found_error|conflict_error|rate_limit_error|service_unavailable_error)$/, where);
  assert.ok(error.code === null || (typeof error.code === "string" && /^[a-z0-9_]+$/.test(error.code)), `snake_case code: ${where}`);
  assert.ok(error.param === null || error.param === undefined || typeof error.param === "string", where);
}

describe("fuzzing every route", () => {
  let t: TestServer;
  let hostileDir = "";
  const ids: Ids = { corpus: [], document: [], chunk: [], conversation: [], workspace: ["ws_default"], key: [] };
  before(async () => {
    t = await startTestServer({
      bindings: { "svc-merlion-13b": tinyModel("stories260K"), tiny: tinyModel("stories260K"), minilm: testModel("all-minilm-l6-v2"), rr: testModel("rerank-random") },
      config: { chat: { contextSize: 256, sequences: 2 }, models: { defaultEmbedding: "minilm" }, limits: { maxJsonBodyBytes: 256 * 1024 } },
    });
    // Real ids, so some requests reach past "not found".
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "fuzzed", embedding_model: "minilm", chunking: "paragraph" })).json;
    ids.corpus.push(corpus.id);
    const uploaded = await upload(t, corpus.id, [{ name: "notes.md", content: "# Harbour\n\nThe harbour opens at dawn.\n\nBoats leave at noon." }]);
    ids.document.push(uploaded.json.documents[0].id);
    await waitForStatus(t, corpus.id);
    const found = (await t.call("POST", `/v1/rag/corpora/${corpus.id}/search`, { query: "harbour" })).json;
    ids.chunk.push(...found.data.map((c: { chunk_id?: string; id?: string }) => c.chunk_id ?? c.id).filter(Boolean));
    ids.conversation.push((await t.call("POST", "/v1/conversations", { title: "fuzz" })).json.id);
    const spare = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "spare", scopes: ["inference"] })).json;
    ids.key.push(spare.id);
    // Hostile model files for POST /v1/models/files, mixed into its generated paths.
    hostileDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-fuzz-models-"));
    const files: Record<string, Buffer> = {
      "huge-array.gguf": Buffer.concat([header(3, 0, 1), kvArrayHead("general.tags", GGUF_TYPE.uint8, 2n ** 40n)]),
      "header-only.gguf": Buffer.from("GGUF\x03\x00\x00\x00", "latin1"),
      "version-99.gguf": Buffer.concat([header(99, 0, 0)]),
      "many-tensors.gguf": Buffer.concat([header(3, 2n ** 62n, 0)]),
      "truncated.gguf": soundGguf({ truncate: 200 }),
      "sound.gguf": soundGguf(),
    };
    for (const [name, data] of Object.entries(files)) writeFileSync(path.join(hostileDir, name), data);
    symlinkSync("/etc/passwd", path.join(hostileDir, "link.gguf"));
    mkdirSync(path.join(hostileDir, "dir.gguf"));
    SAMPLES.path!.push(...[...Object.keys(files), "link.gguf", "dir.gguf"].map((name) => path.join(hostileDir, name)));
  });
  after(async () => {
    agent.destroy();
    await t.close();
    rmSync(hostileDir, { recursive: true, force: true });
  });

  it(`answers ${RUNS} random requests (seed ${SEED}) without a 5xx, each error in the error shape`, async (test) => {
    const started = performance.now();
    const statuses = new Map<number, number>();
    let sent = 0;
    let unsendable = 0;
    await fc.assert(
      fc.asyncProperty(requestArb(t.key, ids), async (r) => {
        const reply = await send(t.url, r);
        if (reply === "unsendable") {
          unsendable++;
          return;
        }
        sent++;
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
        assert.ok(reply.status < 500, `${r.method} ${r.path.slice(0, 200)} (${r.route}) → ${reply.status} ${reply.body.slice(0, 500)}`);
        if (reply.status >= 400 && r.method !== "HEAD") assertErrorShape(r, reply);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
    );
    const seconds = (performance.now() - started) / 1000;
    test.diagnostic(`${sent} requests sent (${unsendable} refused by the client) in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    assert.ok(sent > RUNS * 0.8, "most generated requests reached the server");
    assert.ok([...statuses.keys()].some((s) => s < 300), "some requests succeeded (the generator reaches real work)");
  });

  it("is still healthy and serving afterwards", async () => {
    assert.equal((await t.call("GET", "/healthz", undefined, null)).status, 200);
    const embedded = await t.call("POST", "/v1/embeddings", { model: "minilm", input: "still here" });
    assert.equal(embedded.status, 200, JSON.stringify(embedded.json));
    const chat = await t.call("POST", "/v1/chat/completions", { model: "tiny", messages: [{ role: "user", content: "Once" }], max_tokens: 2 });
    assert.equal(chat.status, 200, JSON.stringify(chat.json));
  });
});
