/**
 * Pustaka's corpora as an MCP server (Model Context Protocol): tools to list corpora,
 * search one, ask one for a cited answer and read a passage or a page, and resources for
 * corpora and documents. Built per request for one caller (`McpCall`): every tool acts as
 * that caller, through the same services the HTTP API uses, so scopes, the workspace
 * boundary, rate limits (the request's admission) and encryption are the API's own.
 * Free of HTTP: the route (`http/routes/mcp-routes.ts`) connects it to a transport.
 */
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Admission } from "../admin/rate-limit-service.js";
import type { Principal } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import type { QueryService } from "../rag/answer/query-service.js";
import type { SourceService } from "../rag/answer/source-service.js";
import type { CorpusService, CorpusView } from "../rag/corpus-service.js";
import type { DocumentService } from "../rag/document-service.js";
import type { DocumentRecord } from "../store/document-store.js";

export interface CorpusMcpDeps {
  corpora: CorpusService;
  documents: DocumentService;
  queries: QueryService;
  sources: SourceService;
  version: string;
}

/** Who calls, and what the request it came in carries. */
export interface McpCall {
  principal: Principal;
  /** The request's admission: model work reserves and settles its tokens here. */
  admission: Admission | undefined;
  signal: AbortSignal;
  /** Facts for the request's audit entry (never the query or question itself). */
  facts: Record<string, unknown>;
}

/** Bounds on what one call returns, so an agent's context is not flooded. */
export const MCP_LIMITS = {
  /** Resources listed (corpora plus documents). */
  listedResources: 500,
  /** Characters of a document resource. */
  documentChars: 400_000,
  /** Documents described in a corpus resource. */
  corpusDocuments: 200,
  /** An answer's default length: agents' clients time out (60 s is common) and want the gist with its sources. */
  answerTokens: 512,
};

const CorpusId = z.string().min(1).max(128).describe("The corpus's id (list_corpora gives them)");
const SearchMode = z.enum(["hybrid", "vector", "keyword"]);

const PassageShape = {
  chunk_id: z.string(),
  document_id: z.string(),
  filename: z.string(),
  page_start: z.number().int().nullable(),
  page_end: z.number().int().nullable(),
  heading_path: z.array(z.string()),
  score: z.number(),
  text: z.string(),
};

const result = (structured: Record<string, unknown>): CallToolResult => ({
  // The spec asks for the structured result also as serialized JSON text, for clients that read only text.
  content: [{ type: "text", text: JSON.stringify(structured, null, 2) }],
  structuredContent: structured,
});

function corpusSummary(c: CorpusView) {
  return {
    id: c.id,
    name: c.name,
    status: c.status,
    documents: c.counts.indexed + c.counts.queued + c.counts.processing + c.counts.failed,
    indexed_documents: c.counts.indexed,
    passages: c.chunkCount,
    embedding_model: c.embeddingModel,
    metadata: c.metadata,
  };
}

function documentSummary(d: DocumentRecord) {
  return { id: d.id, filename: d.filename, format: d.format, status: d.status, pages: d.pageCount, passages: d.chunkCount, bytes: d.bytes, sha256: d.sha256, metadata: d.metadata };
}

async function* allCorpora(corpora: CorpusService, principal: Principal): AsyncGenerator<CorpusView> {
  let after: string | undefined;
  for (;;) {
    const page = await corpora.list(principal, { limit: 100, order: "asc", after });
    yield* page.data;
    if (!page.hasMore || page.data.length === 0) return;
    after = page.data.at(-1)!.id;
  }
}

async function* allDocuments(documents: DocumentService, principal: Principal, corpusId: string): AsyncGenerator<DocumentRecord> {
  let after: string | undefined;
  for (;;) {
    const page = await documents.list(principal, corpusId, { limit: 100, order: "asc", after });
    yield* page.data;
    if (!page.hasMore || page.data.length === 0) return;
    after = page.data.at(-1)!.id;
  }
}

