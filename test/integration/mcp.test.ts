/**
 * The MCP server at /mcp, through the official SDK's client over Streamable HTTP, against a
 * real server with real models: tools listed, a corpus searched and asked (cited, grounded,
 * English and Malay), passages and pages read, resources listed and read; and what must be
 * refused: no key, a key without `rag.read` (or `inference` for ask), another workspace's
 * corpus, malformed JSON-RPC; every call rate-limited and audited with its arguments hashed.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const REPORT_PDF = path.resolve(import.meta.dirname, "..", "fixtures", "documents", "report.pdf");
const DOCS = ["banjir-kelantan-2022.md", "floods-pahang-2023-briefing.md", "employee-leave-policy.md", "notis-gangguan-bekalan-air-klang.html", "rice-price-policy-note.md"];

async function connect(url: string, key: string | null): Promise<Client> {
  const client = new Client({ name: "pustaka-test", version: "1.0.0" });
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

describe("MCP over Streamable HTTP (/mcp)", () => {
  let t: TestServer;
  let corpusId: string;
  let client: Client;
  let pdfId: string;

  before(async () => {
    t = await startTestServer({
      bindings: { "svc-merlion-13b": testModel("gemma3-270m"), e5: testModel("multilingual-e5-small") },
      config: { rateLimits: { tiers: { two: { requestsPerMinute: 2, tokensPerMinute: 0 } } } },
    });
    const created = await t.call("POST", "/v1/rag/corpora", { name: "Laporan negeri", embedding_model: "e5" });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    corpusId = created.json.id;
    const res = await upload(t, corpusId, [...DOCS.map(evalDoc), { name: "report.pdf", content: readFileSync(REPORT_PDF) }]);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    pdfId = res.json.documents.find((d: { filename: string }) => d.filename === "report.pdf").id;
    const ready = await waitForStatus(t, corpusId);
    assert.equal(ready.status, "ready", JSON.stringify(ready));
    client = await connect(t.url, t.key);
  });
  after(async () => {
    await client?.close();
    await t?.close();
  });

  it("initializes as Pustaka and lists the tools with their input and output schemas", async () => {
    assert.equal(client.getServerVersion()?.name, "pustaka");
    assert.ok(client.getServerCapabilities()?.tools && client.getServerCapabilities()?.resources);
    assert.match(client.getInstructions() ?? "", /corpus/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ["ask_corpus", "list_corpora", "read_page", "read_passage", "search_corpus"]);
    const search = tools.find((tool) => tool.name === "search_corpus")!;
    assert.deepEqual(search.inputSchema.required?.sort(), ["corpus_id", "query"]);
    assert.ok(search.outputSchema, "structured output is declared");
    assert.equal(search.annotations?.readOnlyHint, true);
  });

  it("lists the workspace's corpora", async () => {
    const res = (await client.callTool({ name: "list_corpora", arguments: {} })) as ToolResult;
    assert.ok(!res.isError, JSON.stringify(res));
    const mine = res.structuredContent.corpora.find((c: { id: string }) => c.id === corpusId);
    assert.equal(mine.name, "Laporan negeri");
    assert.equal(mine.status, "ready");
    assert.equal(mine.indexed_documents, DOCS.length + 1);
    // The text content carries the same, for clients that read only text.
    assert.deepEqual(JSON.parse(res.content[0]!.text!), res.structuredContent);
  });

  it("searches in Malay and in English: the passages, best first, with document, pages, chunk id and score; the same as /search", async () => {
    const ms = (await client.callTool({ name: "search_corpus", arguments: { corpus_id: corpusId, query: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan?", top_k: 4 } })) as ToolResult;
    assert.ok(!ms.isError, JSON.stringify(ms));
    const passages = ms.structuredContent.passages;
    assert.equal(passages.length, 4);
    assert.equal(passages[0].filename, "banjir-kelantan-2022.md");
    for (const p of passages) {
      assert.match(p.chunk_id, /\S/);
      assert.ok(typeof p.score === "number" && p.text.length > 0);
    }
    for (let i = 1; i < passages.length; i++) assert.ok(passages[i - 1].score >= passages[i].score, "best first");
    const native = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan?", top_k: 4 });
    assert.deepEqual(
      passages.map((p: { chunk_id: string }) => p.chunk_id),
      native.json.data.map((c: { chunk_id: string }) => c.chunk_id),
    );

    const en = (await client.callTool({ name: "search_corpus", arguments: { corpus_id: corpusId, query: "For how long did ship handling stop at the main seaport during the Pahang floods?", mode: "vector" } })) as ToolResult;
    assert.equal(en.structuredContent.mode, "vector");
    assert.equal(en.structuredContent.passages[0].filename, "floods-pahang-2023-briefing.md");
  });

  it("asks: a grounded answer with numbered citations to the right document, and grounded=false for what the corpus does not hold", async () => {
    const res = (await client.callTool({ name: "ask_corpus", arguments: { corpus_id: corpusId, question: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?", top_k: 3, max_tokens: 96 } })) as ToolResult;
    assert.ok(!res.isError, JSON.stringify(res));
    const answer = res.structuredContent;
    assert.equal(answer.model, "svc-merlion-13b");
    assert.equal(answer.grounded, true, JSON.stringify(answer).slice(0, 600));
    assert.ok(answer.answer.length > 0);
    assert.equal(answer.citations[0].filename, "banjir-kelantan-2022.md");
    assert.deepEqual(
      answer.citations.map((c: { index: number }) => c.index),
      answer.citations.map((_: unknown, i: number) => i + 1),
    );
    // The same answer the native route gives (temperature is fixed, the engine deterministic at one thread).
    const native = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?", top_k: 3, max_tokens: 96 });
    assert.equal(native.json.grounded, true);
    assert.deepEqual(
      answer.citations.map((c: { chunk_id: string; cited: boolean }) => [c.chunk_id, c.cited]),
      native.json.citations.map((c: { chunk_id: string; cited: boolean }) => [c.chunk_id, c.cited]),
    );

    const none = (await client.callTool({ name: "ask_corpus", arguments: { corpus_id: corpusId, question: "Who won the 1998 FIFA World Cup final in football?" } })) as ToolResult;
    assert.ok(!none.isError, JSON.stringify(none));
    assert.equal(none.structuredContent.grounded, false, JSON.stringify(none.structuredContent).slice(0, 600));
    assert.match(none.structuredContent.answer, /does not contain|tidak/i);
    assert.ok(none.structuredContent.citations.every((c: { cited: boolean }) => !c.cited), "nothing is cited for an answer the corpus does not hold");
  });

  it("reads a passage with its neighbours, and a PDF page with the passages on it", async () => {
    const found = (await client.callTool({ name: "search_corpus", arguments: { corpus_id: corpusId, query: "Paras Sungai Kelantan di stesen Tambatan Diraja", top_k: 1 } })) as ToolResult;
    const hit = found.structuredContent.passages[0];
    const passage = (await client.callTool({ name: "read_passage", arguments: { corpus_id: corpusId, chunk_id: hit.chunk_id } })) as ToolResult;
    assert.ok(!passage.isError, JSON.stringify(passage));
    assert.equal(passage.structuredContent.text, hit.text);
    assert.ok(passage.structuredContent.before !== null || passage.structuredContent.after !== null, "a passage of a long document has a neighbour");

    const doc = await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${pdfId}`);
    assert.ok(doc.json.page_count >= 2, "the fixture has several pages");
    const page = (await client.callTool({ name: "read_page", arguments: { corpus_id: corpusId, document_id: pdfId, page: 2 } })) as ToolResult;
    assert.ok(!page.isError, JSON.stringify(page));
    assert.equal(page.structuredContent.page, 2);
    assert.equal(page.structuredContent.previous_page, 1);
    assert.ok(page.structuredContent.text.length > 0);
    assert.ok(page.structuredContent.passages.length > 0);
    // Every passage it names lies on page 2.
    for (const chunkId of page.structuredContent.passages) {
      const p = (await client.callTool({ name: "read_passage", arguments: { corpus_id: corpusId, chunk_id: chunkId } })) as ToolResult;
      assert.ok(p.structuredContent.page_start <= 2 && (p.structuredContent.page_end ?? p.structuredContent.page_start) >= 2);
    }
    const beyond = (await client.callTool({ name: "read_page", arguments: { corpus_id: corpusId, document_id: pdfId, page: 999 } })) as ToolResult;
    assert.equal(beyond.isError, true);
    assert.match(beyond.content[0]!.text!, /has pages 1 to \d+/);
    const notPaged = (await client.callTool({ name: "read_page", arguments: { corpus_id: corpusId, document_id: hit.document_id, page: 1 } })) as ToolResult;
    assert.equal(notPaged.isError, true);
    assert.match(notPaged.content[0]!.text!, /has no pages/);
  });

  it("lists corpora and documents as resources and reads them; a document reads as its indexed text with pages marked", async () => {
    const { resources } = await client.listResources();
    const corpusUri = `pustaka://corpora/${corpusId}`;
    assert.ok(resources.some((r) => r.uri === corpusUri));
    const documents = resources.filter((r) => r.uri.startsWith(`${corpusUri}/documents/`));
    assert.equal(documents.length, DOCS.length + 1);
    const corpus = await client.readResource({ uri: corpusUri });
    const body = JSON.parse((corpus.contents[0] as { text: string }).text);
    assert.equal(body.documents.length, DOCS.length + 1);

    const kelantan = documents.find((r) => r.name === "banjir-kelantan-2022.md")!;
    const read = await client.readResource({ uri: kelantan.uri });
    const text = (read.contents[0] as { text: string }).text;
    assert.equal(read.contents[0]!.mimeType, "text/markdown");
    // The original's words, once each (passages overlap; the text is rebuilt without repeats).
    const original = readFileSync(path.resolve(import.meta.dirname, "..", "fixtures", "eval", "docs", "banjir-kelantan-2022.md"), "utf8");
    const sentence = "Kelewatan ini disebabkan oleh kegagalan sambungan data di dua stesen telemetri sungai.";
    assert.ok(original.includes(sentence));
    assert.equal(text.split(sentence).length - 1, 1);

    const pdf = await client.readResource({ uri: `${corpusUri}/documents/${pdfId}` });
    const pdfText = (pdf.contents[0] as { text: string }).text;
    assert.match(pdfText, /<!-- page 1 -->[\s\S]*<!-- page 2 -->/);

    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate).sort(), ["pustaka://corpora/{corpus_id}", "pustaka://corpora/{corpus_id}/documents/{document_id}"]);
    const completion = await client.complete({ ref: { type: "ref/resource", uri: "pustaka://corpora/{corpus_id}" }, argument: { name: "corpus_id", value: corpusId.slice(0, 6) } });
    assert.ok(completion.completion.values.includes(corpusId));
  });

  it("refuses a request without a key (401 naming the protected resource metadata), which points at Pustaka's authorization server", async () => {
    const res = await fetch(`${t.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    assert.equal(res.status, 401);
    const challenge = res.headers.get("www-authenticate") ?? "";
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    assert.ok(metadataUrl, challenge);
    const body = (await res.json()) as any;
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.error.data.code, "missing_api_key");
    const metadata = (await (await fetch(metadataUrl)).json()) as any;
    assert.equal(metadata.resource, `${t.url}/mcp`);
    assert.deepEqual(metadata.authorization_servers, [t.url]);
    const as = (await (await fetch(`${metadata.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json()) as any;
    assert.equal(as.issuer, t.url);
    assert.ok(as.token_endpoint);
    await assert.rejects(connect(t.url, null));
  });

  it("accepts a service account's OAuth access token as the bearer token", async () => {
    const created = await t.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "mcp-agent", scopes: ["rag.read"] });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const token = await fetch(`${t.url}/v1/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: created.json.client_id, client_secret: created.json.client_secret, resource: `${t.url}/mcp` }),
    });
    assert.equal(token.status, 200);
    const { access_token } = (await token.json()) as { access_token: string };
    const agent = await connect(t.url, access_token);
    const res = (await agent.callTool({ name: "list_corpora", arguments: {} })) as ToolResult;
    assert.ok(res.structuredContent.corpora.some((c: { id: string }) => c.id === corpusId));
    // rag.read only: asking runs the chat model, which takes `inference`.
    const ask = (await agent.callTool({ name: "ask_corpus", arguments: { corpus_id: corpusId, question: "How many annual leave days?" } })) as ToolResult;
    assert.equal(ask.isError, true);
    assert.match(ask.content[0]!.text!, /lacks the 'inference' scope/);
    await agent.close();
  });

  it("refuses a key without rag.read with 403 insufficient_scope, and hides another workspace's corpus", async () => {
    const weak = await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "inference only", scopes: ["inference"] });
    assert.equal(weak.status, 201, JSON.stringify(weak.json));
    const res = await fetch(`${t.url}/mcp`, { method: "POST", headers: { authorization: `Bearer ${weak.json.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }) });
    assert.equal(res.status, 403);
    assert.match(res.headers.get("www-authenticate") ?? "", /error="insufficient_scope", scope="rag.read"/);

    const ws = await t.call("POST", "/v1/admin/workspaces", { name: "Other team" });
    assert.equal(ws.status, 201, JSON.stringify(ws.json));
    const otherKey = await t.call("POST", `/v1/admin/workspaces/${ws.json.id}/api_keys`, { name: "theirs", scopes: ["rag.read", "inference"] });
    assert.equal(otherKey.status, 201, JSON.stringify(otherKey.json));
    const other = await connect(t.url, otherKey.json.secret);
    const list = (await other.callTool({ name: "list_corpora", arguments: {} })) as ToolResult;
    assert.deepEqual(list.structuredContent.corpora, []);
    const search = (await other.callTool({ name: "search_corpus", arguments: { corpus_id: corpusId, query: "banjir" } })) as ToolResult;
    assert.equal(search.isError, true);
    assert.match(search.content[0]!.text!, /No corpus|not found/i);
    await assert.rejects(other.readResource({ uri: `pustaka://corpora/${corpusId}` }));
    const { resources } = await other.listResources();
    assert.equal(resources.length, 0);
    await other.close();
  });

  it("answers malformed JSON-RPC with JSON-RPC errors, never a 500", async () => {
    const post = (body: string) => fetch(`${t.url}/mcp`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body });
    const broken = await post("{not json");
    assert.equal(broken.status, 400);
    assert.equal(((await broken.json()) as any).error.code, -32700);
    for (const body of ['{"hello": "world"}', "[]", '{"jsonrpc": "2.0", "id": 1}', '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', "42"]) {
      const res = await post(body);
      assert.ok(res.status >= 400 && res.status < 500, `${body}: ${res.status}`);
      const json = (await res.json()) as any;
      assert.equal(json.jsonrpc, "2.0", body);
      assert.ok(json.error.code < 0, body);
    }
    // A well-formed call to a tool that does not exist, or with bad arguments, is an MCP error, not a crash.
    const unknown = await client.callTool({ name: "drop_tables", arguments: {} }).then(
      (r) => r as ToolResult,
      (e: Error) => e,
    );
    assert.ok(unknown instanceof Error ? /drop_tables|not found/i.test(unknown.message) : unknown.isError === true);
    const bad = await client.callTool({ name: "search_corpus", arguments: { corpus_id: corpusId, query: "", top_k: 500 } }).then(
      (r) => r as ToolResult,
      (e: Error) => e,
    );
    assert.ok(bad instanceof Error ? /top_k|query|invalid/i.test(bad.message) : bad.isError === true);
    const get = await fetch(`${t.url}/mcp`, { headers: { authorization: `Bearer ${t.key}`, accept: "text/event-stream" } });
    assert.equal(get.status, 405);
  });

  it("rate-limits and audits every MCP request; the audit holds the arguments' hash, never the question", async () => {
    const question = "Mengapakah amaran awal melalui SMS di Pasir Mas sampai lewat?";
    const res = await fetch(`${t.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "search_corpus", arguments: { corpus_id: corpusId, query: question } } }),
    });
    assert.equal(res.status, 200);
    const rpc = (await res.json()) as any;
    assert.equal(rpc.id, 7);
    assert.ok(rpc.result.structuredContent.passages.length > 0);
    // Entries are written in batches: look until it is there.
    let call: any;
    for (let i = 0; i < 50 && !call; i++) {
      const listed = (await t.call("GET", "/v1/audit/events?type=mcp.request&order=desc&limit=20")).json;
      call = listed.data.find((e: any) => e.request_id === res.headers.get("x-request-id"));
      if (!call) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(call, "an mcp.request entry for the call");
    assert.equal(call.data.method, "tools/call");
    assert.equal(call.data.tool, "search_corpus");
    assert.equal(call.data.corpus_id, corpusId);
    // A key limited to two requests a minute: the third MCP message is refused, in JSON-RPC's shape, with the limit's headers.
    const limited = await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "two a minute", scopes: ["rag.read"] });
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/ws_default/api_keys/${limited.json.id}`, { rate_limit_tier: "two" })).status, 200);
    const send = () => fetch(`${t.url}/mcp`, { method: "POST", headers: { authorization: `Bearer ${limited.json.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    const first = await send();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("x-ratelimit-limit"), "2");
    assert.equal(first.headers.get("x-ratelimit-remaining"), "1");
    assert.equal((await send()).status, 200);
    const third = await send();
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get("retry-after")) > 0);
    const refused = (await third.json()) as any;
    assert.equal(refused.jsonrpc, "2.0");
    assert.equal(refused.error.data.code, "rate_limit_exceeded");
    const exported = await (await fetch(`${t.url}/v1/audit/export`, { headers: { authorization: `Bearer ${t.key}` } })).text();
    assert.ok(!exported.includes("Pasir Mas"), "the question is not in the audit trail");
    assert.match(call.data.arguments_sha256, /^[0-9a-f]{64}$/);
  });
});