/** The scope a tool needs beyond the `rag.read` every MCP request has (the route checks that). */
function requireScope(call: McpCall, scope: "inference"): void {
  if (!call.principal.scopes.has(scope)) throw new ServiceError("permission", `this API key lacks the '${scope}' scope, which ask_corpus needs (it runs the chat model)`, { code: "insufficient_scope" });
}

// The tools' descriptions and schemas, built once (a server is built per message).
const LIST_CORPORA_TOOL = {
  title: "List corpora",
  description: "The corpora (document collections) this key's workspace can read, with their status and size.",
  inputSchema: z.object({}),
  outputSchema: z.object({ corpora: z.array(z.object({ id: z.string(), name: z.string(), status: z.string(), documents: z.number(), indexed_documents: z.number(), passages: z.number(), embedding_model: z.string(), metadata: z.record(z.string(), z.string()) })) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const SEARCH_CORPUS_TOOL = {
  title: "Search a corpus",
  description: "The passages of a corpus that best match a query, best first, each with its document, pages, chunk id and score. No answer is written.",
  inputSchema: z.object({
    corpus_id: CorpusId,
    query: z.string().trim().min(1).max(8000).describe("What to look for, in English or Malay"),
    mode: SearchMode.optional().describe("hybrid (default: meaning and keywords), vector (meaning) or keyword"),
    top_k: z.number().int().min(1).max(50).default(8).describe("How many passages (1-50)"),
  }),
  outputSchema: z.object({ corpus_id: z.string(), mode: SearchMode, relevant: z.boolean(), passages: z.array(z.object(PassageShape)) }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const ASK_CORPUS_TOOL = {
  title: "Ask a corpus",
  description:
    "An answer written by the local chat model from the corpus only, with numbered citations ([1], [2]) to the passages it used. " +
    "grounded is false when the corpus holds nothing relevant: then the answer says so and nothing is made up.",
  inputSchema: z.object({
    corpus_id: CorpusId,
    question: z.string().trim().min(1).max(8000).describe("The question, in English or Malay"),
    top_k: z.number().int().min(1).max(20).default(5).describe("How many passages the answer may draw on"),
    mode: SearchMode.optional(),
    max_tokens: z.number().int().min(16).max(4096).default(MCP_LIMITS.answerTokens).describe("The longest answer, in tokens"),
  }),
  outputSchema: z.object({
    corpus_id: z.string(),
    model: z.string(),
    answer: z.string(),
    grounded: z.boolean(),
    citations: z.array(z.object({ index: z.number().int(), cited: z.boolean(), ...PassageShape })),
    finish_reason: z.string(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const READ_PASSAGE_TOOL = {
  title: "Read a passage",
  description: "A passage (by the chunk id a search or citation gave) with the text just before and after it in its document.",
  inputSchema: z.object({ corpus_id: CorpusId, chunk_id: z.string().min(1).max(128) }),
  outputSchema: z.object({ chunk_id: z.string(), document_id: z.string(), filename: z.string(), page_start: z.number().int().nullable(), page_end: z.number().int().nullable(), heading_path: z.array(z.string()), text: z.string(), before: z.string().nullable(), after: z.string().nullable() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const READ_PAGE_TOOL = {
  title: "Read a page",
  description: "The text of one page of a paged document (PDF), with the passages on it and the pages before and after.",
  inputSchema: z.object({ corpus_id: CorpusId, document_id: z.string().min(1).max(128), page: z.number().int().min(1).max(100_000) }),
  outputSchema: z.object({ document_id: z.string(), filename: z.string(), page: z.number().int(), page_count: z.number().int().nullable(), text: z.string(), passages: z.array(z.string()), previous_page: z.number().int().nullable(), next_page: z.number().int().nullable() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export function corpusMcpServer(deps: CorpusMcpDeps, call: McpCall): McpServer {
  const { principal, facts } = call;
  const server = new McpServer(
    { name: "pustaka", title: "Pustaka corpora", version: deps.version },
    {
      capabilities: { tools: {}, resources: {}, completions: {} },
      instructions:
        "Pustaka holds the user's document collections (corpora) offline. Use list_corpora to find one, search_corpus for the passages on a topic, " +
        "ask_corpus for an answer written only from the corpus with numbered citations (grounded=false means the corpus does not hold the answer), " +
        "and read_passage or read_page to read around a citation. Documents may be in English or Malay; ask in either.",
    },
  );

  server.registerTool(
    "list_corpora",
    LIST_CORPORA_TOOL,
    async () => {
      facts.tool = "list_corpora";
      const corpora = [];
      for await (const c of allCorpora(deps.corpora, principal)) corpora.push(corpusSummary(c));
      return result({ corpora });
    },
  );

  server.registerTool(
    "search_corpus",
    SEARCH_CORPUS_TOOL,
    async ({ corpus_id, query, mode, top_k }) => {
      Object.assign(facts, { tool: "search_corpus", corpus_id });
      const found = await deps.queries.retrieve(principal, corpus_id, { question: query, topK: top_k, search: mode }, call.signal);
      await call.admission?.settle(found.queryTokens);
      Object.assign(facts, { results: found.citations.map((c) => ({ document_id: c.documentId, chunk_id: c.chunkId })), prompt_tokens: found.queryTokens });
      return result({
        corpus_id,
        mode: found.search,
        relevant: found.relevant,
        passages: found.citations.map((c) => ({ chunk_id: c.chunkId, document_id: c.documentId, filename: c.filename, page_start: c.pageStart, page_end: c.pageEnd, heading_path: c.headingPath, score: c.score, text: c.text })),
      });
    },
  );

  server.registerTool(
    "ask_corpus",
    ASK_CORPUS_TOOL,
    async ({ corpus_id, question, top_k, mode, max_tokens }) => {
      Object.assign(facts, { tool: "ask_corpus", corpus_id });
      requireScope(call, "inference");
      const started = await deps.queries.start(principal, corpus_id, { question, topK: top_k, search: mode, maxTokens: max_tokens }, call.signal);
      facts.model = started.model;
      const reserved = (started.run?.promptTokens ?? 0) + started.queryTokens + (started.run ? max_tokens : 0);
      try {
        await call.admission?.reserve(reserved);
      } catch (error) {
        await started.run?.events.return();
        throw error;
      }
      let completionTokens = 0;
      try {
        await started.run?.ready?.();
        const finished = await deps.queries.finish(started);
        completionTokens = finished.completionTokens;
        const attributed = deps.queries.attribute(started, finished.answer);
        Object.assign(facts, {
          citations: attributed.citations.map((c) => ({ document_id: c.documentId, chunk_id: c.chunkId, cited: c.cited })),
          grounded: started.run !== null,
          prompt_tokens: (started.run?.promptTokens ?? 0) + started.queryTokens,
          completion_tokens: completionTokens,
        });
        return result({
          corpus_id,
          model: started.model,
          answer: finished.answer,
          grounded: started.run !== null,
          citations: attributed.citations.map((c) => ({ index: c.index, cited: c.cited, chunk_id: c.chunkId, document_id: c.documentId, filename: c.filename, page_start: c.pageStart, page_end: c.pageEnd, heading_path: c.headingPath, score: c.score, text: c.text })),
          finish_reason: finished.finishReason,
        });
      } finally {
        await call.admission?.settle((started.run?.promptTokens ?? 0) + started.queryTokens + completionTokens);
      }
    },
  );

  server.registerTool(
    "read_passage",
    READ_PASSAGE_TOOL,
    async ({ corpus_id, chunk_id }) => {
      Object.assign(facts, { tool: "read_passage", corpus_id, chunk_id });
      const p = await deps.sources.passage(principal, corpus_id, chunk_id);
      return result({ chunk_id: p.chunk.id, document_id: p.document.id, filename: p.document.filename, page_start: p.chunk.pageStart, page_end: p.chunk.pageEnd, heading_path: p.headingPath, text: p.text, before: p.before, after: p.after });
    },
  );

  server.registerTool(
    "read_page",
    READ_PAGE_TOOL,
    async ({ corpus_id, document_id, page }) => {
      Object.assign(facts, { tool: "read_page", corpus_id, document_id, page });
      const p = await deps.sources.page(principal, corpus_id, document_id, page);
      return result({ document_id: p.document.id, filename: p.document.filename, page: p.page, page_count: p.document.pageCount, text: p.text, passages: p.passages, previous_page: p.previousPage, next_page: p.nextPage });
    },
  );

  const completeCorpusId = async (value: string) => {
    const ids: string[] = [];
    for await (const c of allCorpora(deps.corpora, principal)) if (c.id.startsWith(value) || c.name.toLowerCase().startsWith(value.toLowerCase())) ids.push(c.id);
    return ids.slice(0, 100);
  };

  server.registerResource(
    "corpus",
    new ResourceTemplate("pustaka://corpora/{corpus_id}", {
      list: async () => {
        facts.method_detail = "resources/list";
        const resources = [];
        for await (const c of allCorpora(deps.corpora, principal)) {
          if (resources.length >= MCP_LIMITS.listedResources) break;
          resources.push({ uri: `pustaka://corpora/${c.id}`, name: c.name, title: c.name, description: `Corpus: ${c.status}, ${c.counts.indexed} documents indexed`, mimeType: "application/json" });
          for await (const d of allDocuments(deps.documents, principal, c.id)) {
            if (resources.length >= MCP_LIMITS.listedResources) break;
            if (d.status !== "indexed") continue;
            resources.push({ uri: `pustaka://corpora/${c.id}/documents/${d.id}`, name: d.filename, title: `${d.filename} (${c.name})`, mimeType: "text/markdown", size: d.bytes });
          }
        }
        return { resources };
      },
      complete: { corpus_id: completeCorpusId },
    }),
    { title: "A corpus", description: "A corpus's settings, status and documents", mimeType: "application/json" },
    async (uri, variables): Promise<ReadResourceResult> => {
      const corpusId = String(variables.corpus_id);
      Object.assign(facts, { resource: "corpus", corpus_id: corpusId });
      const corpus = await deps.corpora.get(principal, corpusId);
      const documents = [];
      for await (const d of allDocuments(deps.documents, principal, corpusId)) {
        if (documents.length >= MCP_LIMITS.corpusDocuments) break;
        documents.push({ ...documentSummary(d), uri: `pustaka://corpora/${corpusId}/documents/${d.id}` });
      }
      const body = { ...corpusSummary(corpus), documents, documents_listed: documents.length };
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(body, null, 2) }] };
    },
  );

  server.registerResource(
    "document",
    new ResourceTemplate("pustaka://corpora/{corpus_id}/documents/{document_id}", { list: undefined, complete: { corpus_id: completeCorpusId } }),
    { title: "A document", description: "A document's text as it was indexed (Markdown), with its pages marked", mimeType: "text/markdown" },
    async (uri, variables): Promise<ReadResourceResult> => {
      const corpusId = String(variables.corpus_id);
      const documentId = String(variables.document_id);
      Object.assign(facts, { resource: "document", corpus_id: corpusId, document_id: documentId });
      const whole = await deps.sources.documentText(principal, corpusId, documentId, MCP_LIMITS.documentChars);
      let text = whole.text;
      // Page markers where pages begin, so a reader can cite pages (from the end, so offsets stay right).
      for (const { page, start } of whole.pageStarts.filter((p) => p.start < text.length).reverse()) text = `${text.slice(0, start)}\n\n<!-- page ${page} -->\n${text.slice(start)}`;
      const head = `# ${whole.document.filename}\n\n`;
      const tail = whole.truncated ? `\n\n<!-- cut at ${MCP_LIMITS.documentChars} characters: read further with the read_page or read_passage tools -->\n` : "\n";
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: `${head}${text.trim()}${tail}` }] };
    },
  );

  return server;
}
